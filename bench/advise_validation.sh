#!/usr/bin/env bash
# Checks `laconic advise` against emulated links (docs/advise.md, "Validation"): for each setup
# (a link and a number of workers) it advises from probes (thread ranks, the link projected),
# trains the same candidates in full as processes on that link emulated (network namespaces and
# tc: run as root), and prints `laconic advise --check`: predicted against measured steps and
# times to the target, the ranks, and the regret of following the advice and of never
# compressing; then, over every setup checked in DIR, the regret of the advice against never
# compressing and the best single fixed choice (bench/advise_regret.py). About 10 minutes a setup
# on the 2-core machine; all six about an hour.
#   bench/advise_validation.sh [DIR]                 # every setup, into DIR (advise-validation)
#   SETUPS="100Mbit,2 1Gbit,4" bench/advise_validation.sh   # some of them
# The full runs train FULL_EPOCHS epochs (4; the probes the file's 2), so that a candidate whose
# probe did not reach the target can show whether its extrapolated steps were right.
# They are evaluated as often as the probes (EVAL_EVERY: a quarter of an epoch of
# advise-lenet.lua's 60000 examples in batches of 32 per worker; set it for another file).
# Set FILE for other candidates (experiments/advise-lenet.lua), LACONIC for another binary.
# HOST_COSTS="785us,7.02Gbit" advises for the link with this host's own costs per message and rate
# (link { overhead, host_bandwidth }), as the emulated link's full runs pay them: `--link
# LINK,50us,HOST_COSTS`. Calibrate them on means, what a time to the target pays:
# `python3 bench/emulated_vs_projected.py --mean --calibrate-only build/cli/laconic 200` prints them,
# and HOST_COSTS=calibrate runs it three times (--repeat 3, 2 minutes), takes the middle one and
# keeps its figures in DIR/host_costs, so that a rerun into DIR advises with the same ones (and
# resumes the same probes).
# SEEDS=3 probes each candidate with 3 seeds, trained seed by seed (advise's own default; 1 by
# default here, as the figures in docs/advise.md that name no SEEDS were taken). The full runs
# train the file's seeds (advise-lenet.lua: one), or FULL_SEEDS ("1,2,3"): the measured times are
# then over the seeds (the geometric mean of each one's time, as the advice computes its own),
# not one seed's draw. Run again into the same DIR, only what is
# not recorded yet trains (the probes, and the full runs' seeds, are resumed).
# BREAKEVEN=1 also checks each setup's break-even bandwidths: bench/advise_breakeven.py sweeps
# emulated links (25 Mbit/s to 1.6 Gbit/s, 100 steps each; about 3 minutes a setup) and prints the
# predicted break-even beside the measured crossover. GRACE=PICKLE ends with the outside check
# against GRACE's measurements: bench/grace_ranking.py on sands-lab/grace-data's
# GRACE_data_release.pickle (python3-pandas, and laconic_collective_projection from a build with
# -DLACONIC_BUILD_BENCH=ON: docs/advise.md, "Against GRACE's measurements"; PROJECTION for another
# path than build/bench/; it runs under Debian's /usr/bin/python3, whose python3-torch and
# python3-pandas it needs, or PYTHON). All of it in one run:
#   HOST_COSTS=calibrate SEEDS=3 FULL_SEEDS=1,2,3 BREAKEVEN=1 GRACE=GRACE_data_release.pickle \
#     bench/advise_validation.sh DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
laconic="${LACONIC:-$root/build/cli/laconic}"
file="${FILE:-$root/experiments/advise-lenet.lua}"
dir="${1:-advise-validation}"
setups="${SETUPS:-100Mbit,2 1Gbit,2 10Gbit,2 100Mbit,4 1Gbit,4 10Gbit,4}"
full_epochs="${FULL_EPOCHS:-4}"
[ "$(id -u)" -eq 0 ] || { echo "advise_validation: emulated links need root (network namespaces, tc)" >&2; exit 2; }
grace="${GRACE:+$(realpath "$GRACE")}"
python="${PYTHON:-/usr/bin/python3}"
projection="${PROJECTION:-$root/build/bench/laconic_collective_projection}"
if [ -n "${GRACE:-}" ]; then  # what GRACE's check needs, before an hour of training
  [ -s "$grace" ] || { echo "advise_validation: GRACE=$GRACE: no such file" >&2; exit 2; }
  "$python" -c "import pandas, torch" ||
    { echo "advise_validation: GRACE's check needs python3-pandas and python3-torch under $python" >&2; exit 2; }
  [ -x "$projection" ] ||
    { echo "advise_validation: no $projection (cmake -DLACONIC_BUILD_BENCH=ON, target laconic_collective_projection)" >&2; exit 2; }
fi
mkdir -p "$dir"
cp "$file" "$dir/exp.lua"
cd "$dir"
if [ "${HOST_COSTS:-}" = calibrate ]; then
  if [ ! -s host_costs ]; then
    echo "== the host's costs per message and rate, on means, the middle of three calibrations"
    python3 "$root/bench/emulated_vs_projected.py" --mean --calibrate-only --repeat 3 "$laconic" 200 | tee calibration.log
    sed -n 's/.*(--link \.\.\.,\([^)]*\)).*/\1/p' calibration.log >host_costs
    [ -s host_costs ] || { echo "advise_validation: the calibration printed no host costs" >&2; exit 1; }
  fi
  HOST_COSTS="$(cat host_costs)"
  echo "== HOST_COSTS=$HOST_COSTS (from $dir/host_costs)"
fi
for setup in $setups; do
  link="${setup%,*}"
  workers="${setup#*,}"
  full="full-w$workers-$link"
  advised="$link${HOST_COSTS:+,50us,$HOST_COSTS}"
  echo "== $link, $workers workers ($(date +%T))"
  "$laconic" advise exp.lua --workers "$workers" --link "$advised" --seeds "${SEEDS:-1}" --quiet --db validation.db \
    >"advise-w$workers-$advised.log"
  "$laconic" run exp.lua --resume --quiet --db validation.db --set "name=$full" --set "workers=$workers" \
    --set "network.bandwidth=$link" --set network.emulate=true --set "epochs=$full_epochs" \
    --set "eval_every=${EVAL_EVERY:-$((60000 / workers / 32 / 4))}" ${FULL_SEEDS:+--set "seeds=$FULL_SEEDS"} \
    >"full-w$workers-$link.log"
  "$laconic" advise exp.lua --workers "$workers" --link "$advised" --seeds "${SEEDS:-1}" --check "$full" \
    --db validation.db \
    --json "check-w$workers-$advised.json" | tee "check-w$workers-$advised.log" | sed -n '/^The advice on/,$p'
  if [ "${BREAKEVEN:-0}" = 1 ]; then
    echo "== break-even against emulated links, $link, $workers workers ($(date +%T))"
    python3 "$root/bench/advise_breakeven.py" . "check-w$workers-$advised.json" --laconic "$laconic" |
      tee "breakeven-w$workers-$advised.log"
  fi
done
echo "== the regret over every setup checked in $dir (bench/advise_regret.py)"
python3 "$root/bench/advise_regret.py" check-w*.json
if [ -n "$grace" ]; then
  echo "== GRACE's measured ranking against laconic's projection (bench/grace_ranking.py)"
  "$python" "$root/bench/grace_ranking.py" "$grace" --projection "$projection" | tee grace.log
fi
