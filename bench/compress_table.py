#!/usr/bin/env python3
"""Runs laconic_compress_bench once and prints the Markdown table of docs/benchmarks.md:
throughput (GB/s of fp32 input, compress + decompress, one thread, median of 3 repetitions),
the factor to memcpy of the same buffer, the factor over the LibTorch-ops version where one
exists, and peak extra heap memory relative to the input.

usage: bench/compress_table.py [path/to/laconic_compress_bench]
"""
import json
import subprocess
import sys

binary = sys.argv[1] if len(sys.argv) > 1 else "build/bench/laconic_compress_bench"
out = subprocess.run(
    [binary, "--benchmark_min_time=0.3", "--benchmark_repetitions=3",
     "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
    check=True, capture_output=True, text=True).stdout
rows = {}
for b in json.loads(out)["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name, size = b["run_name"].split("/")[:2]
    rows.setdefault(name, {})[int(size)] = b

torch_of = {"topk_1pct": "torch_topk_1pct", "qsgd_16": "torch_qsgd_16",
            "fp16": "torch_fp16", "uniform_8bit": "torch_uniform_8bit"}
sizes = sorted(rows["memcpy"])
print("| method | " + " | ".join(
    f"GB/s {s >> 20}M | x memcpy {s >> 20}M | x LibTorch {s >> 20}M" for s in sizes) +
      " | extra memory / input |")
print("|---" * (2 + 3 * len(sizes)) + "|")
for name, by_size in rows.items():
    if name.startswith("torch_"):
        continue
    cells = []
    for s in sizes:
        gbs = by_size[s]["bytes_per_second"] / 1e9
        memcpy = rows["memcpy"][s]["bytes_per_second"] / 1e9
        slower = memcpy / gbs
        torch = torch_of.get(name)
        over = (f"{gbs / (rows[torch][s]['bytes_per_second'] / 1e9):.1f}x" if torch else "-")
        cells += [f"{gbs:.3g}", f"{slower:.1f}" if name != "memcpy" else "1", over]
    extra = by_size[sizes[-1]].get("extra_per_input")
    print(f"| {name} | " + " | ".join(cells) +
          f" | {extra:.2f} |" if extra is not None else f"| {name} | " + " | ".join(cells) + " | - |")
for name in torch_of.values():
    print(f"| {name} | " + " | ".join(
        f"{rows[name][s]['bytes_per_second'] / 1e9:.3g} | "
        f"{rows['memcpy'][s]['bytes_per_second'] / rows[name][s]['bytes_per_second']:.1f} | -"
        for s in sizes) + " | - |")
