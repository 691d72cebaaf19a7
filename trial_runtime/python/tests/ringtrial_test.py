"""Tests of the ringtrial Python module: local mode, and cluster mode against
a fake master served from a thread of this process. That master can answer
only while the bindings release the GIL, so a blocking call that kept it would
hang until its HTTP timeout and fail these tests.

    PYTHONPATH=build/python /usr/bin/python3 trial_runtime/python/tests/ringtrial_test.py -v
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ringtrial


def run_script(code, *args, env=None):
    """Runs `code` in a fresh interpreter (signal handlers and stdout of its own)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=60, env=env)


class LocalModeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.checkpoints = os.path.join(self.dir.name, "checkpoints")

    def tearDown(self):
        self.dir.cleanup()

    def context(self, *args, env=None):
        argv = ["train.py", "--checkpoint-dir", self.checkpoints, *args]
        return ringtrial.Context.from_environment(argv, env or {})

    def test_identity_and_hyperparameters_from_flags(self):
        ctx = self.context("--hparam", "lr=0.5", "--hparam", "layers=3", "--hparam", "name=cnn",
                           "--hparam", "opt.momentum=0.9", "--batches", "40", "--seed", "7", "extra")
        self.assertTrue(ctx.is_local)
        self.assertEqual((ctx.rank, ctx.world_size, ctx.local_rank, ctx.local_world_size), (0, 1, 0, 1))
        self.assertTrue(ctx.is_chief)
        self.assertEqual((ctx.seed, ctx.max_length_batches, ctx.trial_id), (7, 40, 0))
        self.assertIsNone(ctx.latest_checkpoint)
        self.assertIn("extra", ctx.remaining_args)
        self.assertEqual(ctx.hparams, {"lr": 0.5, "layers": 3, "name": "cnn", "opt": {"momentum": 0.9}})
        self.assertEqual(ctx.hparam("opt"), {"momentum": 0.9})
        self.assertEqual(ctx.hparam("lr"), 0.5)
        layers = ctx.hparam("layers", 1.0)  # an int where a float is expected
        self.assertEqual(layers, 3.0)
        self.assertIsInstance(layers, float)
        self.assertEqual(ctx.hparam("missing", 1.5), 1.5)
        self.assertIsNone(ctx.hparam("missing", None))
        with self.assertRaisesRegex(ringtrial.HparamError, "missing"):
            ctx.hparam("missing")
        with self.assertRaisesRegex(ringtrial.HparamError, "lr"):
            ctx.hparam("lr", 1)  # 0.5 is not an integer
        with self.assertRaisesRegex(ringtrial.HparamError, "name"):
            ctx.hparam("name", 0.0)

    def test_hyperparameters_from_a_file_keep_their_json_types(self):
        path = os.path.join(self.dir.name, "hparams.json")
        with open(path, "w") as f:
            json.dump({"sizes": [1, 2.5, "x", None, True], "big": 2**63 + 1, "flag": False}, f)
        ctx = self.context("--hparams", path)
        self.assertEqual(ctx.hparams, {"sizes": [1, 2.5, "x", None, True], "big": 2**63 + 1, "flag": False})
        self.assertIs(ctx.hparam("flag", True), False)

    def test_errors_are_python_exceptions_with_the_runtime_message(self):
        self.assertTrue(issubclass(ringtrial.TrialError, RuntimeError))
        for name in ("HparamError", "ConfigError", "MetricsError", "AllocationEndedError",
                     "MasterUnreachableError", "RendezvousError", "CollectiveError", "CheckpointError"):
            self.assertTrue(issubclass(getattr(ringtrial, name), ringtrial.TrialError), name)
        with self.assertRaisesRegex(ringtrial.ConfigError, "RANK 3 is not within WORLD_SIZE 2"):
            ringtrial.Context.from_environment(["t"], {"RANK": "3", "WORLD_SIZE": "2"})
        ctx = self.context()
        with self.assertRaises(ringtrial.MetricsError):
            ctx.report_training_metrics(-1, {"loss": 1.0})
        with self.assertRaises(TypeError):
            ctx.report_training_metrics(1, {"loss": "high"})

    def test_one_searcher_operation_whose_reports_are_printed(self):
        result = run_script("""
            import ringtrial
            ctx = ringtrial.Context.from_environment()
            lengths = []
            for op in ctx.searcher.operations():
                lengths.append(op.length)
                ctx.report_training_metrics(op.length, {"loss": 0.25, "count": 3})
                ctx.report_validation_metrics(op.length, {"validation_loss": 0.125})
                op.report_completed(0.125)
            print("lengths", lengths, ctx.searcher.metric_name, ctx.flush(1.0), flush=True)
            """, "--batches", "30", "--checkpoint-dir", self.checkpoints, env=dict(os.environ))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("lengths [30] validation_loss True", result.stdout)
        self.assertIn("[ring.trial] training batches=30 count=3 loss=0.25", result.stdout)
        self.assertIn("[ring.trial] validation batches=30 validation_loss=0.125", result.stdout)
        self.assertIn("[ring.trial] searcher operation length=30 completed validation_loss=0.125", result.stdout)

    def test_an_operation_is_completed_once_before_the_next_is_asked_for(self):
        searcher = self.context("--batches", "5").searcher  # keeps its Context alive
        op = searcher.next_operation()
        self.assertEqual(op.length, 5)
        with self.assertRaisesRegex(ringtrial.TrialError, "before"):
            searcher.next_operation()
        with self.assertRaises(ringtrial.MetricsError):
            op.report_completed(float("nan"))
        op.report_completed(1.0)
        with self.assertRaisesRegex(ringtrial.TrialError, "already completed"):
            op.report_completed(1.0)
        self.assertIsNone(searcher.next_operation())

    def test_a_checkpoint_is_written_by_a_python_callable_and_verified_on_resume(self):
        ctx = self.context()
        self.assertIsNone(ctx.checkpoints.latest_verified())
        written = []

        def write(directory):
            written.append(directory)
            with open(os.path.join(directory, "state.txt"), "w") as f:
                f.write("weights")

        metadata = {"epoch": 2, "nested": [1, 2.5, None, True]}
        uuid = ctx.checkpoints.save(10, write, metadata)
        self.assertEqual(len(written), 1)
        path = os.path.join(self.checkpoints, uuid)
        with open(os.path.join(path, "state.txt")) as f:
            self.assertEqual(f.read(), "weights")

        resumed = self.context("--resume", path)
        self.assertEqual(resumed.latest_checkpoint, path)
        info = resumed.checkpoints.latest_verified()
        self.assertEqual((info.uuid, info.batches, info.path), (uuid, 10, path))
        self.assertEqual({k: info.metadata[k] for k in metadata}, metadata)
        self.assertEqual([(f["path"], f["size"]) for f in info.files], [("state.txt", 7)])
        with open(os.path.join(path, "state.txt"), "w") as f:
            f.write("Weights")
        with self.assertRaisesRegex(ringtrial.CheckpointError, "state.txt"):
            resumed.checkpoints.latest_verified()

    def test_a_checkpoint_of_bytes_is_written_in_the_background(self):
        ctx = self.context()
        state = bytearray(os.urandom(1 << 20))
        expected = bytes(state)
        view = memoryview(state)
        ctx.checkpoints.save_async(20, {"state.bin": view, "sub/extra.txt": b"extra"}, {"epoch": 1})
        # The buffer is held until the write is done: resizing it is refused.
        if ctx.checkpoints.pending():
            with self.assertRaises(BufferError):
                state.extend(b"more")
        uuid = ctx.checkpoints.wait()
        self.assertIsNotNone(uuid)
        self.assertFalse(ctx.checkpoints.pending())
        self.assertIsNone(ctx.checkpoints.wait())
        path = os.path.join(self.checkpoints, uuid)
        with open(os.path.join(path, "state.bin"), "rb") as f:
            self.assertEqual(f.read(), expected)
        view.release()
        state.extend(b"more")  # let go once written
        info = self.context("--resume", path).checkpoints.latest_verified()
        self.assertEqual((info.batches, info.metadata["epoch"]), (20, 1))
        self.assertEqual(sorted(f["path"] for f in info.files), ["state.bin", "sub/extra.txt"])
        with self.assertRaisesRegex(ringtrial.CheckpointError, "relative path"):
            ctx.checkpoints.save_async(21, {"../escape": b"x"})
        with self.assertRaises(TypeError):
            ctx.checkpoints.save_async(22, {"state.bin": 42})

    def test_an_exception_of_the_writer_reaches_the_caller_and_nothing_is_kept(self):
        ctx = self.context()

        def write(directory):
            raise ValueError("disk on fire")

        with self.assertRaisesRegex(ValueError, "disk on fire"):
            ctx.checkpoints.save(3, write)
        kept = [d for d in os.listdir(self.checkpoints) if not d.startswith(".tmp-")] \
            if os.path.isdir(self.checkpoints) else []
        self.assertEqual(kept, [])
        with self.assertRaisesRegex(TypeError, "JSON"):
            ctx.checkpoints.save(3, lambda d: None, {"bad": object()})

    def test_validation_and_checkpoint_periods(self):
        ctx = self.context(env={"RING_MIN_VALIDATION_PERIOD_BATCHES": "10",
                                "RING_MIN_CHECKPOINT_PERIOD_BATCHES": "10"})
        self.assertEqual([ctx.validation_due(b) for b in (5, 10)], [False, True])
        ctx.report_validation_metrics(10, {"validation_loss": 1.0})
        self.assertEqual([ctx.validation_due(b) for b in (15, 20)], [False, True])
        self.assertEqual([ctx.checkpoints.due(b) for b in (9, 10)], [False, True])

    def test_sigterm_asks_to_stop(self):
        result = run_script("""
            import os, signal, time, ringtrial
            ctx = ringtrial.Context.from_environment()
            assert not ctx.preempt.should_preempt()
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 10
            while not ctx.preempt.should_preempt() and time.monotonic() < deadline:
                time.sleep(0.01)
            ctx.preempt.acknowledge()
            print("stopping:", ctx.preempt.should_preempt(), flush=True)
            """, "--checkpoint-dir", self.checkpoints, env=dict(os.environ))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("stopping: True", result.stdout)


