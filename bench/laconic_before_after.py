#!/usr/bin/env python3
"""Two laconic builds side by side: the same epochs as bench/ddp_side_by_side.py (its models,
methods and experiment; 2 workers over Gloo on loopback, one thread per rank), run by the
build before a change and by the build after it, interleaved (for each repetition: every model
and method, before then after). Prints the median epoch time of worker 0 of each, with the
range, and their ratio: what a change did to laconic alone, on the same machine at the same time
(docs/benchmarks.md).

usage: bench/laconic_before_after.py BEFORE_LACONIC AFTER_LACONIC [REPETITIONS]
       [--models lenet5,mlp,resnet20] [--methods dense,fp16,powersgd] [--overlap]
       (a build of another commit: git worktree add /tmp/before COMMIT, then cmake and
       cmake --build there with --target laconic laconic-engine)
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ddp_side_by_side as side  # noqa: E402  (the epochs and their experiment, written once)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("repetitions", nargs="?", type=int, default=5)
    parser.add_argument("--models", default="lenet5,resnet20")
    parser.add_argument("--methods", default="dense,fp16")
    parser.add_argument("--overlap", action="store_true", help="allreduce { overlap = true } (default: after backward)")
    args = parser.parse_args()
    builds = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    times = {}
    with tempfile.TemporaryDirectory() as before_dir, tempfile.TemporaryDirectory() as after_dir:
        directories = {"before": before_dir, "after": after_dir}
        for rep in range(args.repetitions):
            for model in args.models.split(","):
                for method in args.methods.split(","):
                    for which, laconic in builds.items():
                        print(f"repetition {rep + 1}, {which}:", file=sys.stderr, flush=True)
                        seconds = side.laconic_epoch(laconic, directories[which], model, method, args.overlap)
                        times.setdefault((model, method), {}).setdefault(which, []).append(seconds)
    mode = "overlapped" if args.overlap else "after backward"
    print(f"Median epoch time of worker 0 over {args.repetitions} interleaved repetitions, 2 workers, {mode}")
    print()
    print("| model | method | before (s) [min-max] | after (s) [min-max] | after / before |")
    print("|---|---|---|---|---|")
    cell = lambda xs: f"{statistics.median(xs):.2f} [{min(xs):.2f}-{max(xs):.2f}]"
    for (model, method), runs in times.items():
        ratio = statistics.median(runs["after"]) / statistics.median(runs["before"])
        print(f"| {model} | {method} | {cell(runs['before'])} | {cell(runs['after'])} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
