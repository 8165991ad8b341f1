#!/bin/bash
# An elastic run (elastic = true) on an emulated link whose worker 2's link goes down once the run
# has recorded CUT_AFTER steps of worker 0, and comes up again DOWN_FOR seconds later: prints what
# the run recorded of the loss, the regroup and the relaunch's return, and why worker 2 left
# (docs/topologies.md, "Elastic runs": a host that drops off). Needs root (network namespaces).
#   bench/elastic_cut.sh [LACONIC] [OUT_DIR]   (defaults: build/cli/laconic, a new temporary folder)
set -euo pipefail
laconic=$(realpath "${1:-build/cli/laconic}")
out=${2:-$(mktemp -d)}
cut_after=${CUT_AFTER:-1000}
down_for=${DOWN_FOR:-15}
mkdir -p "$out" && cd "$out"
cat > cut.lua <<'LUA'
experiment {
  name = "cut",
  data = synthetic { shape = {1, 8, 8}, n = 9600, test_n = 64 },
  model = mlp { sizes = {64, 64, 10} },
  optimizer = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 16, workers = 3, epochs = 100, eval_limit = 64, timeout = 6,
  network = link { bandwidth = "1Gbit", emulate = true },
  elastic = true,
}
LUA
rm -f cut.db
"$laconic" run cut.lua --db cut.db > run.log 2>&1 &
controller=$!
steps() { "$laconic" query --db cut.db --format csv \
  "SELECT count(*) FROM metrics WHERE key = 'train_loss' AND worker = 0" 2>/dev/null | tail -1 || echo 0; }
for _ in $(seq 1 1200); do
  [ "$(steps)" -ge "$cut_after" ] 2>/dev/null && break
  sleep 0.1
done
ns=$(ls /run/netns | grep -- "^laconic-net-$controller-.*-r2\$" || true)
[ -n "$ns" ] || { echo "worker 2's network namespace not found" >&2; exit 1; }
ip -n "$ns" link set eth0 down
echo "$(date +%T) worker 2's link down (namespace $ns) after $cut_after recorded steps"
sleep "$down_for"
ip -n "$ns" link set eth0 up
echo "$(date +%T) worker 2's link up again"
wait "$controller"
tail -2 run.log
"$laconic" query --db cut.db \
  "SELECT m.step, m.key, m.worker, round(m.value, 4) AS value FROM metrics m
   WHERE m.key IN ('member_change', 'members', 'detect_seconds', 'regroup_seconds', 'join_seconds', 'join_bytes')
   ORDER BY m.step, m.key"
"$laconic" query --db cut.db "SELECT value AS elastic_relaunches FROM run_facts WHERE key = 'elastic_relaunches'"