class FakeMaster:
    """The trial API of one allocation, as far as these tests use it."""

    def __init__(self, status=200):
        self.status = status
        self.lock = threading.Lock()
        self.requests = []  # (method, path, body, authorization)
        self.checkpoints = {}
        self.issued = 0
        self.preempt = threading.Event()
        master = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.answer(master.handle("GET", self.path, None, self.headers.get("Authorization")))

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
                self.answer(master.handle("POST", self.path, body, self.headers.get("Authorization")))

            def answer(self, reply):
                status, body = reply
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def seen(self, method, path):
        with self.lock:
            return [r for r in self.requests if r[0] == method and r[1].startswith(path)]

    def handle(self, method, path, body, authorization):
        with self.lock:
            self.requests.append((method, path, body, authorization))
        if self.status != 200:
            return self.status, {"error": {"code": "conflict", "message": "allocation a-1 ended"}}
        prefix = "/api/v1/allocations/a-1"
        path = path[len(prefix):] if path.startswith(prefix) else path
        if method == "GET" and path == "/searcher/operation":
            return 200, {"operation": {"length": 20}, "done": False}
        if method == "GET" and path.startswith("/searcher/operation?after=20"):
            return 200, {"operation": None, "done": True}
        if method == "GET" and path.startswith("/preemption"):
            return 200, {"preempt": self.preempt.wait(1.0)}  # a short long poll
        if method == "POST" and path == "/checkpoints/prepare":
            # The master issues each checkpoint's uuid before it is written.
            self.issued += 1
            return 201, {"uuid": str(uuid.UUID(int=self.issued))}
        if method == "POST" and path == "/checkpoints":
            self.checkpoints[body["uuid"]] = body
            return 200, {}
        if method == "GET" and path.startswith("/checkpoints/"):
            record = self.checkpoints.get(path[len("/checkpoints/"):])
            return (200, record) if record else (404, {"error": {"code": "not_found", "message": "no"}})
        if method == "POST" and path in ("/metrics", "/searcher/completed", "/preemption/ack"):
            return 200, {"accepted": True}
        return 404, {"error": {"code": "not_found", "message": path}}


class ClusterModeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def environment(self, master):
        storage = {"type": "shared_fs", "host_path": self.dir.name, "storage_path": "ck"}
        return {"RING_MASTER_URL": master.url, "RING_ALLOCATION_ID": "a-1", "RING_ALLOCATION_TOKEN": "tok",
                "RING_TRIAL_ID": "4", "RING_EXPERIMENT_ID": "2", "RING_HPARAMS": '{"lr": 0.1}',
                "RING_MAX_LENGTH_BATCHES": "20", "RING_TRIAL_SEED": "99",
                "RING_SEARCHER_METRIC": "validation_accuracy", "RING_CHECKPOINT_STORAGE": json.dumps(storage),
                "RING_API_RETRY_SECONDS": "3", "RANK": "0", "WORLD_SIZE": "1"}

    def test_a_trial_talks_to_the_master_while_python_threads_run(self):
        master = FakeMaster()
        self.addCleanup(master.stop)
        started = time.monotonic()
        ctx = ringtrial.Context.from_environment(["train.py"], self.environment(master))
        self.assertFalse(ctx.is_local)
        self.assertEqual((ctx.trial_id, ctx.experiment_id, ctx.seed, ctx.hparams), (4, 2, 99, {"lr": 0.1}))
        lengths, uuids = [], []
        for op in ctx.searcher.operations():
            lengths.append(op.length)
            ctx.report_training_metrics(10, {"loss": 1.0})
            uuids.append(ctx.checkpoints.save(op.length, lambda d: open(os.path.join(d, "w"), "w").close()))
            ctx.report_validation_metrics(op.length, {"validation_accuracy": 0.9})
            op.report_completed(0.9)
        self.assertEqual(lengths, [20])
        self.assertTrue(ctx.flush(5.0))

        reports = [r for req in master.seen("POST", "/api/v1/allocations/a-1/metrics") for r in req[2]["reports"]]
        self.assertEqual([(r["kind"], r["batches"]) for r in reports], [("training", 10), ("validation", 20)])
        completed = master.seen("POST", "/api/v1/allocations/a-1/searcher/completed")
        self.assertEqual([c[2] for c in completed], [{"length": 20, "metric": 0.9}])
        self.assertEqual(list(master.checkpoints), uuids)
        self.assertEqual([f["path"] for f in master.checkpoints[uuids[0]]["resources"]], ["w"])
        self.assertEqual({r[3] for r in master.requests}, {"Bearer tok"})

        # The chief's long poll hears the master; acknowledging is a call of its own.
        self.assertFalse(ctx.preempt.should_preempt())
        master.preempt.set()
        deadline = time.monotonic() + 10
        while not ctx.preempt.should_preempt() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(ctx.preempt.should_preempt())
        ctx.preempt.acknowledge()
        self.assertEqual(len(master.seen("POST", "/api/v1/allocations/a-1/preemption/ack")), 1)

        # A resumed run reads the registration from the master and checks the files against it.
        path = os.path.join(self.dir.name, "ck", uuids[0])
        env = dict(self.environment(master), RING_LATEST_CHECKPOINT=path)
        info = ringtrial.Context.from_environment(["train.py"], env).checkpoints.latest_verified()
        self.assertEqual((info.uuid, info.batches, info.path), (uuids[0], 20, path))
        del ctx
        self.assertLess(time.monotonic() - started, 20)

    def test_an_ended_allocation_raises_allocation_ended_error(self):
        master = FakeMaster(status=409)
        self.addCleanup(master.stop)
        ctx = ringtrial.Context.from_environment(["train.py"], self.environment(master))
        with self.assertRaisesRegex(ringtrial.AllocationEndedError, "409"):
            ctx.searcher.next_operation()


if __name__ == "__main__":
    unittest.main()
