#!/usr/bin/env python3
"""laconic's transformer step against PyTorch's, on this machine: gpt at its defaults (4 layers,
4 heads, width 160, context 128; 1,298,880 parameters) and its PyTorch twin (scripts/laconic_models.py:
Gpt, the same operations in the same order), batch 32 windows per worker, AdamW (lr 1e-3, weight
decay 0.1), one thread per rank, the same BLAS (both load Debian's libblas.so.3).

  one worker   laconic: `laconic run` of gpt on perldoc, workers = 1;
               PyTorch: the twin's loop (zero_grad, forward, cross-entropy, backward, step)
  two workers  laconic: workers = 2 over Gloo on loopback, `none`, allreduce after backward and
               allreduce { overlap = true } (DDP's buckets during backward);
               PyTorch: DistributedDataParallel over Gloo (25 MB buckets, the default)

The figure is seconds per step: worker 0's epoch_time over its steps (laconic), the loop's time
over its steps (PyTorch), the first steps included on both sides. Runs are interleaved: each
laconic run beside its PyTorch counterpart, in turn first and second; prints the median of each,
[min-max], and the ratio of medians against the issue's target (1.05).

usage: bench/gpt_vs_pytorch.py [path/to/laconic] [REPETITIONS] [--steps N] [--parts one,two]
       (defaults: build/cli/laconic 5 --steps 20: about 20 minutes here)
       OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/gpt_vs_pytorch.py --profile
       (where the twin's step goes, and a few shapes' speed: one minute)
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
BATCH, LR, WEIGHT_DECAY = 32, 1e-3, 0.1
PINNED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def laconic_step(laconic, directory, workers, steps, overlap):
    mode = "overlapped" if overlap else "after"
    path = os.path.join(directory, f"gpt-{workers}-{mode}.lua")
    with open(path, "w") as f:
        f.write(f"""experiment {{
  name = "gpt-vs-pytorch", data = perldoc(), model = gpt(),
  optimizer = adamw {{ lr = {LR}, weight_decay = {WEIGHT_DECAY} }}, batch_size = {BATCH}, epochs = 1,
  max_steps = {steps}, eval_limit = 1, workers = {workers},
  topology = allreduce {{ overlap = {'true' if overlap else 'false'} }}, compressor = none(), seeds = {{ 1 }},
}}
""")
    db = os.path.join(directory, f"gpt-{workers}-{mode}.db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    with sqlite3.connect(db) as c:
        (epoch,) = c.execute("SELECT value FROM metrics WHERE key = 'epoch_time' AND worker = 0").fetchone()
        parts = dict(c.execute("SELECT key, SUM(value) FROM metrics WHERE worker = 0 AND key IN ('time_forward', "
                               "'time_backward', 'time_optimizer', 'time_communicate', 'time_step') GROUP BY key"))
    print(f"  laconic {workers} worker(s) {mode}: {epoch / steps:.3f} s/step (forward {parts['time_forward'] / steps:.3f}, "
          f"backward {parts['time_backward'] / steps:.3f}, optimizer {parts['time_optimizer'] / steps:.3f}, "
          f"communicate {parts['time_communicate'] / steps:.3f})", file=sys.stderr, flush=True)
    return epoch / steps


def torch_worker(rank, workers, store, steps, out):
    """One rank of PyTorch's loop (DDP when workers > 1); rank 0 writes seconds per step to `out`."""
    import time
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "scripts"))
    import laconic_models
    torch.manual_seed(1)
    model = laconic_models.Gpt().init_gpt2()
    if workers > 1:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=workers)
        model = DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    g = torch.Generator().manual_seed(rank)
    tokens = torch.randint(0, 256, (steps * BATCH, 129), generator=g, dtype=torch.uint8)
    if workers > 1:
        dist.barrier()
    start = time.monotonic()
    for i in range(steps):
        batch = tokens[i * BATCH:(i + 1) * BATCH].long()
        opt.zero_grad()
        logits = model(batch[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 256), batch[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
    elapsed = time.monotonic() - start
    if workers > 1:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"seconds_per_step": elapsed / steps}, f)


def torch_step(directory, workers, steps):
    store, out = os.path.join(directory, f"store-{workers}"), os.path.join(directory, f"torch-{workers}.json")
    for p in (store, out):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, **PINNED)
    procs = [subprocess.Popen(["/usr/bin/python3", HERE, "--torch-worker", str(r), str(workers), store, str(steps), out],
                              env=env) for r in range(workers)]
    if any(p.wait(timeout=1800) for p in procs):
        raise SystemExit(f"PyTorch's {workers}-worker loop failed")
    with open(out) as f:
        value = json.load(f)["seconds_per_step"]
    print(f"  PyTorch {workers} worker(s){' (DDP)' if workers > 1 else ''}: {value:.3f} s/step", file=sys.stderr,
          flush=True)
    return value


