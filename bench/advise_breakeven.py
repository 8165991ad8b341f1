#!/usr/bin/env python3
"""The break-even bandwidths `laconic advise` predicts against the crossovers a sweep of emulated
links finds (docs/advise.md, "Break-even against emulated links"). Run as root, after
bench/advise_validation.sh has checked one setup (its DIR holds exp.lua, validation.db and
check-wN-LINK.json).

For the baseline and every candidate with a predicted break-even, it trains short runs
(--steps) on each emulated bandwidth (network namespaces and tc, as the validation's full runs),
measures their step there (`laconic advise --check ... --json`), and multiplies it by the steps
to the target that candidate's full run took (from the check's JSON: measured time / measured
step). The measured crossover is found as advise finds its own: the top of the run of swept
bandwidths, from the slowest up, at which the candidate reaches the target sooner than the
baseline.

Usage: python3 bench/advise_breakeven.py DIR check-w2-100Mbit.json [--bandwidths 25Mbit,...]
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys


def lua_of(label):
    """A candidate's label ("topk error_feedback=true ratio=0.01") as a constructor call."""
    name, *fields = label.split()
    return f"{name}{{{', '.join(fields)}}}" if fields else f"{name}()"


def bits_per_second(text):
    number, unit = re.fullmatch(r"([0-9.]+)(Gbit|Mbit)", text).groups()
    return float(number) * (1e9 if unit == "Gbit" else 1e6)


def laconic(args, *command):
    result = subprocess.run([args.laconic, *command], cwd=args.dir, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"advise_breakeven: laconic {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def measured_steps(args, check, candidates, bandwidth):
    """Each candidate's measured step on `bandwidth`, emulated: short runs, then --check."""
    name = f"breakeven-w{check['workers']}-{bandwidth}"
    sweep = "compressor=sweep{" + ", ".join(lua_of(c) for c in candidates) + "}"
    laconic(args, "run", "exp.lua", "--resume", "--quiet", "--db", "validation.db", "--set", f"name={name}",
            "--set", f"workers={check['workers']}", "--set", f"network.bandwidth={bandwidth}",
            "--set", "network.emulate=true", "--set", f"max_steps={args.steps}",
            "--set", f"eval_every={args.steps}", "--set", sweep)
    out = os.path.join(args.dir, f"{name}.json")
    laconic(args, "advise", "exp.lua", "--workers", str(check["workers"]), "--link", check["link"],
            "--db", "validation.db", "--check", name, "--json", out)
    with open(out) as f:
        return {r["candidate"]: r["measured_step_seconds"] for r in json.load(f)["rows"]}


def crossover(bandwidths, times, candidate, baseline):
    found = None
    for b in bandwidths:
        if not times[b][candidate] < times[b][baseline]:
            break
        found = b
    return found


def interpolated(bandwidths, times, candidate, baseline, found):
    """Where log(candidate's time / baseline's) crosses 0, linear in log bandwidth between the
    last swept bandwidth at which the candidate was faster and the next."""
    b1, b2 = found, bandwidths[bandwidths.index(found) + 1]
    r1, r2 = (math.log(times[b][candidate] / times[b][baseline]) for b in (b1, b2))
    x1, x2 = math.log(bits_per_second(b1)), math.log(bits_per_second(b2))
    return math.exp(x1 + (0 - r1) / (r2 - r1) * (x2 - x1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="bench/advise_validation.sh's directory")
    parser.add_argument("check", help="its check-wN-LINK.json (the steps to the target of the full runs)")
    parser.add_argument("--bandwidths", default="25Mbit,50Mbit,100Mbit,200Mbit,400Mbit,800Mbit,1600Mbit",
                        help="the emulated links, slowest first (default 25Mbit,...,1600Mbit)")
    parser.add_argument("--steps", type=int, default=100, help="steps of each short run (default 100)")
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--laconic", default=os.path.join(checkout, "build", "cli", "laconic"),
                        help="the binary (default: this checkout's build/cli/laconic)")
    args = parser.parse_args()
    with open(args.check) as f:
        check = json.load(f)
    rows = {r["candidate"]: r for r in check["rows"]}
    baseline = next(r["candidate"] for r in check["rows"] if r["baseline"])
    steps = {c: r["measured_time_seconds"] / r["measured_step_seconds"] for c, r in rows.items()
             if r["measured_time_seconds"] is not None and r["measured_step_seconds"]}
    candidates = [c for c, r in rows.items() if r["predicted_crossover_bits_per_second"] is not None and c in steps]
    if baseline not in steps or not candidates:
        sys.exit("advise_breakeven: no candidate with a predicted break-even whose full run, and the baseline's, "
                 "reached the target")
    bandwidths = args.bandwidths.split(",")
    times = {}
    for b in bandwidths:
        step = measured_steps(args, check, [baseline] + candidates, b)
        times[b] = {c: steps[c] * step[c] for c in [baseline] + candidates}
        cells = "  ".join(f"{c}: {step[c] * 1e3:.2f} ms/step, {times[b][c]:.1f} s" for c in times[b])
        print(f"{b:>9}  {cells}", flush=True)
    print(f"\nAgainst {baseline} (steps to the target from the full runs of '{check['full']}'):")
    top = bits_per_second(bandwidths[-1])
    for c in candidates:
        predicted = rows[c]["predicted_crossover_bits_per_second"]
        found = crossover(bandwidths, times, c, baseline)
        said = f"  {c}: predicted faster below {predicted / 1e6:.0f} Mbit/s; measured"
        if found is None:
            print(f"{said}: not faster even at {bandwidths[0]}")
        elif found == bandwidths[-1]:
            verdict = "as predicted" if predicted >= top else "the prediction is below the sweep's top"
            print(f"{said}: faster at every swept bandwidth, up to {found} ({verdict})")
        elif predicted >= top:
            print(f"{said}: faster below {found} only, under the sweep's top")
        else:
            measured = interpolated(bandwidths, times, c, baseline, found)
            ratio = max(predicted, measured) / min(predicted, measured)
            print(f"{said}: faster below {measured / 1e6:.0f} Mbit/s (between {found} and the next swept, "
                  f"interpolated): {ratio:.2f}x apart")


if __name__ == "__main__":
    main()
