#!/usr/bin/env python3
"""Runs laconic_compress_bench and prints the Markdown tables of docs/benchmarks.md:
throughput (GB/s of fp32 input, compress + decompress, one thread), the factor to memcpy of the
same buffer, the factor over the LibTorch-ops version where one exists, peak extra heap memory
relative to the input, then each method against its goal of issue 35 (x memcpy at 16M).

Every figure is the median over REPEATS runs of the whole binary, each with the benchmarks in a
random order (--benchmark_enable_random_interleaving), so that a busy spell of the machine lands
on all methods alike. With a second binary (BEFORE: the same benchmark built from an older
commit), the two binaries alternate run by run and two columns give BEFORE's x memcpy at 16M
(against BEFORE's own memcpy) and the speed against BEFORE's (GB/s over BEFORE's GB/s at 16M;
above 1 is faster).

usage: bench/compress_table.py [BINARY [BEFORE]] [--repeats N] [--min-time S]
  BINARY    default build/bench/laconic_compress_bench
  --repeats runs of each binary (default 5)
  --min-time seconds each benchmark runs per run (default 0.3)
"""
import argparse
import json
import statistics
import subprocess

# Issue 35, item 5: the most each method may take, in multiples of memcpy at 16M.
GOALS = {name: 4.0 for name in (
    "threshold_2.33", "terngrad", "signsgd", "signum", "onebit", "ef_signsgd", "qsgd_16",
    "uniform_8bit", "fp16", "bf16", "randomk_1pct", "block_randomk_1pct")}
GOALS.update({"topk_1pct_ef": 6.0, "adaptive": 15.0})
TORCH_OF = {"topk_1pct": "torch_topk_1pct", "qsgd_16": "torch_qsgd_16",
            "fp16": "torch_fp16", "uniform_8bit": "torch_uniform_8bit"}


def run_once(binary, min_time):
    """{name: {size: benchmark}} of one run with the benchmarks in a random order."""
    out = subprocess.run(
        [binary, f"--benchmark_min_time={min_time}", "--benchmark_enable_random_interleaving=true",
         "--benchmark_format=json"], check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        name, size = b["run_name"].split("/")[:2]
        rows.setdefault(name, {})[int(size)] = b
    return rows


def registration_order(binary):
    """The benchmarks' names in the order the binary registers them (the table's row order)."""
    listed = subprocess.run([binary, "--benchmark_list_tests=true"], check=True, capture_output=True,
                            text=True).stdout.split()
    return list(dict.fromkeys(line.split("/")[0] for line in listed))


def medians(runs, order):
    """{name: {size: (median GB/s, extra_per_input or None)}} over the runs, rows in `order`."""
    out = {}
    for name in order:
        by_size = runs[0].get(name)
        if by_size is None:
            continue
        for size, first in by_size.items():
            gbs = statistics.median(r[name][size]["bytes_per_second"] / 1e9 for r in runs)
            out.setdefault(name, {})[size] = (gbs, first.get("extra_per_input"))
    return out


def print_throughput(table, before):
    sizes = sorted(table["memcpy"])
    big = sizes[-1]
    header = " | ".join(f"GB/s {s >> 20}M | x memcpy {s >> 20}M | x LibTorch {s >> 20}M" for s in sizes)
    before_header = f" before: x memcpy {big >> 20}M | speed / before's {big >> 20}M |"
    print(f"| method | {header} | extra memory / input |" + (before_header if before else ""))
    print("|---" * (2 + 3 * len(sizes) + (2 if before else 0)) + "|")
    for name, by_size in table.items():
        cells = []
        for s in sizes:
            gbs = by_size[s][0]
            torch = TORCH_OF.get(name)
            over = f"{gbs / table[torch][s][0]:.1f}x" if torch else "-"
            cells += [f"{gbs:.3g}", f"{table['memcpy'][s][0] / gbs:.1f}", over]
        extra = by_size[big][1]
        row = f"| {name} | " + " | ".join(cells) + (f" | {extra:.2f} |" if extra is not None else " | - |")
        if before:
            old = before.get(name, {}).get(big)
            # The factor is against each binary's own memcpy; the speed ratio compares GB/s.
            row += f" {before['memcpy'][big][0] / old[0]:.1f} | {by_size[big][0] / old[0]:.2f} |" if old else " - | - |"
        print(row)


def print_goals(table, before):
    big = max(table["memcpy"])
    print()
    print(f"| method | goal (x memcpy {big >> 20}M) | now | " + ("before | " if before else "") + "met |")
    print("|---" * (4 + (1 if before else 0)) + "|")
    for name, goal in GOALS.items():
        if name not in table:
            continue
        now = table["memcpy"][big][0] / table[name][big][0]
        old = f"{before['memcpy'][big][0] / before[name][big][0]:.1f} | " if before and name in before else ""
        print(f"| {name} | {goal:g} | {now:.1f} | {old}{'yes' if now <= goal else '**no**'} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?", default="build/bench/laconic_compress_bench")
    parser.add_argument("before", nargs="?")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.3)
    args = parser.parse_args()
    now_runs, before_runs = [], []
    for _ in range(args.repeats):
        now_runs.append(run_once(args.binary, args.min_time))
        if args.before:
            before_runs.append(run_once(args.before, args.min_time))
    table = medians(now_runs, registration_order(args.binary))
    before = medians(before_runs, registration_order(args.before)) if before_runs else None
    print(f"medians of {args.repeats} interleaved runs" + (" of each binary, alternating" if before else ""))
    print()
    print_throughput(table, before)
    print_goals(table, before)


if __name__ == "__main__":
    main()
