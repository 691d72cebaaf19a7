"""Data-parallel training of a torch.nn.Module over a ringtrial.ProcessGroup,
with the optimizer step of one iteration overlapped with the next forward
pass (cross-step overlap). The Python twin of the C++ DistributedModule
(trial_runtime/torch/include/ring/trial/torch/distributed_module.h):

    group = ringtrial.ProcessGroup.connect(ctx)
    ddp = ringtrial_ddp.DistributedModule(
        model, group, lambda params: torch.optim.SGD(params, lr=0.01, momentum=0.9))
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        ddp.step()     # returns at once; the updates land while the next forward runs
    ddp.finish()       # every update applied: before evaluating, saving or reading parameters

Gradients. A hook on every trainable parameter copies its gradient into one
flat float32 buffer (registration order) and marks it ready in a
ringtrial.PriorityReducer, whose background thread averages the buffer over
the ranks in pieces of about piece_bytes while backward is still running,
the first layers' pieces ahead of the later ones'. step() marks the
parameters that got no gradient (unused in this forward) as zero, so every
rank joins every piece.

Cross step. The optimizer factory is called once per layer (the parameters
one submodule owns directly), and a forward pre-hook on that submodule
waits for the layer's pieces and steps its optimizer with the average as
.grad just before the next forward reads the layer. The result is bit for
bit that of the synchronous step (every gradient averaged, then one
optimizer over every parameter) for optimizers that update each parameter
from its own gradient and state: SGD, Adam, AdamW, Adagrad, RMSprop.

Synchronous step. Other optimizers, needs_all_gradients=True (the step reads
every gradient before any update, e.g. global-norm clipping), and
overlap="sync" take the synchronous step, and so do, unless overlap="cross",
a group of one rank and gradients that fit in one piece (nothing to
overlap): step() waits for every average, writes it into .grad and steps
one optimizer over all parameters. The trial log (stderr) says which mode
was chosen and why.

Requirements: contiguous float32 CPU parameters, the same architecture on
every rank (checked against the root's), one backward() per step(), and in
cross-step mode every parameter read inside the forward of the submodule
that owns it (true of torch.nn layers); a gradient for a layer whose update
is still pending raises, since that forward read stale parameters. Use the
module from one thread; between backward() and the update the process group
belongs to the reducer.
"""

import functools
import sys
import zlib

import torch

import ringtrial

# Optimizers whose update of a parameter reads only that parameter's
# gradient and state (the C++ module's list).
PER_PARAMETER_OPTIMIZERS = (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.Adagrad,
                            torch.optim.RMSprop)
OVERLAP_MODES = ("auto", "sync", "cross")
COMPRESSIONS = {"none": ringtrial.GradientCompression.NONE, "float16": ringtrial.GradientCompression.FLOAT16,
                "bfloat16": ringtrial.GradientCompression.BFLOAT16}

_BUFFER_TYPES = (torch.float32, torch.float64, torch.int32, torch.int64)


def _log(message):
    print("[ring.trial] DistributedModule: " + message, file=sys.stderr, flush=True)


def group_by_module(names):
    """Parameter indices grouped by the submodule that owns them (the name up
    to its last dot), in registration order of each group's first parameter."""
    groups = {}
    for i, name in enumerate(names):
        groups.setdefault(name.rpartition(".")[0], []).append(i)
    return list(groups.values())


class _Layer:
    __slots__ = ("params", "optimizer", "pending")

    def __init__(self, params, optimizer):
        self.params = params
        self.optimizer = optimizer
        self.pending = False  # stepped, update not applied yet


