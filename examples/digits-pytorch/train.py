"""digits-pytorch: a plain PyTorch DistributedDataParallel trial.

A small CNN learns scikit-learn's handwritten digits (8x8 images). The process
group comes from the torchrun environment the agent sets (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT; `init_process_group("gloo")` with env://); the
ringtrial module (the trial runtime's Python bindings) gives the
hyperparameters, the searcher's operations, metrics, checkpoints and
preemption. Without a master (no RING_MASTER_URL) it runs alone:

    PYTHONPATH=build/python /usr/bin/python3 train.py --hparam learning_rate=0.05 --batches 300

Exit codes: 0 trained (or stopped when asked, after checkpointing), 2 bad
hyperparameters (reported to the searcher), configuration or data, 3
diverged, 4 other errors (e.g. a corrupted checkpoint), 5 the master ended
this allocation or stayed unreachable.
"""

import gc
import gzip
import hashlib
import math
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler

try:
    import ringtrial
except ImportError as error:
    print(f"digits-pytorch: cannot import ringtrial ({error}): submit the model folder the build stages "
          "at build/examples/digits-pytorch/model, or put the module's folder on PYTHONPATH", file=sys.stderr)
    sys.exit(2)

DEFAULT_DATA = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
RECORDS, PIXELS = 1797, 64
METRICS = ("validation_accuracy", "validation_error", "validation_loss")
STATE_FILE = "state.pt"


class DataError(Exception):
    pass


class Diverged(Exception):
    pass


def load_digits(path):
    """(images float32 [N,1,8,8] scaled to 0..1, labels int64 [N]), checked strictly."""
    try:
        with gzip.open(path, "rt") as f:
            lines = f.read().splitlines()
    except OSError as error:
        hint = " (Debian: python3-sklearn)" if path == DEFAULT_DATA else ""
        raise DataError(f"{path}: cannot read the digits data: {error}{hint}") from error
    if len(lines) != RECORDS:
        raise DataError(f"{path}: {len(lines)} rows, expected {RECORDS}")
    rows = []
    for number, line in enumerate(lines, 1):
        fields = line.split(",")
        if len(fields) != PIXELS + 1:
            raise DataError(f"{path}:{number}: {len(fields)} fields, expected {PIXELS} pixels and a label")
        try:
            values = [float(v) for v in fields]
        except ValueError as error:
            raise DataError(f"{path}:{number}: {error}") from error
        if any(v != int(v) or not 0 <= v <= 16 for v in values[:PIXELS]):
            raise DataError(f"{path}:{number}: pixels must be whole numbers from 0 to 16")
        if values[PIXELS] != int(values[PIXELS]) or not 0 <= values[PIXELS] <= 9:
            raise DataError(f"{path}:{number}: the label must be a digit 0..9, got {fields[PIXELS]}")
        rows.append(values)
    data = torch.tensor(rows, dtype=torch.float64)
    return (data[:, :PIXELS] / 16).float().reshape(-1, 1, 8, 8), data[:, PIXELS].long()


class Net(torch.nn.Module):
    """conv 1->16 3x3, relu, conv 16->32 3x3, relu, 2x2 max pool, dropout, linear 512->10."""

    def __init__(self, dropout):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.dropout = torch.nn.Dropout(dropout)
        self.fc = torch.nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return self.fc(self.dropout(torch.flatten(x, 1)))


def read_hparams(ctx):
    """The hyperparameters, checked; raises ringtrial.HparamError saying what to fix."""
    def number(name, default, low, high=math.inf, integer=False, low_open=False):
        value = ctx.hparam(name) if default is None else ctx.hparam(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and value != int(value)):
            raise ringtrial.HparamError(f"{name} must be {'an integer' if integer else 'a number'}, got {value!r}")
        if not (low < value if low_open else low <= value) or not value < high or not math.isfinite(value):
            raise ringtrial.HparamError(f"{name} must be {'above' if low_open else 'at least'} {low}"
                                        f"{'' if high == math.inf else f' and below {high}'}, got {value}")
        return int(value) if integer else float(value)

    h = {
        "learning_rate": number("learning_rate", None, 0, low_open=True),
        "batch_size": number("batch_size", 32, 1, integer=True),  # images per rank per step
        "momentum": number("momentum", 0.9, 0, 1),
        "weight_decay": number("weight_decay", 0.0, 0),
        "dropout": number("dropout", 0.0, 0, 1),
        "report_every": number("report_every", 10, 1, integer=True),
        "validate_every": number("validate_every", 0, 0, integer=True),  # 0: end of operations, min_validation_period
        "checkpoint_every": number("checkpoint_every", 0, 0, integer=True),  # 0: min_checkpoint_period, end, stop
        "validation_size": number("validation_size", 300, 1, RECORDS - 1, integer=True),
        "split_seed": number("split_seed", 0, 0, integer=True),  # the same split for every trial
        "threads": number("threads", 1, 1, integer=True),  # torch threads per rank
        "batch_sleep_ms": number("batch_sleep_ms", 0, 0, integer=True),  # slows training; results unchanged
    }
    h["data_path"] = ctx.hparam("data_path", os.environ.get("RING_DIGITS_PATH", DEFAULT_DATA))
    return h


