#!/usr/bin/env python3
"""Runs laconic_train_step_bench and prints the Markdown table of docs/benchmarks.md: the median
time of one training step (forward, loss, backward, SGD step; one worker, no compression, one
thread) per model through laconic's code path and in a plain LibTorch loop, and their ratio.

usage: bench/train_step_table.py [path/to/laconic_train_step_bench] [repetitions]
"""
import json
import subprocess
import sys

binary = sys.argv[1] if len(sys.argv) > 1 else "build/bench/laconic_train_step_bench"
repetitions = sys.argv[2] if len(sys.argv) > 2 else "5"
out = subprocess.run(
    [binary, "--benchmark_min_time=1", f"--benchmark_repetitions={repetitions}",
     "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
    check=True, capture_output=True, text=True).stdout
median = {}
for b in json.loads(out)["benchmarks"]:
    if b.get("aggregate_name") == "median":
        side, model = b["run_name"].split("/")[:2]
        median.setdefault(model, {})[side] = b["real_time"]  # milliseconds

print("| model | laconic ms/step | LibTorch ms/step | laconic / LibTorch |")
print("|---|---|---|---|")
for model, t in median.items():
    print(f"| {model} | {t['laconic']:.2f} | {t['torch']:.2f} | {t['laconic'] / t['torch']:.3f} |")