class DistributedModule:
    """See the module docstring. `optimizer_factory(params)` builds an
    optimizer over a list of parameters; overlap: "auto" overlaps steps when
    it is worth it (not on one rank, nor when every gradient fits in one
    piece), "cross" always does unless the optimizer or needs_all_gradients
    rules it out, "sync" never does. compression: "none", or "float16" or
    "bfloat16" for cross-step pieces sent as 16-bit floats with error
    feedback (not exact; see ringtrial.GradientCompression; the synchronous
    step never compresses). root: whose parameters and buffers every rank
    starts from; timeout_s: per collective."""

    def __init__(self, module, group, optimizer_factory, overlap="auto", piece_bytes=1 << 20,
                 needs_all_gradients=False, compression="none", root=0, timeout_s=300.0):
        if overlap not in OVERLAP_MODES:
            raise ringtrial.ConfigError(f"DistributedModule: overlap must be one of {', '.join(OVERLAP_MODES)}, "
                                        f"got {overlap!r}")
        if not isinstance(piece_bytes, int) or piece_bytes < 1:
            raise ringtrial.ConfigError(
                f"DistributedModule: piece_bytes must be a positive integer, got {piece_bytes!r}")
        if compression not in COMPRESSIONS:
            raise ringtrial.ConfigError(f"DistributedModule: compression must be one of {', '.join(COMPRESSIONS)}, "
                                        f"got {compression!r}")
        if not 0 <= root < group.size:
            raise ringtrial.ConfigError(f"DistributedModule: root {root} is not a rank of a group of {group.size}")
        self.module = module
        self._overlap = overlap
        self._group = group
        self._root = root
        self._timeout_s = timeout_s
        self._needs_all_gradients = bool(needs_all_gradients)
        self._piece_bytes = piece_bytes

        self._names, self._params = [], []
        for name, p in module.named_parameters():
            if not p.requires_grad:
                continue
            if p.dtype != torch.float32 or p.device.type != "cpu" or not p.is_contiguous():
                raise ringtrial.ConfigError(
                    f"DistributedModule: parameter {name} is {p.dtype} on {p.device}"
                    f"{'' if p.is_contiguous() else ' (not contiguous)'}; only contiguous float32 CPU parameters "
                    "are supported")
            self._names.append(name)
            self._params.append(p)
        if not self._params:
            raise ringtrial.ConfigError("DistributedModule: the module has no trainable parameters")
        sizes = [p.numel() for p in self._params]
        self._flat = torch.zeros(sum(sizes), dtype=torch.float32)
        self._grads, offset = [], 0  # views of _flat, one per parameter
        for p, n in zip(self._params, sizes):
            self._grads.append(self._flat[offset:offset + n].view(p.shape))
            offset += n
        self._marked = [False] * len(self._params)  # got its gradient in this backward
        self._optimizer = None  # synchronous step
        self._layers = []       # cross step
        self._pending = 0       # layers whose update is not applied yet
        self._hooks = []

        self._check_same_architecture()
        self.broadcast_parameters()

        everything = optimizer_factory(list(self._params))
        if everything is None:
            raise ringtrial.ConfigError("DistributedModule: the optimizer factory returned no optimizer")
        obstacle = self._obstacle(everything)
        cross = overlap != "sync" and not obstacle
        # Only the cross step compresses: the synchronous one is exact.
        self._reducer = ringtrial.PriorityReducer(
            group, self._flat, sizes, piece_bytes=piece_bytes, timeout_s=timeout_s,
            compression=COMPRESSIONS[compression] if cross else ringtrial.GradientCompression.NONE)
        if not cross:
            self._optimizer = everything
            self.step_mode = "synchronous (configured)" if overlap == "sync" else "synchronous: " + obstacle
            _log(self.step_mode + "; every gradient is averaged before the optimizer steps" +
                 (", without compression" if compression != "none" else ""))
        else:
            del everything
            self._build_layers(optimizer_factory)
            self.step_mode = "cross-step"
            sent = f" sent as {compression}" if compression != "none" else ""
            _log(f"cross-step: {len(self._layers)} layers, {len(self._reducer.pieces)} pieces{sent}; each "
                 "layer's update lands as the next forward needs it")
        for i, p in enumerate(self._params):
            self._hooks.append(p.register_hook(functools.partial(self._on_gradient, i)))

    # --- setup ---------------------------------------------------------------

    def _obstacle(self, optimizer):
        """Why step() cannot overlap steps, or "" when it can."""
        if self._needs_all_gradients:
            return "the step needs every gradient before any update"
        if not isinstance(optimizer, PER_PARAMETER_OPTIMIZERS):
            return "the optimizer is not one that updates each parameter on its own"
        if self._overlap == "cross":
            return ""
        if self._group.size == 1:
            return "one rank"
        if self._flat.numel() * 4 <= self._piece_bytes:
            return "the gradients fit in one piece"
        return ""

    def _build_layers(self, optimizer_factory):
        self._layer_of = [0] * len(self._params)
        for members in group_by_module(self._names):
            optimizer = optimizer_factory([self._params[i] for i in members])
            if optimizer is None:
                raise ringtrial.ConfigError(
                    f"DistributedModule: the optimizer factory returned no optimizer for {self._names[members[0]]}")
            for i in members:
                self._layer_of[i] = len(self._layers)
            self._layers.append(_Layer(members, optimizer))
        # Every submodule that owns parameters directly (tied ones included)
        # waits, before its forward, for the layers those parameters are in.
        layer_of_param = {id(p): self._layer_of[i] for i, p in enumerate(self._params)}
        for sub in self.module.modules():
            layers = sorted({layer_of_param[id(p)] for p in sub._parameters.values()
                             if p is not None and id(p) in layer_of_param})
            if layers:
                self._hooks.append(sub.register_forward_pre_hook(functools.partial(self._before_forward, layers)))

    def _check_same_architecture(self):
        digest = zlib.crc32(repr([tuple(p.shape) for p in self._params]).encode()) >> 1
        mine = torch.tensor([len(self._params), self._flat.numel(), digest], dtype=torch.int64)
        theirs = mine.clone()
        self._group.broadcast(theirs, root=self._root, timeout_s=self._timeout_s)
        differs = not torch.equal(mine, theirs)
        differing = torch.tensor([1 if differs else 0], dtype=torch.int64)
        self._group.allreduce(differing, ringtrial.ReduceOp.SUM, timeout_s=self._timeout_s)
        if differing.item() == 0:
            return
        if differs:
            m, r = mine.tolist(), theirs.tolist()
            shapes = " (shapes differ)" if m[:2] == r[:2] else ""
            raise ringtrial.ConfigError(
                f"DistributedModule: rank {self._group.rank} has {m[0]} trainable parameters with {m[1]} elements, "
                f"rank {self._root} has {r[0]} with {r[1]}{shapes}: every rank must build the same model")
        raise ringtrial.ConfigError(
            f"DistributedModule: {differing.item()} rank(s) built a model whose parameters differ from rank "
            f"{self._root}'s: every rank must build the same model")

    def broadcast_parameters(self):
        """The root's parameters and buffers to every rank (done by the
        constructor; again e.g. after the root alone changed them). Not
        between backward() and the update: call finish() first."""
        if any(self._marked) or any(layer.pending for layer in self._layers):
            raise ringtrial.ReducerUsageError("DistributedModule: broadcast_parameters() while a step is in flight; "
                                              "call finish() first")
        with torch.no_grad():
            packed = torch.cat([p.detach().reshape(-1) for p in self._params])
            self._group.broadcast(packed, root=self._root, timeout_s=self._timeout_s)
            offset = 0
            for p in self._params:
                p.copy_(packed[offset:offset + p.numel()].view(p.shape))
                offset += p.numel()
            for name, b in self.module.named_buffers():
                if b is None or b.numel() == 0:
                    continue
                if not b.is_contiguous() or b.device.type != "cpu":
                    raise ringtrial.ConfigError(f"DistributedModule: buffer {name} is not a contiguous CPU tensor")
                if b.dtype not in _BUFFER_TYPES:
                    raise ringtrial.ConfigError(
                        f"DistributedModule: buffer {name} has type {b.dtype}; only float32, float64, int32 and "
                        "int64 buffers can be broadcast")
                self._group.broadcast(b, root=self._root, timeout_s=self._timeout_s)

    # --- gradients and updates -------------------------------------------------

    def _on_gradient(self, i, grad):
        if grad.is_sparse:
            raise ringtrial.ConfigError(f"DistributedModule: parameter {self._names[i]} got a sparse gradient")
        if self._layers and self._layers[self._layer_of[i]].pending:
            raise ringtrial.ReducerUsageError(
                f"DistributedModule: parameter {self._names[i]} was read before its update was applied (outside "
                "a call of the module that owns it, e.g. by another module or through .forward()); call the "
                "owning module, or use overlap=\"sync\"")
        if self._marked[i]:
            raise ringtrial.ReducerUsageError(f"DistributedModule: parameter {self._names[i]} got gradients from "
                                              "two backward passes without step()")
        self._grads[i].copy_(grad)
        self._marked[i] = True
        self._reducer.mark_ready(i)

    def _ensure(self, l):
        """Layer l's update of the last step applied."""
        layer = self._layers[l]
        if not layer.pending:
            return
        for i in layer.params:
            self._reducer.wait(i)
        with torch.no_grad():
            for i in layer.params:
                self._params[i].grad = self._grads[i]
            layer.optimizer.step()
            # Not left pointing into the flat buffer: the next backward
            # would accumulate into it.
            for i in layer.params:
                self._params[i].grad = None
        for i in layer.params:
            self._reducer.release(i)
        layer.pending = False
        self._pending -= 1

    def _before_forward(self, layers, module, inputs):
        if self._pending:
            for l in layers:
                self._ensure(l)

    def step(self):
        """After backward(): averages the gradients and applies the
        optimizer, at once (synchronous) or layer by layer as the next forward
        needs it (cross step). CollectiveError when a piece failed or timed
        out (the group is unusable after that)."""
        if self._layers:
            for i in range(len(self._params)):
                if self._marked[i]:
                    continue  # unused in this forward, or no backward at all: counts as zero
                self._ensure(self._layer_of[i])
                self._grads[i].zero_()
                self._reducer.mark_ready(i)
            self._marked = [False] * len(self._params)
            for layer in self._layers:
                layer.pending = True
            self._pending = len(self._layers)
            return
        for i in range(len(self._params)):
            if not self._marked[i]:
                self._grads[i].zero_()
                self._reducer.mark_ready(i)
        with torch.no_grad():
            for i, p in enumerate(self._params):
                self._reducer.wait(i)
                if p.grad is not None and p.grad.shape == p.shape and not p.grad.is_sparse:
                    p.grad.copy_(self._grads[i])
                else:
                    p.grad = self._grads[i].clone()
                self._reducer.release(i)
        self._marked = [False] * len(self._params)
        self._optimizer.step()

    def finish(self):
        """Every update of the last step() applied (a no-op in the
        synchronous step)."""
        for l in range(len(self._layers)):
            self._ensure(l)

    @property
    def cross_step(self):
        return bool(self._layers)

    def optimizers(self):
        """The optimizers step() applies: one, or one per layer in
        registration order (e.g. to change the learning rate). Applies the
        pending updates first."""
        if self._layers:
            self.finish()
            return [layer.optimizer for layer in self._layers]
        return [self._optimizer]

    def totals(self):
        """The reducer's totals: pieces, preemptions, agree_ms, reduce_ms, wait_ms."""
        return self._reducer.totals()

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def close(self):
        """Applies the pending updates, removes the hooks and stops the
        reducer's thread; the group may then serve another module."""
        self.finish()
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
        self._reducer.close()
