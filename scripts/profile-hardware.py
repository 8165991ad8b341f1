#!/usr/bin/python3
"""Writes a hardware profile: what a training step of laconic's models costs on this machine's GPU
(or CPU), for `laconic report NAME --hardware PROFILE` (docs/hardware.md has the format).

    python3 scripts/profile-hardware.py --out h100.json                       # every built-in model, on CUDA if present
    python3 scripts/profile-hardware.py --device cpu --threads 1 --out cpu.json --models lenet5,mlp,resnet20
    python3 scripts/profile-hardware.py --torchscript my.pt --input 3,32,32 --out mine.json
    python3 scripts/profile-hardware.py --compressors costs.json --out h100.json   # with compressor costs
    python3 scripts/profile-hardware.py --print-parameters                    # the models' parameter counts

For each model (laconic's built-ins written in PyTorch with the same layers: scripts/laconic_models.py,
or a TorchScript file) it runs --warmup steps, then times --steps steps of forward (the model and
its cross-entropy loss), backward and the optimizer (SGD, momentum 0.9, as laconic's sgd), each
timed on its own (CUDA events on a GPU, the monotonic clock on a CPU), and writes their means, and
the mean moment each parameter's gradient was ready after backward began (what an overlapped
exchange can hide). Inputs are random: a step's compute does not depend on the values.
--compressors merges a file of compressor costs (bench/compressor_costs.py writes one from
laconic's own codecs) into the profile.

On a CPU, --threads (default 1) threads compute, as each laconic rank does (one thread per rank);
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set to it before PyTorch loads.
Needs PyTorch: Debian's python3-torch under /usr/bin/python3, or any PyTorch with CUDA on a GPU node.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--out", help="profile to write (default: print it)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to compute (default: cuda when PyTorch sees a GPU, else cpu)")
    p.add_argument("--models", default="lenet5,mlp,resnet20,resnet18,vgg11,gpt",
                   help="built-in models, comma-separated (default: %(default)s)")
    p.add_argument("--batch-size", default="64",
                   help="examples per worker and step, comma-separated for several (default: %(default)s)")
    p.add_argument("--steps", type=int, default=30, help="timed steps per model (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first (default: %(default)s)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s, as a laconic rank)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default: %(default)s)")
    p.add_argument("--torchscript", help="also profile this TorchScript file (laconic's torchscript { file = ... })")
    p.add_argument("--input", help="--torchscript's input shape of one example, C,H,W (e.g. 3,32,32)")
    p.add_argument("--compressors", help="merge the compressor costs of this JSON file into the profile")
    p.add_argument("--name", help="what the report calls the hardware (default: the GPU's or CPU's name)")
    p.add_argument("--data", choices=["auto", "random"], default="auto",
                   help="inputs: auto = Fashion-MNIST's training images for the 1x28x28 models where Debian's "
                        "dataset-fashion-mnist is installed (a CPU's ReLU and pooling are faster on real images), "
                        "else random; random = normal noise (default: %(default)s)")
    p.add_argument("--print-parameters", action="store_true",
                   help="print each built-in model's laconic name and parameter count as JSON, and exit")
    return p.parse_args()


def set_threads(threads):
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(threads)


def import_torch():
    try:
        import torch
    except ImportError:
        sys.exit(f"profile-hardware: {sys.executable} has no PyTorch; run it with Debian's /usr/bin/python3 after "
                 "apt-get install python3-torch, or with a PyTorch that has CUDA on a GPU node")
    return torch


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


class Clock:
    """Marks on the device's own timeline: CUDA events on a GPU, the monotonic clock on a CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.type == "cuda"

    def mark(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def seconds(self, a, b):
        """Seconds from mark a to mark b; on a GPU once both have happened."""
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b) / 1e3
        return b - a


FASHION_MNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def input_batches(torch, shape, batch, count, device, data):
    """`count` batches of inputs: Fashion-MNIST's images normalized as laconic does
    (engine/train/data/fashion_mnist.cpp) for 1x28x28 models when the dataset is installed, else noise;
    for a language model (one example a sequence: a shape of one dimension), random byte tokens."""
    if len(shape) == 1:
        return [torch.randint(0, 256, (batch,) + tuple(shape), device=device)], "random"
    if data == "auto" and tuple(shape) == (1, 28, 28) and os.path.exists(FASHION_MNIST):
        import gzip
        with gzip.open(FASHION_MNIST) as f:
            images = torch.frombuffer(bytearray(f.read()[16:]), dtype=torch.uint8).reshape(-1, 1, 28, 28)
        images = images[: batch * count].float().div_(255).sub_(0.2860).div_(0.3530)
        return [images[(k * batch) % len(images):][:batch].to(device) for k in range(count)], "fashion-mnist"
    return [torch.randn((batch,) + tuple(shape), device=device)], "random"


