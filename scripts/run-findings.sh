#!/usr/bin/env bash
# Runs the experiments behind docs/experiments.md's "Findings" into one database (default
# findings.db in the current directory), then prints the numbers the table quotes. Each
# experiment is resumable: run it again and only what is missing runs.
#   bash scripts/run-findings.sh [DB]        about an hour and a half on the 2-core development machine
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
laconic="${LACONIC:-$root/build/cli/laconic}"
db="${1:-findings.db}"
run() { "$laconic" run --resume --quiet "$@" --db "$db"; }
run "$root/experiments/exchange-modes.lua"
run "$root/experiments/randomk-momentum.lua"
run "$root/experiments/sparse-no-momentum.lua"
run "$root/experiments/randomk-low-lr.lua"
run "$root/experiments/workers-scale.lua"
run "$root/experiments/oland-raj-2015.lua"
run "$root/experiments/parameter-server.lua"
# Harris 2020 at hidden 100 only (40 of the file's 80 runs): its claims are about the methods,
# which the smaller model repeats (the file's comment: about 45 minutes for all 80).
run "$root/experiments/harris-2020.lua" --only hidden=100
"$laconic" query --db "$db" "$(cat "$root/scripts/findings.sql")"
