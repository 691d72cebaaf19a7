"""ringtrial_torch: a PyTorch state checkpointed in the background comes
back bit for bit (every dtype, shapes, empty tensors, nested structure and
plain values), holds the state of the moment save_async was called while
training changes it, and verifies on resume like any checkpoint."""
import copy
import os
import tempfile
import unittest

import torch

import ringtrial
import ringtrial_torch


class RingtrialTorchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.checkpoints = os.path.join(self.dir.name, "checkpoints")

    def tearDown(self):
        self.dir.cleanup()

    def context(self, *args):
        return ringtrial.Context.from_environment(["train.py", "--checkpoint-dir", self.checkpoints, *args], {})

    def state(self):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        model(torch.randn(5, 8)).sum().backward()
        opt.step()
        return {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "bf16": torch.randn(7, 3).to(torch.bfloat16),
            "ints": torch.arange(-5, 5, dtype=torch.int64).reshape(2, 5),
            "flags": torch.tensor([True, False, True]),
            "empty": torch.empty(0, 3),
            "strided": torch.randn(4, 6).t(),
            "epoch": 3,
            "pair": (torch.tensor(2.5), "label"),
        }

    def assertSameState(self, a, b):
        if isinstance(a, torch.Tensor):
            self.assertIsInstance(b, torch.Tensor)
            self.assertEqual((a.dtype, tuple(a.shape)), (b.dtype, tuple(b.shape)))
            self.assertTrue(torch.equal(a, b))
        elif isinstance(a, dict):
            self.assertEqual(list(a.keys()), list(b.keys()))
            for k in a:
                self.assertSameState(a[k], b[k])
        elif isinstance(a, (list, tuple)):
            self.assertEqual((type(a), len(a)), (type(b), len(b)))
            for x, y in zip(a, b):
                self.assertSameState(x, y)
        else:
            self.assertEqual(a, b)

    def test_the_state_comes_back_bit_for_bit_as_it_was_at_the_call(self):
        ctx = self.context()
        state = self.state()
        expected = copy.deepcopy(state)
        ringtrial_torch.save_async(ctx, 40, state, {"epoch": 3})
        for t in state["model"].values():  # training goes on at once
            t.add_(1.0)
        state["ints"].zero_()
        uuid = ctx.checkpoints.wait()
        path = os.path.join(self.checkpoints, uuid)
        info = self.context("--resume", path).checkpoints.latest_verified()
        self.assertEqual((info.batches, info.metadata["epoch"]), (40, 3))
        loaded = ringtrial_torch.load(info.path)
        self.assertSameState(expected, loaded)
        # As torch.save and torch.load would give it back.
        with tempfile.TemporaryFile() as f:
            torch.save(expected, f)
            f.seek(0)
            self.assertSameState(torch.load(f), loaded)

    def test_a_resumed_model_trains_on_identically(self):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data = torch.randn(16, 4)

        def step(m, o):
            o.zero_grad()
            m(data).pow(2).mean().backward()
            o.step()

        step(model, opt)
        ctx = self.context()
        ringtrial_torch.save_async(ctx, 1, {"model": model.state_dict(), "optimizer": opt.state_dict()})
        uuid = ctx.checkpoints.wait()
        state = ringtrial_torch.load(os.path.join(self.checkpoints, uuid))
        resumed = torch.nn.Linear(4, 1)
        resumed_opt = torch.optim.SGD(resumed.parameters(), lr=0.1, momentum=0.9)
        resumed.load_state_dict(state["model"])
        resumed_opt.load_state_dict(state["optimizer"])
        for _ in range(3):
            step(model, opt)
            step(resumed, resumed_opt)
        self.assertTrue(torch.equal(model.weight, resumed.weight))
        self.assertTrue(torch.equal(model.bias, resumed.bias))


if __name__ == "__main__":
    unittest.main()
