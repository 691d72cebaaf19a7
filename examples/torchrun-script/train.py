"""Data-parallel training with plain torch.distributed, as torchrun would run it.

Nothing here is specific to a scheduler: the process group is set up from the
torchrun environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) by the default
env:// initialisation. A tiny linear model is trained with
DistributedDataParallel on synthetic data, each rank on batches of its own.
At every step each rank checks that the gradient DDP all-reduced is the mean
of every rank's own gradient, and at the end that every rank holds the same
weights and that the loss went down. Any mismatch exits with code 1.

    torchrun --nproc_per_node 2 train.py
"""

import copy
import gc
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = 30
BATCH = 32
FEATURES = 4
TRUE_WEIGHTS = torch.tensor([[1.0, -2.0, 0.5, 3.0]])
TRUE_BIAS = 0.25


def fail(rank, message):
    print(f"rank {rank}: FAILED: {message}", flush=True)
    sys.exit(1)


def local_gradients(model, x, y):
    """The gradients of this rank's batch alone, from a copy outside DDP."""
    alone = copy.deepcopy(model)
    torch.nn.functional.mse_loss(alone(x), y).backward()
    return [p.grad.detach().clone() for p in alone.parameters()]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank} of {world}: process group up", flush=True)

    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(1000 + rank)  # every rank draws other batches

    first_loss = None
    for step in range(STEPS):
        x = torch.randn(BATCH, FEATURES, generator=data)
        y = x @ TRUE_WEIGHTS.t() + TRUE_BIAS
        mine = local_gradients(model, x, y)

        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()  # DDP all-reduces (averages) the gradients here

        for i, (param, own) in enumerate(zip(model.parameters(), mine)):
            everyone = [torch.zeros_like(own) for _ in range(world)]
            dist.all_gather(everyone, own)
            expected = torch.stack(everyone).mean(dim=0)
            if not torch.allclose(param.grad, expected, rtol=1e-5, atol=1e-6):
                fail(rank, f"step {step}: gradient {i} is {param.grad.tolist()}, "
                           f"the mean of the ranks' gradients is {expected.tolist()}")
        optimizer.step()

        # The mean loss over ranks, all-reduced.
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        mean_loss /= world
        if first_loss is None:
            first_loss = mean_loss.item()
        if step % 10 == 0 or step == STEPS - 1:
            print(f"rank {rank}: step {step} mean loss {mean_loss.item():.6f}", flush=True)

    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    everyone = [torch.zeros_like(weights) for _ in range(world)]
    dist.all_gather(everyone, weights)
    for other, theirs in enumerate(everyone):
        if not torch.equal(theirs, weights):
            fail(rank, f"weights differ from rank {other}: {weights.tolist()} vs {theirs.tolist()}")
    if not mean_loss.item() < first_loss / 2:
        fail(rank, f"the loss did not go down: {first_loss:.6f} -> {mean_loss.item():.6f}")

    dist.barrier()
    # Free DDP before the process group, while the tensors the collectives
    # used are still alive here. Its reducer holds the group too, and if the
    # reducer let go of it last (when main() returns), the group's destructor
    # would wait with the GIL held for a Gloo thread that needs the GIL to
    # free one of those tensors: torch 1.13 then hangs at exit now and then.
    del ddp
    gc.collect()
    dist.destroy_process_group()
    print(f"rank {rank} of {world}: all checks passed", flush=True)


if __name__ == "__main__":
    main()
