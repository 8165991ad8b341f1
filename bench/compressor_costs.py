#!/usr/bin/env python3
"""Writes laconic's own compressors' costs on this machine in the hardware profile's format
(docs/hardware.md): per compressor, compress and decompress as seconds per call plus seconds per
gradient element, the line through the medians measured at 64K and 16M elements by
laconic_compress_bench --sizes (one thread). scripts/profile-hardware.py --compressors FILE merges them
into a profile, so that a profile's compressor costs are laconic's codecs', not guesses.

usage: bench/compressor_costs.py [BINARY] [--out costs.json] [--repeats N] [--min-time S]
  BINARY     default build/bench/laconic_compress_bench (cmake -DLACONIC_BUILD_BENCH=ON)
  --repeats  runs of the binary, the benchmarks in a random order each time (default 3)

Each profile entry is the compressor's default configuration where the benchmark has it (topk:
ratio 1% with error feedback; qsgd: 16 levels; ...); `measured_as` names the benchmark row.
"""
import argparse
import json
import statistics
import subprocess

# compressor name in an experiment -> the benchmark row that measures its default-like setting
ROWS = {
    "none": "none", "fp16": "fp16", "bf16": "bf16", "uniform": "uniform_8bit", "adaptive": "adaptive",
    "qsgd": "qsgd_16", "terngrad": "terngrad", "signsgd": "signsgd", "signum": "signum",
    "ef_signsgd": "ef_signsgd", "onebit": "onebit", "topk": "topk_1pct_ef", "randomk": "randomk_1pct",
    "block_randomk": "block_randomk_1pct", "threshold": "threshold_2.33", "dgc": "dgc_0.1pct",
    "powersgd": "powersgd_rank4",
}

# The sizes the line is fitted through: LeNet-5's gradient is 62K elements, ResNet-18's 11M, so
# the per-call cost is what the small size takes beyond the per-element cost of the large one.
SMALL, LARGE = 1 << 16, 1 << 24


def run_once(binary, min_time):
    out = subprocess.run([binary, f"--sizes={SMALL},{LARGE}", f"--benchmark_min_time={min_time}",
                          "--benchmark_enable_random_interleaving=true",
                          "--benchmark_format=json", "--benchmark_filter=^(" + "|".join(ROWS.values()) + ")/"],
                         check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        name, size = b["run_name"].split("/")[:2]
        if "compress_s" in b:
            rows.setdefault(name, {})[int(size)] = (b["compress_s"], b["decompress_s"])
    return rows


def fit(small, large, points):
    """(per_call, per_element) of the line through (small, t_small) and (large, t_large)."""
    (n1, t1), (n2, t2) = (small, points[small]), (large, points[large])
    per_element = max(0.0, (t2 - t1) / (n2 - n1))
    return {"per_call": max(0.0, t1 - per_element * n1), "per_element": per_element}


def main():
    p = argparse.ArgumentParser(description="laconic's compressor costs in the hardware profile's format")
    p.add_argument("binary", nargs="?", default="build/bench/laconic_compress_bench")
    p.add_argument("--out", help="file to write (default: print)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.2)
    args = p.parse_args()
    runs = [run_once(args.binary, args.min_time) for _ in range(args.repeats)]
    costs = {}
    for compressor, row in ROWS.items():
        if row not in runs[0]:
            continue
        sizes = sorted(runs[0][row])
        medians = {half: {n: statistics.median(r[row][n][half] for r in runs) for n in sizes} for half in (0, 1)}
        costs[compressor] = {"compress": fit(sizes[0], sizes[-1], medians[0]),
                             "decompress": fit(sizes[0], sizes[-1], medians[1]),
                             "measured_as": f"laconic_compress_bench {row}, medians of {args.repeats} runs at "
                                            f"{sizes[0]} and {sizes[-1]} elements"}
    text = json.dumps({"compressors": costs}, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
