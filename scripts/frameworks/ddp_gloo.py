"""A few iterations of real torch.distributed DDP over Gloo on CPU, launched by torchrun with
2 processes. Each rank prints one line per iteration in nanoGPT's words (`iter N: loss X, time
Yms`, the line most DDP scripts copy) and keeps its own record of every step: the loss it
printed and the step's measured duration, written as JSON when training ends. That record is
the truth tests/e2e/frameworks_real.rs holds rocetop's reading against."""

import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# How the per-iteration line prints its figures: the truth file says so, so that the test
# rounds the truth the way the line did.
LOSS_DECIMALS = 6
MS_DECIMALS = 3


def main():
    out = sys.argv[1]
    iters = int(os.environ.get("DDP_ITERS", "20"))
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = DDP(
        torch.nn.Sequential(
            torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)
        )
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(512, 64)
    y = torch.randint(0, 10, (512,))
    steps = []
    for it in range(1, iters + 1):
        t0 = time.perf_counter()
        i = torch.randint(0, len(x), (64,))
        loss = torch.nn.functional.cross_entropy(model(x[i]), y[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces the gradients over Gloo here
        opt.step()
        lossf = loss.item()
        dt = time.perf_counter() - t0
        print(
            f"iter {it}: loss {lossf:.{LOSS_DECIMALS}f}, time {dt * 1000:.{MS_DECIMALS}f}ms",
            flush=True,
        )
        steps.append({"iteration": it, "loss": lossf, "step_seconds": dt})
    with open(os.path.join(out, f"ddp_truth_rank{rank}.json"), "w") as f:
        json.dump(
            {
                "rank": rank,
                "world_size": dist.get_world_size(),
                "loss_decimals": LOSS_DECIMALS,
                "ms_decimals": MS_DECIMALS,
                "steps": steps,
            },
            f,
            indent=1,
        )
    # Both ranks reach teardown, then leave without running Gloo's destructors: tearing the
    # group down made a rank abort ("terminate called without an active exception", SIGABRT)
    # after all its steps were logged, in CI under load, with a barrier before the destroy too.
    # The record is written and the log flushed, so nothing of the run is lost by skipping them.
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
