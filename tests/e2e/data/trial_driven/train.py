"""A trial of the trial-driven searcher contract, over the trial REST API with
the Python standard library only: it trains as long as it likes, reports a
validation with the time metric `batches` every 4 batches, and exits 0 as
soon as the master asks it to stop (the preemption poll), after
acknowledging. Its loss depends on the learning rate only, so the searcher
has something to rank. Used by tests/e2e/trial_driven_e2e_test.cc."""
import json
import os
import sys
import time
import urllib.request

URL = os.environ["RING_MASTER_URL"] + "/api/v1/allocations/" + os.environ["RING_ALLOCATION_ID"]
TOKEN = os.environ["RING_ALLOCATION_TOKEN"]


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as reply:
        return json.loads(reply.read() or b"{}")


lr = json.loads(os.environ["RING_HPARAMS"])["lr"]
print("time metric", os.environ.get("RING_SEARCHER_TIME_METRIC"), "max_time",
      os.environ.get("RING_SEARCHER_MAX_TIME"), flush=True)
batches = 0
while batches < 1000:  # a bound far past max_time: the searcher stops every trial
    batches += 4
    loss = abs(lr - 0.3) + 1.0 / batches
    call("POST", "/metrics", {"reports": [
        {"kind": "training", "batches": batches, "metrics": {"loss": loss}},
        {"kind": "validation", "batches": batches, "metrics": {"loss": loss, "batches": batches}},
    ]})
    if call("GET", "/preemption?timeout_s=0").get("preempt"):
        call("POST", "/preemption/ack", {})
        print("should_preempt at", batches, "batches: exiting 0", flush=True)
        sys.exit(0)
    time.sleep(0.1)
print("trained to the bound without being stopped", flush=True)
