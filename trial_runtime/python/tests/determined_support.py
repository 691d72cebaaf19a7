"""What the tests of the `determined` package share: running code in a fresh
interpreter, a fake master served from a thread of the test's process (trial
API and rendezvous store), and a test case with one fake master each."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PYTHONPATH = os.pathsep.join(p for p in sys.path if os.path.exists(os.path.join(p, "determined", "__init__.py")))


def _no_sleep_pythonpath():
    """PYTHONPATH with a sitecustomize that makes time.sleep return at once.

    The tutorial scripts sleep 0.1 s a step to look like training; these unit
    tests check what the scripts call, not how long they take, so their
    processes (and the ones they start) skip the sleeps. The e2e tests run the
    scripts on a real cluster as they are."""
    folder = tempfile.mkdtemp(prefix="ring-no-sleep-")
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write("import time\n_sleep = time.sleep\ntime.sleep = lambda seconds: _sleep(0)\n")
    return os.pathsep.join([PYTHONPATH, folder])


NO_SLEEP_PYTHONPATH = _no_sleep_pythonpath()


def run(code, env, *args, timeout=60):
    """Runs `code` in a fresh interpreter with exactly `env` (plus PYTHONPATH)."""
    env = dict(env, PYTHONPATH=PYTHONPATH, PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


class FakeMaster:
    """One allocation's trial API and rendezvous store, as far as the package uses them."""

    def __init__(self):
        self.lock = threading.Condition()
        self.requests = []  # (method, path, body)
        self.checkpoints = {}
        self.store = {}
        self.issued = 0
        self.preempt = False
        master = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def body(self):
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def do_GET(self):
                self.answer(*master.handle("GET", self.path, b""))

            def do_POST(self):
                self.answer(*master.handle("POST", self.path, self.body()))

            def do_PUT(self):
                self.answer(*master.handle("PUT", self.path, self.body()))

            def answer(self, status, body):
                raw = isinstance(body, bytes)
                data = body if raw else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if raw else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a trial process that exited mid long poll

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def posted(self, path):
        with self.lock:
            return [json.loads(b) for m, p, b in self.requests if m == "POST" and p.endswith(path)]

    def handle(self, method, path, body):
        url = urlparse(path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path[len("/api/v1/allocations/a-1"):]
        with self.lock:
            self.requests.append((method, path, body))
            if path == "/rendezvous" and method == "PUT":
                self.store[query["key"]] = body
                self.lock.notify_all()
                return 200, {}
            if path == "/rendezvous" and method == "GET":
                deadline = time.monotonic() + int(query.get("timeout_ms", "0")) / 1000
                while query["key"] not in self.store and time.monotonic() < deadline:
                    self.lock.wait(deadline - time.monotonic())
                if query["key"] in self.store:
                    return 200, self.store[query["key"]]
                return 404, {"error": {"code": "not_found", "message": f"rendezvous key {query['key']} is not set"}}
            if method == "GET" and path == "/searcher/operation":
                if "after" in query:
                    return 200, {"operation": None, "done": True}
                return 200, {"operation": {"length": 20}, "done": False}
            if method == "GET" and path == "/preemption":
                preempt = self.preempt
            if method == "POST" and path == "/checkpoints/prepare":
                self.issued += 1
                return 201, {"uuid": str(uuid.UUID(int=self.issued))}
            if method == "POST" and path == "/checkpoints":
                record = json.loads(body)
                self.checkpoints[record["uuid"]] = record
                return 200, {}
            if method == "GET" and path.startswith("/checkpoints/"):
                record = self.checkpoints.get(path[len("/checkpoints/"):])
                return (200, record) if record else (404, {"error": {"code": "not_found", "message": "no"}})
            if method == "POST" and path == "/searcher/invalid_hparams":
                message = json.loads(body)
                if set(message) - {"message"} or not isinstance(message.get("message", ""), str):
                    return 400, {"error": {"code": "invalid_argument", "message": "body must be {message}"}}
                return 200, {}
            if method == "POST" and path in ("/metrics", "/searcher/completed", "/preemption/ack"):
                return 200, {"accepted": True}
        if method == "GET" and path == "/preemption":
            if not preempt:
                time.sleep(0.5)  # a short long poll
            return 200, {"preempt": preempt}
        return 404, {"error": {"code": "not_found", "message": path}}


class ClusterTestCase(unittest.TestCase):
    """A fake master per test, checkpoint storage in a temporary folder."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.master = FakeMaster()
        self.addCleanup(self.master.stop)
        self.root = os.path.join(self.dir, "ck")

    def env(self, **extra):
        storage = {"type": "shared_fs", "host_path": self.dir, "storage_path": "ck"}
        env = {"RING_MASTER_URL": self.master.url, "RING_ALLOCATION_ID": "a-1", "RING_ALLOCATION_TOKEN": "tok",
               "RING_TRIAL_ID": "4", "RING_EXPERIMENT_ID": "2", "RING_HPARAMS": '{"increment_by": 2}',
               "RING_MAX_LENGTH_BATCHES": "20", "RING_SEARCHER_METRIC": "x",
               "RING_CHECKPOINT_STORAGE": json.dumps(storage), "RING_API_RETRY_SECONDS": "3",
               "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
               "RING_AGENT_ADDR": "127.0.0.1", "MASTER_ADDR": "127.0.0.1"}
        env.update(extra)
        return env

    def ranks(self, code, size, local_size, *args):
        """Runs `code` as `size` ranks in processes of their own; returns their results."""
        procs = []
        for rank in range(size):
            env = self.env(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(rank % local_size),
                           LOCAL_WORLD_SIZE=str(local_size), GROUP_RANK=str(rank // local_size),
                           GROUP_WORLD_SIZE=str(size // local_size), PYTHONPATH=PYTHONPATH)
            procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=60)
            out.append((p.returncode, stdout, stderr))
        return out
