"""Checkpoints of PyTorch state that stall training no longer than copying
it: save_async() clones every tensor of a state (nested dicts, lists and
tuples of tensors and other picklable values: a model's and an optimizer's
state_dict) into memory of its own, the one copy any snapshot needs, and
hands the clones' bytes to ringtrial's Checkpoints.save_async, which writes,
checksums, fsyncs and registers them in the background without the GIL.
load() gives the state back, bit for bit.

    import ringtrial, ringtrial_torch
    ringtrial_torch.save_async(ctx, batches, {"model": model.state_dict(), "optimizer": opt.state_dict()})
    ...
    if (info := ctx.checkpoints.latest_verified()) is not None:
        state = ringtrial_torch.load(info.path)

save_forked() copies nothing at all: the tensors of the CPU (contiguous
ones) are handed over as they are and a fork()ed writer process writes them
from its copy-on-write view of memory (Checkpoints.save_forked); training
goes on at once and the kernel copies only the pages it writes to while the
writer runs. Tensors on a device are copied to the host first.

In a trial whose state is split across its ranks, every rank saves its own
part of one checkpoint (ringtrial.ShardedCheckpoints):

    sharded = ringtrial.ShardedCheckpoints(ctx)
    ringtrial_torch.save_sharded_async(sharded, batches, {"model": model.state_dict()})
    if (mine := sharded.latest_verified()) is not None:
        state = ringtrial_torch.load(mine.path)   # this rank's part

A checkpoint is `state.pickle` (the structure, tensors replaced by their
index), `tensors.json` (each tensor's dtype and shape) and
`tensors/<index>.bin` (its bytes, in the machine's byte order)."""
import json
import os
import pickle

import torch

STRUCTURE = "state.pickle"
INDEX = "tensors.json"


class _TensorRef:
    """Where a tensor was in the structure: its index among the files."""

    def __init__(self, index):
        self.index = index


def _take(obj, tensors, copy):
    if isinstance(obj, torch.Tensor):
        if copy:
            taken = obj.detach().to("cpu", copy=True).contiguous()
        else:  # a contiguous tensor of the CPU as it is; others copied once
            taken = obj.detach().to("cpu").contiguous()
        tensors.append(taken)
        return _TensorRef(len(tensors) - 1)
    if isinstance(obj, dict):
        return type(obj)((k, _take(v, tensors, copy)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_take(v, tensors, copy) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_take(v, tensors, copy) for v in obj)
    return obj


def snapshot(state, copy=True):
    """The files of a checkpoint of `state`: {relative path: bytes-like},
    its tensors copied now (the caller may change `state` at once). With
    copy=False the files are views of the tensors themselves (what
    save_forked hands to its writer process)."""
    tensors = []
    structure = _take(state, tensors, copy)
    files = {STRUCTURE: pickle.dumps(structure, protocol=pickle.HIGHEST_PROTOCOL)}
    index = []
    for i, t in enumerate(tensors):
        index.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)})
        files[f"tensors/{i}.bin"] = memoryview(t.reshape(-1).view(torch.uint8).numpy())
    files[INDEX] = json.dumps(index).encode()
    return files


def save_async(ctx, batches, state, metadata=None):
    """A checkpoint of `state` written in the background (Checkpoints.save_async)."""
    ctx.checkpoints.save_async(batches, snapshot(state), metadata)


def save_forked(ctx, batches, state, metadata=None):
    """A checkpoint of `state` that copies nothing here (Checkpoints.save_forked):
    a writer process writes the tensors from its copy-on-write view."""
    ctx.checkpoints.save_forked(batches, snapshot(state, copy=False), metadata)


def save_sharded_async(sharded, batches, state, metadata=None):
    """This rank's part of a sharded checkpoint, written in the background
    (ringtrial.ShardedCheckpoints.save_async); every rank calls it."""
    sharded.save_async(batches, snapshot(state), metadata)


def load(path, map_location=None):
    """The state a checkpoint of save_async holds, from its folder."""
    with open(os.path.join(path, INDEX), "rb") as f:
        index = json.load(f)
    tensors = []
    for i, entry in enumerate(index):
        file = os.path.join(path, "tensors", f"{i}.bin")
        data = bytearray(os.path.getsize(file))
        with open(file, "rb", buffering=0) as f:
            view, done = memoryview(data), 0
            while done < len(data):
                n = f.readinto(view[done:])
                if not n:
                    raise OSError(f"{file} ended early")
                done += n
        dtype = getattr(torch, entry["dtype"])
        if data:
            t = torch.frombuffer(data, dtype=torch.uint8).view(dtype).reshape(entry["shape"])
        else:
            t = torch.empty(entry["shape"], dtype=dtype)
        tensors.append(t.to(map_location) if map_location is not None else t)
    with open(os.path.join(path, STRUCTURE), "rb") as f:
        structure = pickle.load(f)

    def rebuild(obj):
        if isinstance(obj, _TensorRef):
            return tensors[obj.index]
        if isinstance(obj, dict):
            return type(obj)((k, rebuild(v)) for k, v in obj.items())
        if isinstance(obj, list):
            return [rebuild(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(rebuild(v) for v in obj)
        return obj

    return rebuild(structure)
