#!/usr/bin/env python3
"""PyTorch's own GPU figures, the references beside laconic's CUDA kernels
(bench/compress_cuda_bench): a device-to-device copy (the memory-bandwidth ceiling), torch.topk
of |g| at 1% and 0.1% of the elements, and the fp16 / bf16 casts, at 10^6, 10^7 and 10^8
elements. Each figure is the median of --repeats CUDA-event timings after 3 warm-ups.

Usage: python3 bench/torch_compress_reference.py [--sizes 1e6,1e7,1e8] [--json FILE]
Needs PyTorch with a CUDA device (a GPU node; laconic's own build does not use PyTorch's CUDA).
"""
import argparse
import json
import statistics
import sys

import torch


def median_ms(fn, repeats):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def measure(n, repeats):
    g = torch.randn(n, device="cuda")
    out = torch.empty_like(g)
    rows = {"copy": median_ms(lambda: out.copy_(g), repeats)}
    for percent in (1.0, 0.1):
        k = max(1, int(n * percent / 100))
        rows[f"topk {percent:g}%"] = median_ms(lambda: torch.topk(g.abs(), k, sorted=False), repeats)
    rows["fp16 cast"] = median_ms(lambda: g.half(), repeats)
    rows["bf16 cast"] = median_ms(lambda: g.bfloat16(), repeats)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7,1e8", help="element counts (default 1e6,1e7,1e8)")
    parser.add_argument("--repeats", type=int, default=20, help="timed repetitions per figure (default 20)")
    parser.add_argument("--json", help="also write the figures (milliseconds) to this file")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_compress_reference: PyTorch sees no CUDA device; nothing was measured")
    device = torch.cuda.get_device_name(0)
    print(f"PyTorch {torch.__version__} on {device}; medians of {args.repeats}, milliseconds")
    figures = {"device": device, "torch": torch.__version__, "sizes": {}}
    for n in (int(float(s)) for s in args.sizes.split(",")):
        rows = measure(n, args.repeats)
        figures["sizes"][str(n)] = rows
        copy_gbs = 2 * 4 * n / rows["copy"] / 1e6
        cells = "  ".join(f"{name} {ms:.4f}" for name, ms in rows.items())
        print(f"n={n:>10}  {cells}  (copy {copy_gbs:.0f} GB/s read+write)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
