#!/usr/bin/env python3
"""laconic against PyTorch DDP, side by side on this machine: the same model, data, batch (64 per
worker), learning rate (SGD 0.05, momentum 0.9), 2 workers over Gloo on loopback, one thread per
rank and the same BLAS (both load Debian's libblas.so.3). Runs are interleaved (for each
repetition: every model and method, laconic after backward, laconic overlapped, then DDP), each one epoch; the figure is worker 0's
epoch time (laconic's `epoch_time` metric; DDP's loop over the epoch's batches, data already in
memory, no evaluation). Prints the median of each and their ratio, against the targets of issue
16: laconic's dense epoch at most 0.9x DDP's, compressed ones at most DDP's with the same method.

Models: LeNet-5 and the MLP (784-392-50-10, tanh) on Fashion-MNIST, ResNet-20 on synthetic
CIFAR-shaped data (3x32x32, 2,560 training examples). Methods: dense (DDP: 25 MB buckets
allreduced during backward; laconic: `none`), fp16 (DDP's fp16_compress_hook; laconic `fp16`),
PowerSGD rank 2 (DDP's powerSGD_hook with error feedback and warm start, compressing from step 2;
laconic `powersgd { rank = 2 }`). laconic runs each twice: `allreduce { overlap = false }` (the
whole gradient after backward) and `allreduce { overlap = true }` (DDP's scheme: buckets of 25 MiB,
the first of 1 MiB, exchanged on a communication thread while backward runs).

usage: bench/ddp_side_by_side.py [path/to/laconic] [REPETITIONS] [--models lenet5,mlp,resnet20]
       (defaults: build/cli/laconic 5, every model and method; about 25 minutes here)
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.abspath(__file__)
FMNIST = "/usr/share/datasets/fashion-mnist"
LR, MOMENTUM, BATCH, WORKERS = 0.05, 0.9, 64, 2
SYNTHETIC_N = 2560
MODELS = {
    "lenet5": ("fashion_mnist()", "lenet5()"),
    "mlp": ("fashion_mnist()", "mlp()"),
    "resnet20": (f"synthetic {{ shape = {{3, 32, 32}}, n = {SYNTHETIC_N}, test_n = 256 }}",
                 "resnet { depth = 20 }"),
}
METHODS = {"dense": "none()", "fp16": "fp16()", "powersgd": "powersgd { rank = 2 }"}
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ---------------------------------------------------------------- laconic side

def laconic_epoch(laconic, directory, model, method, overlap):
    data, net = MODELS[model]
    mode = "overlapped" if overlap else "after"
    path = os.path.join(directory, f"{model}-{method}-{mode}.lua")
    with open(path, "w") as f:
        f.write(f"""experiment {{
  name = "side-by-side", data = {data}, model = {net},
  optimizer = sgd {{ lr = {LR}, momentum = {MOMENTUM} }}, batch_size = {BATCH}, epochs = 1,
  workers = {WORKERS}, topology = allreduce {{ overlap = {'true' if overlap else 'false'} }},
  schedule = synchronous(),
  compressor = {METHODS[method]}, seeds = {{ 1 }}, eval_limit = 256,
}}
""")
    db = os.path.join(directory, f"{model}-{method}-{mode}.db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    with sqlite3.connect(db) as c:
        (value,) = c.execute("SELECT value FROM metrics WHERE key = 'epoch_time' AND worker = 0").fetchone()
        parts = dict(c.execute("SELECT key, SUM(value) FROM metrics WHERE worker = 0 AND key IN "
                               "('time_step', 'time_wait', 'time_communicate', 'time_forward', 'time_backward', "
                               "'time_overlapped') GROUP BY key").fetchall())
    print(f"  laconic {model} {method} {mode}: epoch {value:.2f} s = steps {parts['time_step']:.2f} s (forward "
          f"{parts['time_forward']:.2f}, backward {parts['time_backward']:.2f}, wait {parts['time_wait']:.2f}, "
          f"communicate {parts['time_communicate']:.2f}, hidden behind backward {parts.get('time_overlapped', 0):.2f}) "
          f"+ {value - parts['time_step']:.2f} s between steps",
          file=sys.stderr, flush=True)
    return value


# ---------------------------------------------------------------- DDP side

def ddp_models(torch):
    """laconic's models in PyTorch, layer for layer (scripts/laconic_models.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "scripts"))
    import laconic_models
    return {name: (lambda name=name: laconic_models.build(name)[0]) for name in MODELS}