def all_sum(values):
    """The element-wise sums of `values` over the ranks (float64)."""
    t = torch.tensor(values, dtype=torch.float64)
    if dist.is_initialized():
        dist.all_reduce(t)
    return t.tolist()


def step_seed(seed, rank, batch):
    """The dropout stream of one rank at one step: nothing to checkpoint, and a
    resumed run draws what an uninterrupted one would."""
    digest = hashlib.blake2b(f"{seed}/{rank}/{batch}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class Trainer:
    """One rank's part of the trial; the loop state is identical on every rank."""

    def __init__(self, ctx, h, images, labels):
        self.ctx, self.h = ctx, h
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.world = dist.get_world_size() if dist.is_initialized() else 1
        split = torch.randperm(len(labels), generator=torch.Generator().manual_seed(h["split_seed"]))
        validation, train = split[:h["validation_size"]], split[h["validation_size"]:]
        self.train_x, self.train_y = images[train], labels[train]
        self.val_x, self.val_y = images[validation], labels[validation]
        if h["batch_size"] * self.world > len(train):
            raise ringtrial.HparamError(f"batch_size {h['batch_size']} x {self.world} ranks exceeds the "
                                        f"{len(train)} training images")
        torch.manual_seed(ctx.seed)  # the initial weights (DDP starts every rank from rank 0's anyway)
        self.net = Net(h["dropout"])
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=h["learning_rate"], momentum=h["momentum"],
                                         weight_decay=h["weight_decay"])
        self.sampler = DistributedSampler(self.train_y, num_replicas=self.world, rank=self.rank, shuffle=True,
                                          seed=ctx.seed % 2**62, drop_last=True)
        self.steps_per_epoch = len(self.sampler) // h["batch_size"]
        self.order_epoch, self.order = None, []
        # step: batches trained; epoch/position: the sampler's; loss_*: since the last report.
        self.loop = {"step": 0, "epoch": 0, "position": 0, "loss_sum": 0.0, "loss_records": 0.0,
                     "validated_at": -1}
        self.saved_at = -1
        self.last_validation = None  # (batches, metrics)
        self.resume()
        self.model = DistributedDataParallel(self.net) if dist.is_initialized() else self.net

    def resume(self):
        # Every rank reads the checkpoint (shared storage) after checking its files.
        info = self.ctx.checkpoints.latest_verified()
        if info is None:
            return
        state = torch.load(os.path.join(info.path, STATE_FILE), map_location="cpu")
        self.net.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.loop = dict(state["loop"])
        if self.loop["step"] != info.batches:
            raise ringtrial.CheckpointError(f"checkpoint {info.uuid} is registered at {info.batches} batches "
                                            f"but holds step {self.loop['step']}")
        self.saved_at = self.loop["step"]
        print(f"digits-pytorch: rank {self.rank} resumed from checkpoint {info.uuid} at batch "
              f"{self.loop['step']} (epoch {self.loop['epoch']})", flush=True)

    def run(self):
        print(f"digits-pytorch: rank {self.rank} of {self.world} (gloo), trial {self.ctx.trial_id}, seed "
              f"{self.ctx.seed}, {len(self.train_y)} train / {len(self.val_y)} validation images, "
              f"{self.steps_per_epoch} steps per epoch, learning_rate {self.h['learning_rate']}, batch_size "
              f"{self.h['batch_size']} per rank", flush=True)
        metric = self.ctx.searcher.metric_name
        first = True
        for op in self.ctx.searcher.operations():
            if op.length < self.loop["step"]:
                raise RuntimeError(f"the searcher asked for training to {op.length} batches, but this trial "
                                   f"has already trained {self.loop['step']}")
            # A stop asked for while the last operation ended: do not start the next one.
            if not first and self.loop["step"] < op.length and all_sum([self.local_stop()])[0] > 0:
                return self.stop()
            first = False
            if self.train_to(op.length):
                return self.stop()
            # Resumed exactly at the end of an operation not completed yet: validate again (same values).
            if self.last_validation is None or self.last_validation[0] != op.length:
                self.validate(op.length)
            if self.saved_at != self.loop["step"] and self.keeps_final_state():
                self.save()
            op.report_completed(self.last_validation[1][metric])
        if self.saved_at != self.loop["step"] and self.keeps_final_state():
            self.save()
        self.finish()
        return 0

    def batch_indices(self):
        if self.loop["position"] >= self.steps_per_epoch:
            self.loop["epoch"] += 1
            self.loop["position"] = 0
        if self.order_epoch != self.loop["epoch"]:
            self.sampler.set_epoch(self.loop["epoch"])
            self.order, self.order_epoch = list(self.sampler), self.loop["epoch"]
        b = self.h["batch_size"]
        start = self.loop["position"] * b
        self.loop["position"] += 1
        return torch.tensor(self.order[start:start + b], dtype=torch.long)

    def train_to(self, length):
        """Trains until `length` batches; True when asked to stop on the way."""
        while self.loop["step"] < length:
            self.loop["step"] += 1
            batch = self.loop["step"]
            indices = self.batch_indices()
            self.model.train()
            if self.h["dropout"] > 0:
                torch.manual_seed(step_seed(self.ctx.seed, self.rank, batch))
            self.optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(self.model(self.train_x[indices]), self.train_y[indices])
            loss.backward()  # DDP averages the gradients over the ranks here
            self.optimizer.step()
            if self.h["batch_sleep_ms"] > 0:
                time.sleep(self.h["batch_sleep_ms"] / 1000)
            # One small allreduce a step: the global training loss, and whether
            # any rank was asked to stop (only the chief hears the master; every
            # rank hears its own SIGTERM), so that every rank stops at the same step.
            loss_sum, records, stop = all_sum([loss.item() * len(indices), len(indices), self.local_stop()])
            if not math.isfinite(loss_sum) or loss_sum / records > 1e6:
                raise Diverged(f"training diverged at batch {batch} (loss {loss_sum / records}); "
                               "lower learning_rate")
            self.loop["loss_sum"] += loss_sum
            self.loop["loss_records"] += records
            if batch % self.h["report_every"] == 0 or batch == length:
                mean = self.loop["loss_sum"] / self.loop["loss_records"]
                if self.ctx.is_chief:
                    print(f"digits-pytorch: batch {batch}/{length} epoch {self.loop['epoch']} loss {mean:.6f}",
                          flush=True)
                self.ctx.report_training_metrics(batch, {"loss": mean})
                self.loop["loss_sum"], self.loop["loss_records"] = 0.0, 0.0
            every = self.h["validate_every"]
            if self.loop["validated_at"] != batch and (
                    batch == length or self.ctx.validation_due(batch) or (every > 0 and batch % every == 0)):
                self.validate(batch)
            every = self.h["checkpoint_every"]
            if stop > 0 or self.ctx.checkpoints.due(batch) or (every > 0 and batch % every == 0):
                self.save()
            if stop > 0 and batch < length:
                return True
        return False

    def validate(self, batches):
        """Accuracy and loss over every validation image: each rank evaluates a
        contiguous shard and the sums are added up over the ranks."""
        n = len(self.val_y)
        begin, end = n * self.rank // self.world, n * (self.rank + 1) // self.world
        self.net.eval()
        with torch.no_grad():
            logits = self.net(self.val_x[begin:end])
            labels = self.val_y[begin:end]
            loss = F.cross_entropy(logits, labels, reduction="sum").item()
            correct = logits.argmax(1).eq(labels).sum().item()
        loss, correct, records = all_sum([loss, correct, end - begin])
        accuracy = correct / records
        metrics = {"validation_accuracy": accuracy, "validation_error": 1 - accuracy,
                   "validation_loss": loss / records}
        if self.ctx.is_chief:
            print(f"digits-pytorch: batch {batches} validation_accuracy {accuracy:.4f} ({int(correct)}/"
                  f"{int(records)}) validation_loss {metrics['validation_loss']:.6f}", flush=True)
        self.ctx.report_validation_metrics(batches, metrics)
        self.loop["validated_at"] = batches
        self.last_validation = (batches, metrics)

    def save(self):
        """The chief writes model, optimizer and loop (with the sampler's position)."""
        self.saved_at = self.loop["step"]
        if not self.ctx.is_chief:
            return
        state = {"model": self.net.state_dict(), "optimizer": self.optimizer.state_dict(), "loop": dict(self.loop)}
        metadata = {"loop": dict(self.loop), "world_size": self.world, "batch_size": self.h["batch_size"]}
        self.ctx.checkpoints.save(self.loop["step"], lambda d: torch.save(state, os.path.join(d, STATE_FILE)),
                                  metadata)

    def keeps_final_state(self):
        """The end of an operation is always checkpointed under a master (a
        promoted or restarted trial resumes there); locally only when asked."""
        return not self.ctx.is_local or self.h["checkpoint_every"] > 0

    def local_stop(self):
        return 1.0 if self.ctx.preempt.should_preempt() else 0.0

    def stop(self):
        """Asked to stop (pause, preemption): checkpoint, acknowledge, exit 0."""
        if self.saved_at != self.loop["step"]:
            self.save()
        print(f"digits-pytorch: asked to stop; checkpointed at batch {self.loop['step']}", flush=True)
        self.finish()
        self.ctx.preempt.acknowledge()
        if dist.is_initialized():
            dist.barrier()  # no rank exits before the chief's checkpoint and acknowledgement
        return 0

    def finish(self):
        digest = hashlib.sha256()
        for _, p in sorted(self.net.state_dict().items()):
            digest.update(p.detach().contiguous().numpy().tobytes())
        print(f"digits-pytorch: rank {self.rank} done at batch {self.loop['step']}; parameters "
              f"{digest.hexdigest()[:16]}", flush=True)
        if not self.ctx.flush():
            print("digits-pytorch: warning: not every metric report was acknowledged by the master",
                  file=sys.stderr, flush=True)


