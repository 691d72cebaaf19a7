"""python3 -m determined.launch.wrap_rank RANK [--] CMD...

Runs CMD and prefixes each line it prints (stdout and stderr, each to the
same stream) with "[rank=RANK] ", so that the lines of workers started by one
per-node process keep their ranks: the agent files a line carrying that
prefix under that rank (docs/environment.md). A carriage return ends a line
too (progress bars). RANK is an integer, or a comma-separated list of
environment variables tried in order. Exits with CMD's exit code.
"""

import os
import re
import signal
import subprocess
import sys
import threading
from typing import BinaryIO, Iterator, List, Optional

_LINE_END = re.compile(rb"[\r\n]")
_MAX_LINE = 64 * 1024


def lines(stream: BinaryIO) -> Iterator[bytes]:
    """Lines of `stream` without their ends, split at \\n or \\r and every _MAX_LINE bytes."""
    pending = b""
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        pending += chunk
        while True:
            m = _LINE_END.search(pending)
            if m is None:
                break
            yield pending[:m.start()]
            pending = pending[m.end():]
        while len(pending) >= _MAX_LINE:
            yield pending[:_MAX_LINE]
            pending = pending[_MAX_LINE:]
    if pending:
        yield pending


def forward(src: BinaryIO, dst_fd: int, prefix: bytes) -> None:
    for line in lines(src):
        os.write(dst_fd, prefix + line + b"\n")


def parse_rank(spec: str, env=os.environ) -> int:
    if spec.isdigit():
        return int(spec)
    for name in spec.split(","):
        value = env.get(name.strip(), "")
        if value.isdigit():
            return int(value)
    raise SystemExit(f"wrap_rank: RANK {spec!r} is neither an integer nor a set variable holding one")


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--no-redirect-stdio":
        args.pop(0)  # Determined's flag: output always goes to this process's streams here
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if args else 2
    rank = parse_rank(args.pop(0))
    if args and args[0] == "--":
        args.pop(0)
    if not args:
        print("wrap_rank: no command given", file=sys.stderr)
        return 2
    prefix = f"[rank={rank}] ".encode()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # SIGTERM (preemption) reaches the child too; pass on the ones sent to us alone.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _f: proc.send_signal(s))
    threads = [threading.Thread(target=forward, args=(proc.stdout, sys.stdout.fileno(), prefix)),
               threading.Thread(target=forward, args=(proc.stderr, sys.stderr.fileno(), prefix))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    code = proc.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
