"""Tests of the `determined` compatibility package: cluster information from
the environment, local mode, cluster mode against a fake master served from a
thread of this process (trial API and rendezvous store), collectives between
real processes and the launchers (checkpoints: determined_checkpoint_test.py).

    PYTHONPATH=build/python /usr/bin/python3 trial_runtime/python/tests/determined_test.py -v
"""

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

import determined as det
from determined.launch import torch_distributed, wrap_rank
from determined_support import NO_SLEEP_PYTHONPATH, PYTHONPATH, ClusterTestCase, run


class ClusterInfoTest(unittest.TestCase):
    def test_none_outside_a_cluster(self):
        self.assertIsNone(det.get_cluster_info({"RANK": "0"}))

    def test_what_the_agent_and_the_launch_tell(self):
        info = det.get_cluster_info({
            "RING_MASTER_URL": "http://m:1", "RING_TRIAL_ID": "7", "RING_EXPERIMENT_ID": "3",
            "RING_HPARAMS": '{"increment_by": 4, "opt": {"lr": 0.1}}', "RING_DATA": '{"url": "s3://x"}',
            "RING_LATEST_CHECKPOINT": "/ck/9a2c-uuid", "RING_SLOT_IDS": "4,5,6,7",
            "RING_CONTAINER_ADDRS": "10.0.0.1,10.0.0.2", "RING_CONTAINER_RANK": "1",
            "RING_ALLOCATION_ID": "7.0", "RING_AGENT_ID": "agent-2"})
        self.assertEqual((info.trial.trial_id, info.trial.experiment_id), (7, 3))
        self.assertEqual(info.trial.hparams, {"increment_by": 4, "opt": {"lr": 0.1}})
        self.assertEqual(info.user_data, {"url": "s3://x"})
        self.assertEqual(info.latest_checkpoint, "9a2c-uuid")
        self.assertEqual(info.slot_ids, [4, 5, 6, 7])
        self.assertEqual(info.container_addrs, ["10.0.0.1", "10.0.0.2"])
        self.assertEqual(info.container_rank, 1)
        self.assertEqual((info.allocation_id, info.agent_id, info.task_type), ("7.0", "agent-2", "TRIAL"))

    def test_fallbacks_from_the_per_slot_variables(self):
        info = det.get_cluster_info({"RING_MASTER_URL": "http://m:1", "RANK": "3", "WORLD_SIZE": "4",
                                     "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.1",
                                     "RING_AGENT_ADDR": "10.0.0.2"})
        self.assertEqual(info.slot_ids, [0, 1])
        self.assertEqual(info.container_rank, 1)
        self.assertEqual(info.container_addrs, ["10.0.0.1", "10.0.0.2"])
        self.assertIsNone(info.latest_checkpoint)
        self.assertEqual(info.user_data, {})
        one = det.get_cluster_info({"RING_MASTER_URL": "http://m:1", "MASTER_ADDR": "10.0.0.1"})
        self.assertEqual((one.slot_ids, one.container_addrs, one.container_rank), ([0], ["10.0.0.1"], 0))

    def test_bad_json_names_the_variable(self):
        with self.assertRaisesRegex(ValueError, "RING_DATA"):
            det.get_cluster_info({"RING_MASTER_URL": "http://m:1", "RING_DATA": "{nope"})

    def test_log_format_leads_with_the_level(self):
        self.assertTrue(det.LOG_FORMAT.startswith("%(levelname)s"))


class LocalModeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def test_prints_reports_stores_checkpoints_and_says_so_once(self):
        result = run("""
            import pathlib, determined as det
            assert det.get_cluster_info() is None
            for _ in range(2):
                with det.core.init() as core:
                    core.train.report_training_metrics(steps_completed=10, metrics={"x": 10, "name": "a"})
                    core.train.report_validation_metrics(steps_completed=10, metrics={"x": 10})
                    core.train.report_metrics("inference", 10, {"acc": 0.5})
                    core.train.report_progress(0.5)
                    with core.checkpoint.store_path({"steps_completed": 10}) as (path, uuid):
                        (path / "state").write_text("10")
                    with core.checkpoint.restore_path(uuid) as back:
                        assert (back / "state").read_text() == "10", back
                    assert core.checkpoint.get_metadata(uuid)["steps_completed"] == 10
                    assert not core.preempt.should_preempt()
                    assert core.distributed.size == 1 and core.distributed.allgather(3) == [3]
            print("uuid", uuid)
        """, {"XDG_DATA_HOME": self.dir})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr.count("not on a Ringmaster cluster"), 1, result.stderr)
        self.assertIn(os.path.join(self.dir, "determined"), result.stderr)
        self.assertIn("training batches=10 x=10", result.stdout + result.stderr)
        self.assertIn("inference/acc=0.5", result.stdout + result.stderr)
        uuid_ = result.stdout.split("uuid ")[-1].strip()
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "determined", uuid_, "state")))

    def test_the_tutorial_stage_1_runs_locally(self):
        script = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "determined", "core_api",
                              "1_metrics.py")
        result = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=60,
                                env={"PYTHONPATH": NO_SLEEP_PYTHONPATH, "XDG_DATA_HOME": self.dir})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("validation batches=100 x=100", result.stdout + result.stderr)