def profile_model(torch, model, laconic_name, shape, batch, device, args):
    model = model.to(device).train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    clock = Clock(torch, device)
    batches, data = input_batches(torch, shape, batch, args.warmup + args.steps, device, args.data)
    with torch.no_grad():
        classes = model(batches[0][:1]).shape[-1]  # a language model's: its vocabulary
    # A language model predicts every position: a label per token.
    labels = torch.randint(0, classes, (batch,) + tuple(shape) if len(shape) == 1 else (batch,), device=device)
    ready = {}  # parameter index -> mark when its gradient was computed, this step
    for i, p in enumerate(params):
        p.register_hook(lambda grad, i=i: ready.__setitem__(i, clock.mark()))
    forward, backward, step, after = [], [], [], [[] for _ in params]
    for k in range(args.warmup + args.steps):
        optimizer.zero_grad(set_to_none=False)
        ready.clear()
        t0 = clock.mark()
        inputs = batches[k % len(batches)]
        loss = torch.nn.functional.cross_entropy(model(inputs).reshape(-1, classes), labels.reshape(-1))
        t1 = clock.mark()
        loss.backward()
        t2 = clock.mark()
        optimizer.step()
        t3 = clock.mark()
        if k < args.warmup:
            continue
        forward.append(clock.seconds(t0, t1))
        backward.append(clock.seconds(t1, t2))
        step.append(clock.seconds(t2, t3))
        for i, mark in ready.items():
            after[i].append(clock.seconds(t1, mark))
    order = sorted(range(len(params)), key=lambda i: statistics.mean(after[i]) if after[i] else float("inf"))
    return {
        "model": laconic_name, "batch_size": batch, "parameters": sum(p.numel() for p in params), "inputs": data,
        "forward": statistics.mean(forward), "backward": statistics.mean(backward),
        "optimizer": statistics.mean(step),
        "gradient_ready": [{"after": statistics.mean(after[i]) if after[i] else statistics.mean(backward),
                            "elements": params[i].numel()} for i in order],
    }


def main():
    args = arguments()
    set_threads(args.threads)
    torch = import_torch()
    sys.path.insert(0, HERE)
    import laconic_models
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in laconic_models.MODELS]
    if unknown:
        sys.exit(f"profile-hardware: unknown model(s) {', '.join(unknown)}; built-in: {', '.join(laconic_models.MODELS)}")
    if args.print_parameters:
        counts = {}
        for name in names:
            model, laconic_name, _ = laconic_models.build(name)
            counts[name] = {"model": laconic_name, "parameters": laconic_models.parameters(model)}
        print(json.dumps(counts, indent=1))
        return
    if args.torchscript and not args.input:
        sys.exit("profile-hardware: --torchscript needs --input C,H,W (the shape of one example)")
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        sys.exit("profile-hardware: --device cuda, but this PyTorch sees no GPU (torch.cuda.is_available() is False)")
    device = torch.device("cuda" if use_cuda else "cpu")
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    name = args.name or (torch.cuda.get_device_name(device) if use_cuda
                         else f"{cpu_name()} ({args.threads} thread{'s' if args.threads != 1 else ''})")
    profile = {
        "laconic_hardware_profile": 1, "name": name, "device": device.type,
        "measured": {"by": "scripts/profile-hardware.py", "torch": torch.__version__,
                     "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                     "steps": args.steps, "warmup": args.warmup, "threads": args.threads,
                     "optimizer": f"SGD lr={args.lr} momentum=0.9",
                     "cuda": torch.version.cuda if use_cuda else None},
        "models": [], "compressors": {}}
    batches = [int(b) for b in args.batch_size.split(",") if b]
    for batch in batches:
        for name in names:
            model, laconic_name, shape = laconic_models.build(name)
            print(f"profile-hardware: {name} at batch {batch} on {device.type}", file=sys.stderr, flush=True)
            profile["models"].append(profile_model(torch, model, laconic_name, shape, batch, device, args))
        if args.torchscript:
            model = torch.jit.load(args.torchscript)
            shape = tuple(int(x) for x in args.input.split(","))
            profile["models"].append(profile_model(torch, model, "torchscript", shape, batch, device, args))
    if args.compressors:
        with open(args.compressors) as f:
            profile["compressors"] = json.load(f).get("compressors", {})
    text = json.dumps(profile, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        print(f"profile-hardware: wrote {args.out} ({len(profile['models'])} models, "
              f"{len(profile['compressors'])} compressors)", file=sys.stderr)
    else:
        print(text)


if __name__ == "__main__":
    main()
