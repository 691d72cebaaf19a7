"""Launchers: `python3 -m determined.launch.torch_distributed` and
`python3 -m determined.launch.wrap_rank`."""
