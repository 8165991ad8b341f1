#!/usr/bin/env bash
# Checks advise's layer plan (docs/advise.md, "Which layers to leave dense") against full runs:
# advises on LINK at WORKERS (probes of FILE), then trains each of CANDIDATES with scope = "layer"
# at every split of LeNet-5's layers (min_size 0: compress every layer; 11, 151, 2401: leave the
# layers under it dense; 1000000: every layer dense) as processes on the link emulated for real
# (network namespaces and tc: run as root), SEEDS seeds each, and prints `laconic advise --check`:
# per split the plan's bytes sent, codec and exchange beside the measured ones, and the split
# measured cheapest against the plan's choice. About 3 minutes on the 2-core machine.
#   bench/layer_plan_validation.sh [DIR]     # into DIR (layer-plan-validation)
# LINK (10Gbit), WORKERS (2), HOST_COSTS ("340us,5.6Gbit": the emulation's own costs per message
# and rate, docs/network-model.md; "" for none), STEPS (300 per full run), SEEDS (3),
# CANDIDATES (compressors separated by ';', without scope and min_size), TARGET (0.8: advise plans
# the layers of ranked candidates only, and LeNet-5's Top-k probes of 2 epochs reach 0.8, not the
# default target), FILE, LACONIC. The probes take one seed (`--seeds 1`): the plan reads their
# codec costs and messages, which a seed does not change.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
laconic="${LACONIC:-$root/build/cli/laconic}"
file="${FILE:-$root/experiments/advise-lenet.lua}"
dir="${1:-layer-plan-validation}"
link="${LINK:-10Gbit}"
workers="${WORKERS:-2}"
host_costs="${HOST_COSTS-340us,5.6Gbit}"
steps="${STEPS:-300}"
seeds="${SEEDS:-3}"
target="${TARGET:-0.8}"
default_candidates='topk{ratio=0.1, error_feedback=true}; topk{ratio=0.01, error_feedback=true}'
candidates="${CANDIDATES:-$default_candidates}"
[ "$(id -u)" -eq 0 ] || { echo "layer_plan_validation: emulated links need root (network namespaces, tc)" >&2; exit 2; }
mkdir -p "$dir"
cp "$file" "$dir/exp.lua"
cd "$dir"
advised="$link${host_costs:+,50us,$host_costs}"
sweep=""
IFS=';' read -ra each <<<"$candidates"
for c in "${each[@]}"; do
  c="$(echo "$c" | sed 's/^ *//; s/ *$//')"
  for min_size in 0 11 151 2401 1000000; do
    sweep="$sweep${sweep:+, }${c%\}}, scope=\"layer\", min_size=$min_size}"
  done
done
seed_list="$(seq -s, 1 "$seeds")"
full="layers-w$workers-$link"
echo "== advising on $advised at $workers workers ($(date +%T))"
"$laconic" advise exp.lua --workers "$workers" --link "$advised" --seeds 1 --quiet --db layers.db --target "$target" \
  --set "compressor=sweep{none(), ${candidates//;/,}}" >"advise.log"
sed -n '/^Which layers to leave dense (/,$p' advise.log
echo "== full runs on $link emulated, $steps steps, seeds $seed_list ($(date +%T))"
"$laconic" run exp.lua --resume --quiet --db layers.db --set "name=$full" --set "workers=$workers" \
  --set "network.bandwidth=$link" --set network.emulate=true --set epochs=1 --set "max_steps=$steps" \
  --set "seeds={$seed_list}" --set "compressor=sweep{$sweep}" >"full.log"
echo "== the plan against them ($(date +%T))"
"$laconic" advise exp.lua --workers "$workers" --link "$advised" --check "$full" --db layers.db --target "$target" \
  --set "compressor=sweep{none(), ${candidates//;/,}}" --json check.json | tee check.log |
  sed -n '/^Which layers to leave dense, against/,$p'