def ddp_data(torch, model):
    if model == "resnet20":
        g = torch.Generator().manual_seed(1)
        return torch.randn(SYNTHETIC_N, 3, 32, 32, generator=g), torch.randint(0, 10, (SYNTHETIC_N,), generator=g)
    import gzip
    with gzip.open(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")) as f:
        images = torch.frombuffer(bytearray(f.read()[16:]), dtype=torch.uint8)
    with gzip.open(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz")) as f:
        labels = torch.frombuffer(bytearray(f.read()[8:]), dtype=torch.uint8).long()
    inputs = images.float().div_(255).sub_(0.2860).div_(0.3530).reshape(-1, 1, 28, 28)
    return inputs, labels


def ddp_worker(rank, store, model, method, out):
    import time
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORKERS)
    inputs, labels = ddp_data(torch, model)
    torch.manual_seed(1)
    net = DistributedDataParallel(ddp_models(torch)[model]())  # bucket_cap_mb = 25, the default
    if method == "fp16":
        net.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif method == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=2,
                                            start_powerSGD_iter=2, use_error_feedback=True, warm_start=True)
        net.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    # Each worker's disjoint half, reshuffled per epoch, as laconic shards.
    shard = torch.randperm(len(labels), generator=torch.Generator().manual_seed(7))[rank::WORKERS]
    steps = len(shard) // BATCH
    dist.barrier()
    start = time.monotonic()
    for i in range(steps):
        idx = shard[i * BATCH:(i + 1) * BATCH]
        loss = torch.nn.functional.cross_entropy(net(inputs.index_select(0, idx)), labels.index_select(0, idx))
        opt.zero_grad()
        loss.backward()
        opt.step()
    elapsed = time.monotonic() - start
    dist.barrier()
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"epoch_time": elapsed, "steps": steps}, f)
    dist.destroy_process_group()


def ddp_epoch(directory, model, method):
    store = os.path.join(directory, f"ddp-store-{model}-{method}")
    out = os.path.join(directory, f"ddp-{model}-{method}.json")
    for p in (store, out):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, **PINNED)
    procs = [subprocess.Popen([sys.executable, HERE, "--ddp-worker", str(r), store, model, method, out], env=env)
             for r in range(WORKERS)]
    codes = [p.wait(timeout=1800) for p in procs]
    if any(codes):
        print(f"  DDP {model} {method}: workers exited with {codes}", file=sys.stderr, flush=True)
        return None
    with open(out) as f:
        return json.load(f)["epoch_time"]


# ---------------------------------------------------------------- main

def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ddp-worker":
        rank, store, model, method, out = sys.argv[2:7]
        ddp_worker(int(rank), store, model, method, out)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("laconic", nargs="?", default="build/cli/laconic")
    parser.add_argument("repetitions", nargs="?", type=int, default=5)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    laconic = os.path.abspath(args.laconic)
    models, methods = args.models.split(","), args.methods.split(",")
    times = {}
    with tempfile.TemporaryDirectory() as directory:
        for rep in range(args.repetitions):
            for model in models:
                for method in methods:
                    after = laconic_epoch(laconic, directory, model, method, False)
                    overlapped = laconic_epoch(laconic, directory, model, method, True)
                    ddp = ddp_epoch(directory, model, method)
                    times.setdefault((model, method), []).append((after, overlapped, ddp))
                    print(f"repetition {rep + 1}: {model} {method}: laconic {after:.2f} s after backward, "
                          f"{overlapped:.2f} s overlapped; DDP "
                          + (f"{ddp:.2f} s" if ddp is not None else "failed"), file=sys.stderr, flush=True)
    print(f"Median epoch time of worker 0 over {args.repetitions} interleaved repetitions, 2 workers, "
          "one thread per rank")
    print()
    print("| model | method | laconic after backward (s) [min-max] | laconic overlapped (s) [min-max] | "
          "DDP (s) [min-max] | after / DDP | overlapped / DDP | target | met |")
    print("|---|---|---|---|---|---|---|---|---|")
    cell = lambda xs: f"{statistics.median(xs):.2f} [{min(xs):.2f}-{max(xs):.2f}]"
    for (model, method), runs in times.items():
        after = [r[0] for r in runs]
        overlapped = [r[1] for r in runs]
        ddp = [r[2] for r in runs if r[2] is not None]
        target = 0.9 if method == "dense" else 1.0
        if not ddp:
            print(f"| {model} | {method} | {cell(after)} | {cell(overlapped)} | failed (see the log) | - | - | "
                  f"<= {target} | - |")
            continue
        ratios = [statistics.median(xs) / statistics.median(ddp) for xs in (after, overlapped)]
        met = [name for name, r in zip(("after", "overlapped"), ratios) if r <= target]
        print(f"| {model} | {method} | {cell(after)} | {cell(overlapped)} | {cell(ddp)} | {ratios[0]:.2f} | "
              f"{ratios[1]:.2f} | <= {target} | {', '.join(met) if met else 'no'} |")

if __name__ == "__main__":
    main()
