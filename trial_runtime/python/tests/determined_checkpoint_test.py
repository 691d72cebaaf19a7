"""Tests of the `determined` package's checkpoints on a cluster (a fake master
served by the test itself): resume, upload, and sharded checkpoints in the
trial runtime's format, read and written by ringtrial too.

    PYTHONPATH=build/python /usr/bin/python3 trial_runtime/python/tests/determined_checkpoint_test.py -v
"""

import os
import unittest

from determined_support import ClusterTestCase, run


class CheckpointTest(ClusterTestCase):
    def test_resume_restores_the_latest_and_any_other_checkpoint_by_uuid(self):
        first = run("""
            import determined as det
            with det.core.init() as core:
                for steps in (10, 20):
                    with core.checkpoint.store_path({"steps_completed": steps}) as (path, uuid):
                        (path / "state").write_text(str(steps))
                    print("uuid", uuid)
        """, self.env())
        self.assertEqual(first.returncode, 0, first.stderr)
        old, latest = [line.split()[1] for line in first.stdout.splitlines() if line.startswith("uuid")]
        second = run("""
            import sys, determined as det
            info = det.get_cluster_info()
            with det.core.init() as core:
                with core.checkpoint.restore_path(info.latest_checkpoint) as path:
                    print("latest", info.latest_checkpoint, (path / "state").read_text())
                with core.checkpoint.restore_path(sys.argv[1]) as path:
                    print("old", (path / "state").read_text())
                print("meta", core.checkpoint.get_metadata(sys.argv[1])["steps_completed"])
                core.checkpoint.download(sys.argv[1], sys.argv[2])
        """, self.env(RING_LATEST_CHECKPOINT=os.path.join(self.root, latest)), old,
                     os.path.join(self.dir, "copy"))
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn(f"latest {latest} 20", second.stdout)
        self.assertIn("old 10", second.stdout)
        self.assertIn("meta 10", second.stdout)
        self.assertEqual(os.listdir(os.path.join(self.dir, "copy")), ["state"])
        # A changed file is caught before the script reads it.
        with open(os.path.join(self.root, old, "state"), "w") as f:
            f.write("99")
        third = run("""
            import sys, determined as det
            with det.core.init() as core:
                with core.checkpoint.restore_path(sys.argv[1]) as path:
                    pass
        """, self.env(), old)
        self.assertNotEqual(third.returncode, 0)
        self.assertIn("CheckpointError", third.stderr)

    def test_upload_copies_the_files_the_selector_accepts(self):
        source = os.path.join(self.dir, "src")
        os.makedirs(os.path.join(source, "opt"))
        for name in ("model.pt", "opt/0.pt", "notes.txt"):
            with open(os.path.join(source, name), "w") as f:
                f.write(name)
        result = run("""
            import sys, determined as det
            with det.core.init() as core:
                uuid = core.checkpoint.upload(sys.argv[1], {"steps_completed": 7},
                                              selector=lambda p: p.endswith(".pt"))
                print("uuid", uuid)
                print("meta", core.checkpoint.get_metadata(uuid)["steps_completed"])
        """, self.env(), source)
        self.assertEqual(result.returncode, 0, result.stderr)
        uuid_ = result.stdout.split("uuid ")[1].split()[0]
        self.assertIn("meta 7", result.stdout)
        registered = sorted(f["path"] for f in self.master.checkpoints[uuid_]["resources"])
        self.assertEqual(registered, ["model.pt", "opt/0.pt"])
        with open(os.path.join(self.root, uuid_, "opt", "0.pt")) as f:
            self.assertEqual(f.read(), "opt/0.pt")

    def test_sharded_upload_every_rank_its_own_files(self):
        for rank in range(2):
            os.makedirs(os.path.join(self.dir, f"src{rank}"))
            for name in (f"opt{rank}.pt", f"skip{rank}.tmp"):
                with open(os.path.join(self.dir, f"src{rank}", name), "w") as f:
                    f.write(name)
        results = self.ranks("""
            import os, sys, determined as det
            d = det.core.DistributedContext.from_torch_distributed()
            with det.core.init(distributed=d) as core:
                r = core.distributed.rank
                uuid = core.checkpoint.upload(os.path.join(sys.argv[1], f"src{r}"), {"steps_completed": 3},
                                              shard=True, selector=lambda p: p.endswith(".pt"))
                print("uuid", uuid)
                with core.checkpoint.restore_path(uuid) as path:
                    print("merged", sorted(os.listdir(path)))
        """, 2, 2, self.dir)
        for code, stdout, stderr in results:
            self.assertEqual(code, 0, stderr)
            self.assertIn("merged ['opt0.pt', 'opt1.pt']", stdout)
        uuid_ = results[0][1].split("uuid ")[1].split()[0]
        registered = sorted(f["path"] for f in self.master.checkpoints[uuid_]["resources"])
        self.assertEqual(registered, ["rank-0/opt0.pt", "rank-1/opt1.pt"])

    def test_sharded_checkpoint_has_the_runtimes_format(self):
        """Every rank writes rank-<r>/ and the metadata counts the parts, as
        ringtrial.ShardedCheckpoints writes them: ringtrial restores each rank's
        part of the package's checkpoint, and the package reads ringtrial's
        merged, as Determined stores sharded checkpoints."""
        results = self.ranks("""
            import json, os, ringtrial, determined as det
            d = det.core.DistributedContext.from_torch_distributed()
            with det.core.init(distributed=d) as core:
                r = core.distributed.rank
                with core.checkpoint.store_path({"steps_completed": 5}, shard=True) as (path, uuid):
                    (path / f"part-{r}").write_text(str(r))
                    if r == 0:
                        (path / "common").write_text("c")
                print("uuid", uuid)
                try:
                    with core.checkpoint.store_path({"steps_completed": 6}, shard=True) as (path, u2):
                        (path / "same").write_text(str(r))
                except RuntimeError as e:
                    print("refused", "both wrote 'same'" in str(e))
                # The runtime reads this rank's part of the package's checkpoint.
                root = os.path.dirname(os.path.dirname(str(path)))
                sharded = ringtrial.ShardedCheckpoints(core._ctx, timeout_s=30)
                mine = sharded.restore(ringtrial.CheckpointInfo(uuid, os.path.join(root, uuid)))
                print("runtime read", open(os.path.join(mine.path, f"part-{r}")).read())
                # The package reads the runtime's, merged.
                def write(folder):
                    with open(os.path.join(folder, f"w{r}.bin"), "w") as f:
                        f.write(f"weights {r}")
                theirs = sharded.save(9, write, {"by": "runtime"})
                with core.checkpoint.restore_path(theirs) as merged:
                    print("package read", sorted(os.listdir(merged)), (merged / "w1.bin").read_text())
                if r == 0:
                    core.checkpoint.download(theirs, os.path.join(root, "..", "copy"))
        """, 3, 3)
        uuids = set()
        for rank, (code, stdout, stderr) in enumerate(results):
            self.assertEqual(code, 0, stderr)
            uuids.add(stdout.split("uuid ")[1].split()[0])
            self.assertIn("refused True", stdout)
            self.assertIn(f"runtime read {rank}", stdout)
            self.assertIn("package read ['w0.bin', 'w1.bin', 'w2.bin'] weights 1", stdout)
        self.assertEqual(len(uuids), 1)
        uuid_ = uuids.pop()
        self.assertEqual(len(self.master.checkpoints), 2, "the refused checkpoint registered nothing")
        directory = os.path.join(self.root, uuid_)
        self.assertEqual(sorted(os.listdir(directory)), [".ring-checkpoint.json", "rank-0", "rank-1", "rank-2"])
        record = self.master.checkpoints[uuid_]
        self.assertEqual(record["metadata"]["ring_shards"], 3)
        registered = sorted(f["path"] for f in record["resources"])
        self.assertEqual(registered, ["rank-0/common", "rank-0/part-0", "rank-1/part-1", "rank-2/part-2"])
        self.assertEqual(sorted(os.listdir(os.path.join(self.dir, "copy"))), ["w0.bin", "w1.bin", "w2.bin"])

    def test_checkpoints_of_the_earlier_sharded_layout_are_read_as_they_are(self):
        """Before the runtime's format the package merged every rank's files at the
        checkpoint's top beside .determined-shards.json: such a checkpoint is read as it is."""
        result = run("""
            import json, os, sys, determined as det
            with det.core.init() as core:
                with core.checkpoint.store_path({"steps_completed": 5}) as (path, uuid):
                    for name in ("common", "part-0", "part-1"):
                        (path / name).write_text(name)
                    (path / ".determined-shards.json").write_text(json.dumps(
                        {"format": 1, "shards": {"0": ["common", "part-0"], "1": ["part-1"]}}))
                with core.checkpoint.restore_path(uuid) as path:
                    print("read", (path / "part-1").read_text())
                core.checkpoint.download(uuid, sys.argv[1])
        """, self.env(), os.path.join(self.dir, "copy"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("read part-1", result.stdout)
        self.assertEqual(sorted(os.listdir(os.path.join(self.dir, "copy"))), ["common", "part-0", "part-1"])


if __name__ == "__main__":
    unittest.main()