def profile():
    """Where the twin's step goes (PyTorch's profiler, 3 steps after 2 unmeasured, the kernels
    LibTorch runs too), and seconds per step and GFLOP/s (6 x parameters x tokens per second) of
    a few shapes: what docs/benchmarks.md quotes before optimising anything."""
    import time
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "scripts"))
    import laconic_models

    def step(model, opt, x, y):
        opt.zero_grad()
        out = model(x)
        torch.nn.functional.cross_entropy(out.reshape(-1, 256), y.reshape(-1)).backward()
        opt.step()

    torch.manual_seed(1)
    model = laconic_models.Gpt().init_gpt2()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    x, y = torch.randint(0, 256, (BATCH, 128)), torch.randint(0, 256, (BATCH, 128))
    for _ in range(2):
        step(model, opt, x, y)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(3):
            step(model, opt, x, y)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    print("| layers | heads | embed | context | parameters | s/step (median of 4) | GFLOP/s (6 N tokens) |")
    print("|---|---|---|---|---|---|---|")
    for layers, heads, embed, context in [(4, 4, 160, 128), (6, 4, 128, 128), (4, 4, 128, 128), (3, 6, 192, 128),
                                           (4, 4, 160, 64), (4, 4, 192, 64), (6, 4, 128, 64)]:
        model = laconic_models.Gpt(layers=layers, heads=heads, embed=embed, context=context).init_gpt2()
        n = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=LR)
        x, y = torch.randint(0, 256, (BATCH, context)), torch.randint(0, 256, (BATCH, context))
        times = []
        for _ in range(6):
            start = time.perf_counter()
            step(model, opt, x, y)
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times[2:])
        print(f"| {layers} | {heads} | {embed} | {context} | {n:,} | {seconds:.3f} | "
              f"{6 * n * BATCH * context / seconds / 1e9:.1f} |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--profile":
        profile()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--torch-worker":
        rank, workers, store, steps, out = sys.argv[2:7]
        torch_worker(int(rank), int(workers), store, int(steps), out)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("laconic", nargs="?", default="build/cli/laconic")
    parser.add_argument("repetitions", nargs="?", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--parts", default="one,two")
    args = parser.parse_args()
    laconic = os.path.abspath(args.laconic)
    cases = []
    if "one" in args.parts.split(","):
        cases.append(("one worker", lambda d: laconic_step(laconic, d, 1, args.steps, False),
                      lambda d: torch_step(d, 1, args.steps)))
    if "two" in args.parts.split(","):
        cases.append(("two workers, after backward", lambda d: laconic_step(laconic, d, 2, args.steps, False),
                      lambda d: torch_step(d, 2, args.steps)))
        cases.append(("two workers, overlapped", lambda d: laconic_step(laconic, d, 2, args.steps, True), None))
    times = {name: ([], []) for name, _, _ in cases}
    with tempfile.TemporaryDirectory() as directory:
        for rep in range(args.repetitions):
            print(f"repetition {rep + 1} of {args.repetitions}", file=sys.stderr, flush=True)
            # Each pair back to back, laconic first in odd repetitions and PyTorch first in even
            # ones, so that the machine's drift falls on both alike.
            for name, ours, theirs in cases:
                order = [(0, ours), (1, theirs)] if rep % 2 == 0 else [(1, theirs), (0, ours)]
                for side, measure in order:
                    if measure is not None:
                        times[name][side].append(measure(directory))
    if "two workers, overlapped" in times:  # against the same DDP runs as after backward
        times["two workers, overlapped"] = (times["two workers, overlapped"][0], times["two workers, after backward"][1])
    print(f"Seconds per step, median [min-max] of {args.repetitions} interleaved repetitions of {args.steps} steps; "
          f"gpt defaults, batch {BATCH} per worker, AdamW, one thread per rank")
    print()
    print("| case | laconic s/step | PyTorch s/step | laconic / PyTorch | target | met |")
    print("|---|---|---|---|---|---|")
    cell = lambda xs: f"{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"
    for name, (ours, theirs) in times.items():
        ratio = statistics.median(ours) / statistics.median(theirs)
        print(f"| {name} | {cell(ours)} | {cell(theirs)}{' (DDP)' if 'two' in name else ''} | {ratio:.3f} | <= 1.05 | "
              f"{'yes' if ratio <= 1.05 else 'no'} |")


if __name__ == "__main__":
    main()
