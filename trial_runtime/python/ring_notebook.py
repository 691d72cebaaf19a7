"""A notebook task's process: Jupyter on this node, announced to the master.

`ring notebook start` runs `python3 -m ring_notebook` as the task's one
process (docs/interactive.md "Notebooks"). It picks a free port on the
agent's address, starts Debian's Jupyter Notebook under the task's path on
the master's proxy (/proxy/<task id>/) with a random token that only this
process, the Jupyter server and the master know (in the environment, never
on a command line), waits until the server answers, then announces the port
and the token to the master with the allocation's own token. The master's
proxy sends the token to Jupyter on the user's behalf, so the user signs in
to Ringmaster only. The announcement is repeated every 10 s, so a restarted
master learns it again. SIGTERM (the task's kill, an idle timeout) stops
Jupyter, and this process exits with Jupyter's exit code.

Arguments after the module name are passed to Jupyter.
"""

import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ANNOUNCE_EVERY_S = 10.0
START_TIMEOUT_S = 180.0


def log(message):
    print(f"[notebook] {message}", flush=True)


def free_port(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def url_host(host):
    return f"[{host}]" if ":" in host else host


def master_context():
    ca_file = os.environ.get("RING_CA_FILE")
    return ssl.create_default_context(cafile=ca_file) if ca_file else None


def announce(port, token):
    """POSTs {port, name, token} to the master; True once it answered 200."""
    master = os.environ["RING_MASTER_URL"].rstrip("/")
    allocation = os.environ["RING_ALLOCATION_ID"]
    body = json.dumps({"port": port, "name": "jupyter", "token": token}).encode()
    request = urllib.request.Request(
        f"{master}/api/v1/allocations/{allocation}/proxy",
        data=body,
        method="POST",
        headers={
            "Authorization": "Bearer " + os.environ["RING_ALLOCATION_TOKEN"],
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10, context=master_context()) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError) as e:
        log(f"cannot announce Jupyter to the master yet: {e}")
        return False


def answers(base_url, token):
    request = urllib.request.Request(base_url + "api/status", headers={"Authorization": "token " + token})
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def jupyter_command():
    for name in ("jupyter-notebook", "jupyter"):
        path = shutil.which(name)
        if path:
            return [path] if name == "jupyter-notebook" else [path, "notebook"]
    return None


def main(argv):
    task = os.environ.get("RING_TASK_ID")
    if not task or "RING_ALLOCATION_ID" not in os.environ:
        log("runs as a notebook task's process only (RING_TASK_ID is not set)")
        return 2
    command = jupyter_command()
    if command is None:
        log("Jupyter Notebook is not installed on this node (Debian: apt-get install jupyter-notebook)")
        return 127
    host = os.environ.get("RING_AGENT_ADDR") or "127.0.0.1"
    port = free_port(host)
    token = secrets.token_urlsafe(32)
    base_path = f"/proxy/{task}/"
    runtime = tempfile.mkdtemp(prefix="ring-notebook-")
    env = dict(os.environ)
    env["JUPYTER_TOKEN"] = token
    env["JUPYTER_RUNTIME_DIR"] = runtime
    home = os.environ.get("HOME", "")
    if not home or not os.access(home, os.W_OK):
        # An account without a home of its own (a system account): Jupyter's
        # and IPython's files go to the runtime folder instead.
        for name, sub in (("JUPYTER_DATA_DIR", "data"), ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")):
            env.setdefault(name, os.path.join(runtime, sub))
    command += [
        "--no-browser",
        f"--ip={host}",
        f"--port={port}",
        "--port-retries=0",
        f"--NotebookApp.base_url={base_path}",
        "--NotebookApp.allow_remote_access=True",
        f"--NotebookApp.notebook_dir={os.getcwd()}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    command += argv
    server = subprocess.Popen(command, env=env)

    def stop(signum, _frame):
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    base_url = f"http://{url_host(host)}:{port}{base_path}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while server.poll() is None and not answers(base_url, token):
        if time.monotonic() > deadline:
            log(f"Jupyter did not answer on port {port} within {START_TIMEOUT_S:.0f} s; stopping it")
            stop(signal.SIGTERM, None)
            break
        time.sleep(0.2)
    announced = False
    next_announce = 0.0
    while server.poll() is None:
        if time.monotonic() >= next_announce:
            ok = announce(port, token)
            if ok and not announced:
                log(f"Jupyter is up on port {port}; open it with: ring notebook open {task}")
            announced = announced or ok
            next_announce = time.monotonic() + (ANNOUNCE_EVERY_S if ok else 1.0)
        try:
            server.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
    shutil.rmtree(runtime, ignore_errors=True)
    code = server.returncode
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