def run(ctx):
    metric = ctx.searcher.metric_name
    if metric not in METRICS:
        raise ringtrial.ConfigError(f"this trial reports {', '.join(METRICS)}, not {metric!r}: "
                                    "set searcher.metric to one of them")
    try:
        h = read_hparams(ctx)
    except ringtrial.HparamError as error:
        ctx.searcher.report_invalid_hparams(str(error))  # the searcher replaces this trial
        raise
    torch.set_num_threads(h["threads"])
    images, labels = load_digits(h["data_path"])  # before the rendezvous: a missing file fails at once
    if ctx.world_size > 1 or "MASTER_ADDR" in os.environ:
        dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
        if (dist.get_rank(), dist.get_world_size()) != (ctx.rank, ctx.world_size):
            raise ringtrial.ConfigError(f"torch.distributed says rank {dist.get_rank()} of "
                                        f"{dist.get_world_size()}, the trial runtime {ctx.rank} of {ctx.world_size}")
    trainer = None
    try:
        trainer = Trainer(ctx, h, images, labels)
        return trainer.run()
    finally:
        if trainer is not None:
            # The trainer's DDP must go before the group (examples/torchrun-script
            # says why). Drop it here: when run() raised, the traceback still
            # holds the trainer.
            trainer.model = None
        if dist.is_initialized():
            gc.collect()  # should a reference cycle still keep it
            dist.destroy_process_group()


def fail(code, what, error):
    print(f"digits-pytorch: {what}: {error}", file=sys.stderr, flush=True)
    return code


def main():
    try:
        ctx = ringtrial.Context.from_environment()
        return run(ctx)
    except (ringtrial.AllocationEndedError, ringtrial.MasterUnreachableError) as error:
        return fail(5, "stopping", error)
    except ringtrial.CheckpointError as error:
        return fail(4, "error", error)
    except (ringtrial.TrialError, DataError) as error:
        return fail(2, "error", error)
    except Diverged as error:
        return fail(3, "error", error)
    except Exception:  # noqa: BLE001 - any other failure: its traceback, and exit 4
        traceback.print_exc()
        return 4


if __name__ == "__main__":
    sys.exit(main())