class ClusterModeTest(ClusterTestCase):
    def test_reports_checkpoints_and_preemption_reach_the_master(self):
        self.master.preempt = True
        result = run("""
            import determined as det
            info = det.get_cluster_info()
            assert info.trial.hparams == {"increment_by": 2} and info.latest_checkpoint is None
            with det.core.init() as core:
                core.train.report_training_metrics(steps_completed=10, metrics={"x": 10, "nested": {"a": 1}})
                core.train.report_metrics("inference", 10, {"acc": 0.5})
                core.train.report_validation_metrics(steps_completed=20, metrics={"x": 20})
                with core.checkpoint.store_path({"steps_completed": 20, "note": "hi"}) as (path, uuid):
                    (path / "state").write_text("20,20,4")
                print("uuid", uuid)
                try:
                    with core.checkpoint.store_path({"steps_completed": 30}) as (path, bad):
                        (path / "state").write_text("half")
                        raise KeyError("disk full")
                except KeyError:
                    print("raised")
                import time
                deadline = time.time() + 10
                while not core.preempt.should_preempt() and time.time() < deadline:
                    time.sleep(0.05)
                print("preempt", core.preempt.should_preempt())
        """, self.env())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("not on a Ringmaster cluster", result.stderr)
        reports = [r for body in self.master.posted("/metrics") for r in body["reports"]]
        self.assertEqual([(r["kind"], r["batches"], r["metrics"]) for r in reports],
                         [("training", 10, {"x": 10.0, "nested/a": 1.0}), ("training", 10, {"inference/acc": 0.5}),
                          ("validation", 20, {"x": 20.0})])
        uuid_ = result.stdout.split("uuid ")[1].split()[0]
        self.assertEqual(list(self.master.checkpoints), [uuid_], "the failed block registered nothing")
        record = self.master.checkpoints[uuid_]
        self.assertEqual((record["batches"], record["metadata"]["note"]), (20, "hi"))
        with open(os.path.join(self.root, uuid_, "state")) as f:
            self.assertEqual(f.read(), "20,20,4")
        self.assertIn("raised", result.stdout)
        self.assertIn("preempt True", result.stdout)
        self.assertEqual(len(self.master.posted("/preemption/ack")), 1)

    def test_searcher_operations_of_the_older_contract(self):
        result = run("""
            import determined as det
            with det.core.init() as core:
                for op in core.searcher.operations():
                    core.train.report_validation_metrics(op.length, {"x": 1.5})
                    op.report_completed(1.5)
                    print("length", op.length)
        """, self.env())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("length 20", result.stdout)
        self.assertEqual(self.master.posted("/searcher/completed"), [{"length": 20, "metric": 1.5}])

    def test_operation_lengths_are_in_the_configs_unit(self):
        """max_length: {epochs: 20}: the master's 20 batches are ASHA's first rung, 1 epoch."""
        code = """
            import determined as det
            with det.core.init() as core:
                print("units", core.searcher.get_configured_units())
                for op in core.searcher.operations():
                    op.report_progress(op.length / 2)
                    core.train.report_validation_metrics(20, {"x": 1.5})
                    op.report_completed(1.5)
                    print("length", op.length)
        """
        result = run(code, self.env(RING_MAX_LENGTH_BATCHES="18750", RING_MAX_LENGTH_UNIT="epochs",
                                    RING_MAX_LENGTH_VALUE="20", RING_OPERATION_LENGTHS="20:1,80:5,18750:20"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("units Unit.EPOCHS", result.stdout)
        self.assertIn("length 1\n", result.stdout)
        # The master still counts the operation in batches.
        self.assertEqual(self.master.posted("/searcher/completed"), [{"length": 20, "metric": 1.5}])

        bare = run(code, self.env(RING_MAX_LENGTH_VALUE="20"))
        self.assertEqual(bare.returncode, 0, bare.stderr)
        self.assertIn("units None", bare.stdout)
        self.assertIn("length 20\n", bare.stdout)

    def test_a_length_the_master_cannot_count_gives_one_operation_of_it(self):
        """{epochs: 20} without records_per_epoch (a config warning): no operations from
        the master; one of 20 epochs, as Determined 0.38 makes it."""
        result = run("""
            import determined as det
            with det.core.init() as core:
                ops = []
                for op in core.searcher.operations():
                    op.report_completed(0.5)
                    ops.append(op)
                print("units", core.searcher.get_configured_units(), "lengths", [op.length for op in ops])
        """, self.env(RING_MAX_LENGTH_BATCHES="0", RING_MAX_LENGTH_UNIT="epochs", RING_MAX_LENGTH_VALUE="20"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("units Unit.EPOCHS lengths [20]", result.stdout)
        self.assertFalse([r for r in self.master.requests if r[1].startswith("/searcher")])

    def test_invalid_hyperparameters_reach_the_master_and_the_trial_exits_0(self):
        reported = run("""
            import determined as det
            with det.core.init() as core:
                core.train.report_early_exit(det.core.EarlyExitReason.INVALID_HP)
            print("after")
        """, self.env())
        self.assertEqual(reported.returncode, 0, reported.stderr)
        self.assertIn("after", reported.stdout)
        self.assertEqual(len(self.master.posted("/searcher/invalid_hparams")), 1)
        raised = run("""
            import determined as det
            with det.core.init() as core:
                core.train.report_training_metrics(5, {"x": 1})
                raise det.InvalidHP("lr too large")
            print("swallowed")
        """, self.env())
        self.assertEqual(raised.returncode, 0, raised.stderr)
        self.assertIn("swallowed", raised.stdout)
        bodies = self.master.posted("/searcher/invalid_hparams")
        self.assertEqual(len(bodies), 2)
        self.assertIsInstance(bodies[1].get("message"), str)

    def test_collectives_between_four_ranks_on_two_nodes(self):
        results = self.ranks("""
            import json, determined as det
            d = det.core.DistributedContext.from_torch_distributed()
            with det.core.init(distributed=d) as core:
                dist = core.distributed
                out = {"all": dist.allgather(dist.rank * 10), "gather": dist.gather(dist.rank),
                       "bcast": dist.broadcast(f"from {dist.rank}"), "local": dist.allgather_local(dist.rank),
                       "lbcast": dist.broadcast_local(dist.rank), "lgather": dist.gather_local(dist.rank),
                       "many": [dist.allgather(i)[-1] for i in range(50)],
                       "preempt": core.preempt.should_preempt()}
                print(json.dumps(out))
        """, 4, 2)
        for rank, (code, stdout, stderr) in enumerate(results):
            self.assertEqual(code, 0, stderr)
            out = json.loads(stdout.strip().splitlines()[-1])
            node = rank // 2
            self.assertEqual(out["all"], [0, 10, 20, 30])
            self.assertEqual(out["gather"], [0, 1, 2, 3] if rank == 0 else None)
            self.assertEqual(out["bcast"], "from 0")
            self.assertEqual(out["local"], [2 * node, 2 * node + 1])
            self.assertEqual(out["lbcast"], 2 * node)
            self.assertEqual(out["lgather"], [2 * node, 2 * node + 1] if rank % 2 == 0 else None)
            self.assertEqual(out["many"], list(range(50)))
            self.assertFalse(out["preempt"])
        # Only the hubs' addresses went through the master's store.
        self.assertEqual(sorted(self.master.store), ["determined/0/node-0", "determined/0/node-1",
                                                     "determined/0/world"])

    def test_a_stranger_without_the_secret_cannot_join(self):
        import socket
        from determined.core import _star

        class Store:
            def __init__(self):
                self.values, self.cv = {}, threading.Condition()

            def set(self, k, v):
                with self.cv:
                    self.values[k] = v
                    self.cv.notify_all()

            def get(self, k, timeout):
                with self.cv:
                    self.cv.wait_for(lambda: k in self.values, timeout)
                    return self.values[k]

        store, hub = Store(), {}
        t = threading.Thread(target=lambda: hub.update(star=_star.Star(store, "g", 0, 2, "127.0.0.1", "127.0.0.1",
                                                                       10.0)))
        t.start()
        address = json.loads(store.get("g", 10))
        stranger = socket.create_connection((address["host"], address["port"]))
        _star.send_frame(stranger, json.dumps({"member": 1, "secret": "guess"}).encode())
        member = _star.Star(store, "g", 1, 2, "", "", 10.0)
        t.join(10)
        got = {}
        t = threading.Thread(target=lambda: got.update(hub=hub["star"].gather("hub")))
        t.start()
        member.gather("member")
        t.join(10)
        self.assertEqual(got["hub"], ["hub", "member"])
        stranger.settimeout(5)
        self.assertEqual(stranger.recv(1), b"", "the stranger's connection was not closed")
        stranger.close()
        member.close()
        hub["star"].close()

    def test_tutorial_stage_4_on_two_nodes_as_per_node_launch_starts_it(self):
        """4_distributed.py, unmodified: one `launcher` process per node with the
        variables per-node launch sets; its 4 workers allgather every step."""
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                              "determined", "core_api", "4_distributed.py")
        procs = []
        for node in range(2):
            env = self.env(RANK=str(node * 2), WORLD_SIZE="4", LOCAL_RANK="0", LOCAL_WORLD_SIZE="2",
                           RING_SLOT_IDS="0,1", RING_CONTAINER_ADDRS="127.0.0.1,127.0.0.1",
                           RING_CONTAINER_RANK=str(node), RING_LAUNCH="per_node",
                           RING_HPARAMS='{"increment_by": 3}', PYTHONPATH=NO_SLEEP_PYTHONPATH,
                           PATH=os.environ.get("PATH", "/usr/bin:/bin"))
            procs.append(subprocess.Popen([sys.executable, script, "launcher"], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        outputs = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, outputs):
            self.assertEqual(p.returncode, 0, err[-3000:])
        logs = outputs[0][1] + outputs[1][1]
        for rank in range(4):
            self.assertIn(f"[rank={rank}] ", logs)
        reports = [r for body in self.master.posted("/metrics") for r in body["reports"]]
        validation = [r for r in reports if r["kind"] == "validation"]
        self.assertEqual(validation[-1]["batches"], 100)
        self.assertEqual(validation[-1]["metrics"]["x"], 4 * 3 * 100)  # four ranks' increment_by each step
        self.assertEqual(sorted(r["batches"] for r in self.master.checkpoints.values()), list(range(10, 101, 10)))

class LaunchTest(unittest.TestCase):
    def test_wrap_rank_prefixes_each_line_and_keeps_the_exit_code(self):
        result = subprocess.run(
            [sys.executable, "-m", "determined.launch.wrap_rank", "3", "--", sys.executable, "-c",
             "import sys; print('a'); sys.stdout.write('b\\rc\\n'); print('e', file=sys.stderr); sys.exit(4)"],
            capture_output=True, text=True, timeout=30, env={"PYTHONPATH": PYTHONPATH})
        self.assertEqual(result.returncode, 4)
        self.assertEqual(result.stdout, "[rank=3] a\n[rank=3] b\n[rank=3] c\n")
        self.assertEqual(result.stderr, "[rank=3] e\n")

    def test_wrap_rank_reads_the_rank_from_variables(self):
        self.assertEqual(wrap_rank.parse_rank("NOPE,RANK", {"RANK": "5"}), 5)

    def test_per_node_workers_are_numbered_after_the_nodes_before(self):
        env = {"RING_LAUNCH": "per_node", "RING_SLOT_IDS": "0,1,2,3", "RING_CONTAINER_RANK": "1",
               "RING_CONTAINER_ADDRS": "10.0.0.1,10.0.0.2", "MASTER_PORT": "29501"}
        workers = torch_distributed.worker_envs(env)
        self.assertEqual([w["RANK"] for w in workers], ["4", "5", "6", "7"])
        self.assertEqual({(w["WORLD_SIZE"], w["LOCAL_WORLD_SIZE"], w["GROUP_RANK"], w["GROUP_WORLD_SIZE"],
                           w["MASTER_ADDR"], w["MASTER_PORT"]) for w in workers},
                         {("8", "4", "1", "2", "10.0.0.1", "29501")})
        self.assertEqual([w["LOCAL_RANK"] for w in workers], ["0", "1", "2", "3"])
        uneven = torch_distributed.worker_envs(dict(env, RING_SLOT_IDS="0,1", RING_CONTAINER_SLOT_COUNTS="3,2"))
        self.assertEqual([(w["RANK"], w["WORLD_SIZE"]) for w in uneven], [("3", "5"), ("4", "5")])

    def test_per_slot_the_launcher_runs_one_worker_with_its_own_rank(self):
        workers = torch_distributed.worker_envs({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                                                 "LOCAL_WORLD_SIZE": "2"})
        self.assertEqual(len(workers), 1)
        self.assertEqual((workers[0]["RANK"], workers[0]["GROUP_RANK"], workers[0]["GROUP_WORLD_SIZE"]),
                         ("3", "1", "2"))

    def test_torch_distributed_starts_the_nodes_workers_with_ranked_lines(self):
        env = {"PYTHONPATH": PYTHONPATH, "RING_LAUNCH": "per_node", "RING_SLOT_IDS": "0,1",
               "RING_CONTAINER_RANK": "0", "RING_CONTAINER_ADDRS": "127.0.0.1"}
        script = "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])"
        result = subprocess.run([sys.executable, "-m", "determined.launch.torch_distributed", "--",
                                 sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(result.stdout.splitlines()), ["[rank=0] rank 0 of 2", "[rank=1] rank 1 of 2"])

    def test_torchrun_flags_are_ignored_saying_so_and_trial_classes_refused(self):
        env = {"PYTHONPATH": PYTHONPATH}
        result = subprocess.run([sys.executable, "-m", "determined.launch.torch_distributed", "--max_restarts", "3",
                                 "--rdzv_backend=c10d", "--", sys.executable, "-c", "print('ran')"],
                                capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "[rank=0] ran\n")
        self.assertIn("--max_restarts 3 ignored", result.stderr)
        self.assertIn("--rdzv_backend=c10d ignored", result.stderr)
        refused = subprocess.run([sys.executable, "-m", "determined.launch.torch_distributed", "--trial",
                                  "model_def:MyTrial"], capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("PyTorchTrial", refused.stderr)

    def test_a_failing_worker_fails_the_launcher(self):
        env = {"PYTHONPATH": PYTHONPATH, "RING_LAUNCH": "per_node", "RING_SLOT_IDS": "0,1"}
        script = ("import os, sys, time\n"
                  "if os.environ['RANK'] == '1': sys.exit(3)\n"
                  "time.sleep(60)")
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "determined.launch.torch_distributed", sys.executable,
                                 "-c", script], capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertLess(time.monotonic() - started, 20, "the other worker was not stopped")


class InterpreterTest(unittest.TestCase):
    def test_without_ringtrial_cluster_information_works_and_init_says_why_not(self):
        with tempfile.TemporaryDirectory() as alone:
            shutil.copytree(os.path.join(PYTHONPATH.split(os.pathsep)[0], "determined"),
                            os.path.join(alone, "determined"))
            result = subprocess.run([sys.executable, "-c", textwrap.dedent("""
                import determined as det
                print(det.get_cluster_info().trial.trial_id)
                det.core.init()
            """)], capture_output=True, text=True, timeout=30,
                env={"PYTHONPATH": alone, "RING_MASTER_URL": "http://127.0.0.1:1", "RING_TRIAL_ID": "5"})
        self.assertEqual(result.stdout.strip(), "5")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("ringtrial module", result.stderr)
        self.assertIn("How a site chooses the trial's Python", result.stderr)

    def test_the_first_python3_on_path_imports_the_package_too(self):
        other = shutil.which("python3")
        if other is None or os.path.realpath(other) == os.path.realpath(sys.executable):
            self.skipTest("no other python3 on PATH than " + sys.executable)
        result = subprocess.run([other, "-c", "import ringtrial, determined, sys; print(sys.version_info[:2])"],
                                capture_output=True, text=True, timeout=30,
                                env=dict(os.environ, PYTHONPATH=PYTHONPATH))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), str(tuple(sys.version_info[:2])))


if __name__ == "__main__":
    unittest.main()
