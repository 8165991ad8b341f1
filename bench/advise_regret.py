#!/usr/bin/env python3
"""The regret of following `laconic advise` over several setups, against never compressing and
against the best single fixed choice in hindsight (the one candidate that, used everywhere, would
have lost least). Reads the JSON that `laconic advise --check FULL --json FILE` writes per setup
(bench/advise_validation.sh writes check-wN-LINK.json).

A regret is a candidate's measured time to the target over the setup's fastest, less 1 (0: it was
the fastest); a candidate whose full runs did not reach the target has an infinite one. Where the
advice gave intervals (probes with two or more seeds, or extrapolated curves), it also counts the
measured times that fell within them.

Usage: python3 bench/advise_regret.py DIR/check-*.json
"""
import json
import math
import statistics
import sys


def regrets_of(check):
    """Every candidate's regret in one setup."""
    times = {r["candidate"]: r["measured_time_seconds"] for r in check["rows"]}
    reached = [t for t in times.values() if t is not None]
    if not reached:
        return {}
    best = min(reached)
    return {name: (t / best - 1 if t is not None else math.inf) for name, t in times.items()}


def percent(x):
    return "did not reach" if math.isinf(x) else f"+{100 * x:.0f}%"


def mean(xs):
    return math.inf if any(math.isinf(x) for x in xs) else statistics.mean(xs)


def main(paths):
    setups = []
    for path in paths:
        with open(path) as f:
            check = json.load(f)
        regrets = regrets_of(check)
        if not regrets:
            print(f"{path}: no full run reached the target; left out")
            continue
        setups.append((f"{check['link']}, {check['workers']} workers", check, regrets))
    if not setups:
        sys.exit("advise_regret: no setup with a full run that reached the target")
    candidates = sorted(set.intersection(*(set(r) for _, _, r in setups)))
    fixed = {c: [r[c] for _, _, r in setups] for c in candidates}
    best_fixed = min(candidates, key=lambda c: (mean(fixed[c]), max(fixed[c])))
    advice = [r.get(check["first"], math.inf) for _, check, r in setups]
    baseline = [check["baseline_regret"] if check["baseline_regret"] is not None else math.inf
                for _, check, _ in setups]
    print(f"{'setup':34} {'advice':>14} {'never compress':>15} {'best fixed: ' + best_fixed:>40}")
    for (name, _, _), a, b, f in zip(setups, advice, baseline, fixed[best_fixed]):
        print(f"{name:34} {percent(a):>14} {percent(b):>15} {percent(f):>40}")
    print(f"{'mean':34} {percent(mean(advice)):>14} {percent(mean(baseline)):>15} {percent(mean(fixed[best_fixed])):>40}")
    print(f"{'worst':34} {percent(max(advice)):>14} {percent(max(baseline)):>15} {percent(max(fixed[best_fixed])):>40}")
    within = sum(1 for a in advice if a <= 0.10)
    print(f"\nThe advice's first choice was the measured fastest, or within 10% of it, in {within} of {len(setups)} "
          f"setups. Best fixed choice in hindsight: {best_fixed} (the lowest mean regret over these setups).")
    # Checks written since the check counts them (within_interval, with_interval).
    covered = [check for _, check, _ in setups if check.get("with_interval")]
    if covered:
        inside = sum(check["within_interval"] for check in covered)
        total = sum(check["with_interval"] for check in covered)
        print(f"Measured times within the advice's intervals (95% over seeds, or 80% of a curve's fit): {inside} of "
              f"{total} candidates, over the {len(covered)} setups whose advice gave intervals.")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
