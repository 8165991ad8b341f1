#!/usr/bin/env python3
"""Two tools, one machine: the compute per step that scripts/profile-hardware.py measures on this
CPU (PyTorch, one thread) against the compute laconic itself records for the same model and batch
(time_forward + time_backward + time_optimizer, one worker, one thread), for LeNet-5, the MLP and
ResNet-20. A profile written on a GPU node is only as good as this agreement on the CPU, where
both can run (issue 34: within 10%). With --device cuda, on a GPU node and a laconic built against
a LibTorch with CUDA (docs/hardware.md), the same on the GPU: laconic with device = cuda(), the
script with --device cuda (issue 69); --models gpt adds the default transformer (random byte
tokens on both sides).

Runs are interleaved (for each repetition: every model, laconic then the script); each side skips
its first WARMUP steps and averages the next STEPS; the figure is the median over repetitions.

usage: bench/hardware_profile_check.py [path/to/laconic] [--repetitions 3] [--steps 40] [--warmup 5]
         [--device cpu|cuda] [--models lenet5,mlp,resnet20] [--fashion-root DIR]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = os.path.join(HERE, "..", "scripts", "profile-hardware.py")
BATCH = 64
MODELS = {  # profile-hardware.py's name: (dataset, laconic model); FASHION: the dataset's folder
    "lenet5": ("fashion_mnist {{ root = \"{FASHION}\" }}", "lenet5()"),
    "mlp": ("fashion_mnist {{ root = \"{FASHION}\" }}", "mlp()"),
    "resnet20": ("synthetic {{ shape = {{3, 32, 32}}, n = 4096, test_n = 64 }}", "resnet {{ depth = 20 }}"),
    # Random byte tokens: a step's compute does not depend on them (profile-hardware.py's too).
    "gpt": ("text {{ file = \"{TEXT}\", tokens = \"bytes\", bptt = 128 }}", "gpt()"),
}


def random_text(directory):
    """A file of random printable bytes for the gpt's text { } dataset: 1 MB in lines, enough for batches of 64."""
    import random
    path = os.path.join(directory, "random.txt")
    rng = random.Random(1)
    with open(path, "w") as f:
        for _ in range(1 << 13):  # lines of 127 bytes and a newline: the split is by lines
            f.write("".join(chr(rng.randrange(32, 127)) for _ in range(127)) + "\n")
    return path


def laconic_compute(laconic, directory, model, steps, warmup, device, fashion):
    data, net = MODELS[model]
    data = data.format(FASHION=fashion, TEXT=os.path.join(directory, "random.txt"))
    path = os.path.join(directory, f"{model}.lua")
    with open(path, "w") as f:
        f.write(f"""experiment {{
  name = "profile-check", data = {data}, model = {net.format()},
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = {BATCH}, epochs = 1, max_steps = {warmup + steps},
  workers = 1, compressor = none(), seeds = {{ 1 }}, eval_limit = 64, device = {device}(),
}}
""")
    db = os.path.join(directory, f"{model}.db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    with sqlite3.connect(db) as c:
        (seconds,) = c.execute(
            "SELECT SUM(value) / COUNT(DISTINCT step) FROM metrics WHERE worker = 0 AND step >= ? AND key IN "
            "('time_forward', 'time_backward', 'time_optimizer')", (warmup,)).fetchone()
    return seconds


def profile_compute(directory, model, steps, warmup, device, python):
    out = os.path.join(directory, f"{model}.json")
    subprocess.run([python, PROFILE, "--device", device, "--threads", "1", "--models", model,
                    "--steps", str(steps), "--warmup", str(warmup), "--out", out], check=True,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        m = json.load(f)["models"][0]
    return m["forward"] + m["backward"] + m["optimizer"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("laconic", nargs="?", default="build/cli/laconic")
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where both sides compute (cuda: laconic built against a LibTorch with CUDA)")
    p.add_argument("--models", default="lenet5,mlp,resnet20", help="comma-separated, of: " + ",".join(MODELS))
    p.add_argument("--fashion-root", default="/usr/share/datasets/fashion-mnist",
                   help="Fashion-MNIST's idx files (Debian's dataset-fashion-mnist)")
    p.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                   help="the Python with PyTorch that runs profile-hardware.py (default: %(default)s)")
    args = p.parse_args()
    laconic = os.path.abspath(args.laconic)
    models = [m for m in args.models.split(",") if m]
    measured = {m: ([], []) for m in models}
    with tempfile.TemporaryDirectory() as directory:
        random_text(directory)
        for r in range(args.repetitions):
            for model in models:
                ours = laconic_compute(laconic, directory, model, args.steps, args.warmup, args.device,
                                       args.fashion_root)
                theirs = profile_compute(directory, model, args.steps, args.warmup, args.device, args.python)
                measured[model][0].append(ours)
                measured[model][1].append(theirs)
                print(f"  repetition {r + 1} {model}: laconic {ours * 1e3:.2f} ms, profile {theirs * 1e3:.2f} ms",
                      file=sys.stderr, flush=True)
    print(f"Compute per step (forward + backward + optimizer) on the {args.device}, batch {BATCH}, one thread, medians of "
          f"{args.repetitions} interleaved repetitions of {args.steps} steps after {args.warmup}:\n")
    print("| model | laconic (ms) | profile-hardware.py (ms) | profile / laconic | within 10% |")
    print("|---|---:|---:|---:|---|")
    for model, (ours, theirs) in measured.items():
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {model} | {a * 1e3:.2f} | {b * 1e3:.2f} | {b / a:.3f} | {'yes' if abs(b / a - 1) <= 0.10 else 'no'} |")


if __name__ == "__main__":
    main()
