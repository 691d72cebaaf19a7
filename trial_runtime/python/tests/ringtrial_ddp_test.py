"""ringtrial.ProcessGroup, ringtrial.PriorityReducer and ringtrial_ddp:
collectives on numpy arrays, tensors and raw addresses; the cross-step
DistributedModule gives bit for bit the parameters of the synchronous step
and of a hand-written allreduce-then-step loop (2 ranks over gloo, 4 ranks as
2 agents x 2 and 4 on one agent over the hierarchical backend; SGD with
momentum and weight decay, Adam; a layer unused in some steps), every
forward reads the updated parameters, and the synchronous fallback says why.

Ranks of the multi-rank tests are processes this file starts (itself with
--worker), meeting through a file store in a temporary directory."""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy
import torch

import ringtrial
import ringtrial_ddp

STEPS = 6
PIECE_BYTES = 1024  # about a dozen pieces over the test model's 11 KiB of gradients


class Net(torch.nn.Module):
    """Layers in registration order: the root's own `scale`, fc1, norm, fc2,
    branch (unused in some steps), head."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.fc1 = torch.nn.Linear(12, 32)
        self.norm = torch.nn.BatchNorm1d(32)
        self.fc2 = torch.nn.Linear(32, 32)
        self.branch = torch.nn.Linear(32, 32)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x, use_branch):
        h = torch.relu(self.norm(self.fc1(x)))
        h = torch.relu(self.fc2(h))
        if use_branch:
            h = h + torch.tanh(self.branch(h))
        return self.head(h) * self.scale


def uses_branch(step, rank):
    # On some ranks in some steps, on none in step 3.
    return step % 4 != 3 and (step + rank) % 3 == 0


def batch(rank, step):
    g = torch.Generator().manual_seed(1000 + 100 * rank + step)
    return torch.randn(8, 12, generator=g), torch.randint(0, 4, (8,), generator=g)


OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01),
}


def train(group, optimizer, mode, needs_all_gradients=False, compression="none"):
    """STEPS steps on this rank's data; the parameters at the end and the
    weights fc1 and head held when each forward reached them."""
    torch.manual_seed(group.rank)  # different weights on every rank: rank 0's must win
    net = Net()
    make = OPTIMIZERS[optimizer]
    ddp = None
    if mode == "reference":
        with torch.no_grad():
            for t in list(net.parameters()) + list(net.buffers()):
                group.broadcast(t.detach(), root=0)
        reference = make(list(net.parameters()))
    else:
        ddp = ringtrial_ddp.DistributedModule(net, group, make, overlap=mode, piece_bytes=PIECE_BYTES,
                                              needs_all_gradients=needs_all_gradients, compression=compression)
    seen = []  # registered after the module's hooks, so they run after them
    net.fc1.register_forward_pre_hook(lambda m, _: seen.append(("fc1", m.weight.detach().clone())))
    net.head.register_forward_pre_hook(lambda m, _: seen.append(("head", m.weight.detach().clone())))
    for step in range(STEPS):
        x, y = batch(group.rank, step)
        torch.nn.functional.cross_entropy(net(x, uses_branch(step, group.rank)), y).backward()
        if ddp is not None:
            ddp.step()
            continue
        params = list(net.parameters())
        flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in params])
        group.allreduce(flat, ringtrial.ReduceOp.AVERAGE)
        offset = 0
        for p in params:
            p.grad = flat[offset:offset + p.numel()].view(p.shape).clone()
            offset += p.numel()
        reference.step()
        reference.zero_grad(set_to_none=True)
    step_mode = "reference"
    if ddp is not None:
        ddp.finish()
        step_mode = ddp.step_mode
        ddp.close()
    return {"params": [p.detach().clone() for p in net.parameters()], "seen": seen, "mode": step_mode}


def worker(rank, agents, store_dir, out):
    torch.set_num_threads(1)
    local = [k for k, a in enumerate(agents) if a == agents[rank]]
    info = ringtrial.RankInfo(rank, len(agents), local_rank=local.index(rank), local_world_size=len(local),
                              agent_id=agents[rank])
    group = ringtrial.ProcessGroup(info, ringtrial.file_store(store_dir), rendezvous_timeout_s=60.0,
                                   name="ddp-" + os.path.basename(store_dir))
    results = {"backend": group.backend}
    for optimizer in OPTIMIZERS:
        for mode in ("reference", "sync", "cross"):
            results[optimizer, mode] = train(group, optimizer, mode)
    results["sgd", "needs_all_gradients"] = train(group, "sgd", "cross", needs_all_gradients=True)
    results["sgd", "float16"] = train(group, "sgd", "cross", compression="float16")
    group.barrier()
    torch.save(results, out)


def run_threads(world, fn):
    """fn(group) on `world` ranks, each a thread of this process meeting
    through an in-memory store; their results in rank order."""
    store = ringtrial.memory_store()
    results, errors = [None] * world, []

    def rank(r):
        try:
            group = ringtrial.ProcessGroup(ringtrial.RankInfo(r, world, agent_id=f"node-{r}"), store,
                                           backend="gloo", rendezvous_timeout_s=30.0)
            results[r] = fn(group)
        except BaseException as e:  # noqa: B036 - reported by the test thread
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if any(t.is_alive() for t in threads):
        raise AssertionError("a rank did not finish within 60 s")
    if errors:
        raise errors[0]
    return results


class CollectivesTest(unittest.TestCase):
    def test_numpy_tensors_and_addresses(self):
        def ranks(group):
            r = group.rank
            avg = numpy.full(5, r + 1.0, dtype=numpy.float32)
            group.allreduce(avg, ringtrial.ReduceOp.AVERAGE)
            t = torch.full((3,), float(r), dtype=torch.float64)
            group.allreduce(t)  # the tensor itself
            group.allreduce(t.numpy(), ringtrial.ReduceOp.MAX)  # a view of it
            raw = torch.full((4,), r + 2, dtype=torch.int32)
            group.allreduce(raw.data_ptr(), raw.numel(), ringtrial.DataType.INT32, ringtrial.ReduceOp.SUM)
            b = torch.full((2, 2), float(r + 7))
            group.broadcast(b, root=1)
            gathered = torch.zeros(2 * group.size, dtype=torch.int64)
            group.allgather(torch.tensor([r, 10 + r]), gathered)
            group.barrier(timeout_s=30.0)
            with self.assertRaisesRegex(ValueError, "not a contiguous"):
                group.allreduce(torch.zeros(4, 4).t())
            with self.assertRaisesRegex(TypeError, "float16"):
                group.allreduce(torch.zeros(4, dtype=torch.float16))
            with self.assertRaisesRegex(ValueError, "holds 3 elements"):
                group.allgather(torch.zeros(2), torch.zeros(3))
            return group.backend, avg, t, raw, b, gathered

        for backend, avg, t, raw, b, gathered in run_threads(2, ranks):
            self.assertEqual(backend, "gloo")
            self.assertEqual(avg.tolist(), [1.5] * 5)
            self.assertEqual(t.tolist(), [1.0] * 3)
            self.assertEqual(raw.tolist(), [5] * 4)
            self.assertEqual(b.tolist(), [[8.0, 8.0], [8.0, 8.0]])
            self.assertEqual(gathered.tolist(), [0, 10, 1, 11])

    def test_connect_in_local_mode(self):
        with tempfile.TemporaryDirectory() as tmp:
            ctx = ringtrial.Context.from_environment(["train.py", "--checkpoint-dir", tmp], {})
            group = ringtrial.ProcessGroup.connect(ctx)
            self.assertEqual((group.backend, group.rank, group.size), ("single", 0, 1))
            t = torch.arange(4, dtype=torch.float32)
            group.allreduce(t, ringtrial.ReduceOp.AVERAGE)
            self.assertEqual(t.tolist(), [0.0, 1.0, 2.0, 3.0])
            with self.assertRaisesRegex(ValueError, "timeout_s must be positive"):
                group.barrier(timeout_s=0)
            del group, ctx

    def test_priority_reducer_averages_every_gradient(self):
        def ranks(group):
            flat = torch.arange(3000, dtype=torch.float32) * (group.rank + 1)
            reducer = ringtrial.PriorityReducer(group, flat.data_ptr(), flat.numel(), [1000, 1500, 500],
                                                piece_bytes=1024, owner=flat)
            for i in (2, 1, 0):  # backward order
                reducer.mark_ready(i)
            for i in range(3):
                reducer.wait(i)
                reducer.release(i)
            with self.assertRaises(ringtrial.ReducerUsageError):
                reducer.wait(0)  # released: not marked any more
            pieces, totals = len(reducer.pieces), reducer.totals()
            reducer.close()
            return flat, pieces, totals

        for flat, pieces, totals in run_threads(2, ranks):
            self.assertTrue(torch.equal(flat, torch.arange(3000, dtype=torch.float32) * 1.5))
            self.assertEqual(pieces, 12)  # 256 floats a piece: 4 + 6 + 2
            self.assertEqual(totals["pieces"], 12)


class FallbackTest(unittest.TestCase):
    """The synchronous step and why, as the C++ module decides it."""

    def build(self, make, **options):
        return self.build_for(torch.nn.Sequential(torch.nn.Linear(300, 300), torch.nn.Linear(300, 2)), make,
                              **options)

    def build_for(self, net, make, **options):
        group = ringtrial.ProcessGroup(ringtrial.RankInfo(0, 1), None)
        self.assertEqual(group.backend, "single")
        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            ddp = ringtrial_ddp.DistributedModule(net, group, make, **options)
        return ddp, log.getvalue()

    def assertSynchronous(self, ddp, log, why):
        self.assertFalse(ddp.cross_step)
        self.assertEqual(ddp.step_mode, "synchronous: " + why)
        self.assertIn(f"[ring.trial] DistributedModule: synchronous: {why}; every gradient is averaged before the "
                      "optimizer steps", log)
        self.assertEqual(len(ddp.optimizers()), 1)

    def test_lbfgs(self):
        ddp, log = self.build(lambda p: torch.optim.LBFGS(p), overlap="cross")
        self.assertSynchronous(ddp, log, "the optimizer is not one that updates each parameter on its own")

    def test_compression_only_in_the_cross_step(self):
        ddp, log = self.build(lambda p: torch.optim.LBFGS(p), compression="bfloat16")
        self.assertIn("optimizer steps, without compression", log)
        with self.assertRaisesRegex(ringtrial.ConfigError, "compression must be one of none, float16, bfloat16"):
            self.build(lambda p: torch.optim.SGD(p, lr=0.1), compression="int8")

    def test_needs_all_gradients(self):
        ddp, log = self.build(lambda p: torch.optim.Adam(p), overlap="cross", needs_all_gradients=True)
        self.assertSynchronous(ddp, log, "the step needs every gradient before any update")

    def test_one_rank(self):
        ddp, log = self.build(lambda p: torch.optim.SGD(p, lr=0.1))
        self.assertSynchronous(ddp, log, "one rank")

    def test_cross_on_one_rank_when_asked(self):
        params = {}
        for mode in ("sync", "cross"):
            torch.manual_seed(5)
            net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
            ddp, log = self.build_for(net, lambda p: torch.optim.Adam(p, lr=0.1), overlap=mode, piece_bytes=64)
            self.assertEqual(ddp.cross_step, mode == "cross")
            for step in range(4):
                net(torch.randn(4, 8, generator=torch.Generator().manual_seed(step))).square().sum().backward()
                ddp.step()
            self.assertEqual(len(ddp.optimizers()), 2 if mode == "cross" else 1)  # applies the last update
            params[mode] = [p.detach().clone() for p in net.parameters()]
        self.assertIn("cross-step: 2 layers, 7 pieces", log)
        for a, b in zip(params["sync"], params["cross"]):
            self.assertTrue(torch.equal(a, b))

    def test_configured_and_bad_options(self):
        ddp, log = self.build(lambda p: torch.optim.SGD(p, lr=0.1), overlap="sync")
        self.assertEqual(ddp.step_mode, "synchronous (configured)")
        self.assertIn("DistributedModule: synchronous (configured); every gradient", log)
        with self.assertRaisesRegex(ringtrial.ConfigError, "overlap must be one of auto, sync, cross"):
            self.build(lambda p: torch.optim.SGD(p, lr=0.1), overlap="sometimes")
        with self.assertRaisesRegex(ringtrial.ConfigError, "returned no optimizer"):
            self.build(lambda p: None)

    def test_gradients_fit_in_one_piece(self):
        def ranks(group):
            ddp = ringtrial_ddp.DistributedModule(torch.nn.Linear(4, 2), group, lambda p: torch.optim.SGD(p, lr=0.1))
            ddp.close()
            return ddp.step_mode

        log = io.StringIO()  # sys.stderr is the process's: redirected around both ranks
        with contextlib.redirect_stderr(log):
            modes = run_threads(2, ranks)
        self.assertEqual(modes, ["synchronous: the gradients fit in one piece"] * 2)
        self.assertEqual(log.getvalue().count("DistributedModule: synchronous: the gradients fit in one piece"), 2)


class CrossStepInProcessTest(unittest.TestCase):
    def test_parameter_read_outside_its_module_raises(self):
        class Sneaky(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(16, 16)
                self.out = torch.nn.Linear(16, 2)

            def forward(self, x):  # fc's weight read without calling fc
                return self.out(torch.nn.functional.linear(x, self.fc.weight))

        def ranks(group):
            net = Sneaky()
            ddp = ringtrial_ddp.DistributedModule(net, group, lambda p: torch.optim.SGD(p, lr=0.1), piece_bytes=256)
            self.assertTrue(ddp.cross_step)
            net(torch.randn(3, 16)).sum().backward()
            ddp.step()
            with self.assertRaisesRegex(RuntimeError, r"fc\.weight was read before its update was applied"):
                net(torch.randn(3, 16)).sum().backward()
            return True

        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(run_threads(2, ranks), [True, True])


class CrossStepRanksTest(unittest.TestCase):
    """Every rank a process; results compared here."""

    def run_ranks(self, agents):
        with tempfile.TemporaryDirectory() as tmp:
            store = os.path.join(tmp, "store")
            os.mkdir(store)
            env = dict(os.environ, OMP_NUM_THREADS="1")
            procs = []
            for r in range(len(agents)):
                out = os.path.join(tmp, f"rank{r}.pt")
                procs.append((out, subprocess.Popen(
                    [sys.executable, "-B", __file__, "--worker", str(r), ",".join(agents), store, out],
                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
            logs = []
            try:
                for _, p in procs:
                    _, err = p.communicate(timeout=240)
                    logs.append(err)
            finally:
                for _, p in procs:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
            for r, (_, p) in enumerate(procs):
                self.assertEqual(p.returncode, 0, f"rank {r} failed:\n{logs[r]}")
            return [torch.load(out) for out, _ in procs], logs

    def check(self, agents, backend):
        results, logs = self.run_ranks(agents)
        self.assertIn("[ring.trial] DistributedModule: cross-step: 6 layers, ", logs[0])
        self.assertRegex(logs[0], r"cross-step: 6 layers, \d+ pieces sent as float16; each layer's update")
        self.assertIn("[ring.trial] DistributedModule: synchronous: the step needs every gradient before any "
                      "update; every gradient is averaged before the optimizer steps", logs[0])
        first = results[0]
        for r, res in enumerate(results):
            self.assertEqual(res["backend"], backend)
            for optimizer in OPTIMIZERS:
                ref, sync, cross = (res[optimizer, m] for m in ("reference", "sync", "cross"))
                self.assertEqual(sync["mode"], "synchronous (configured)")
                self.assertEqual(cross["mode"], "cross-step")
                # Training moved every parameter, the unused-in-places branch too.
                initial = ref["seen"][0][1]
                self.assertFalse(torch.equal(initial, ref["params"][1]), "fc1 did not train")
                for name, expected in (("sync", sync), ("cross", cross)):
                    for k, (a, b) in enumerate(zip(ref["params"], expected["params"])):
                        self.assertTrue(torch.equal(a, b), f"rank {r} {optimizer} {name}: parameter {k} differs")
                    # Each forward read the weights of every update before it.
                    self.assertEqual(len(expected["seen"]), 2 * STEPS)
                    for k, ((layer, a), (_, b)) in enumerate(zip(ref["seen"], expected["seen"])):
                        self.assertTrue(torch.equal(a, b), f"rank {r} {optimizer} {name}: forward {k // 2} read "
                                        f"stale {layer} weights")
                for a, b in zip(first[optimizer, "cross"]["params"], cross["params"]):
                    self.assertTrue(torch.equal(a, b), f"rank {r} {optimizer}: parameters differ from rank 0's")
            clipped = res["sgd", "needs_all_gradients"]
            self.assertEqual(clipped["mode"], "synchronous: the step needs every gradient before any update")
            for a, b in zip(res["sgd", "sync"]["params"], clipped["params"]):
                self.assertTrue(torch.equal(a, b))
            # 16-bit pieces: the same parameters on every rank, close to the
            # exact ones but not equal (the compression was applied).
            half = res["sgd", "float16"]
            self.assertEqual(half["mode"], "cross-step")
            exact = res["sgd", "sync"]["params"]
            self.assertFalse(all(torch.equal(a, b) for a, b in zip(exact, half["params"])))
            for k, (a, b) in enumerate(zip(exact, half["params"])):
                self.assertTrue(torch.allclose(a, b, rtol=0, atol=1e-3), f"rank {r} float16: parameter {k} "
                                f"off by {(a - b).abs().max().item()}")
            for a, b in zip(first["sgd", "float16"]["params"], half["params"]):
                self.assertTrue(torch.equal(a, b), f"rank {r} float16: parameters differ from rank 0's")

    def test_two_ranks_over_gloo(self):
        self.check(["node-0", "node-1"], "gloo")

    def test_four_ranks_on_two_agents(self):
        self.check(["a", "a", "b", "b"], "hierarchical")

    def test_four_ranks_on_one_agent(self):
        self.check(["a", "a", "a", "a"], "hierarchical")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4], sys.argv[5])
    else:
        unittest.main()
