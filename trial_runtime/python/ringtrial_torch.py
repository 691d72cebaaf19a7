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


def _take(obj, tensors):
    if isinstance(obj, torch.Tensor):
        copy = obj.detach().to("cpu", copy=True).contiguous()
        tensors.append(copy)
        return _TensorRef(len(tensors) - 1)
    if isinstance(obj, dict):
        return type(obj)((k, _take(v, tensors)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_take(v, tensors) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_take(v, tensors) for v in obj)
    return obj


def snapshot(state):
    """The files of a checkpoint of `state`: {relative path: bytes-like},
    its tensors copied now (the caller may change `state` at once)."""
    tensors = []
    structure = _take(state, tensors)
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
