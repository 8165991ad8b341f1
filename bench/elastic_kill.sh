#!/bin/bash
# An elastic run (elastic = true) whose worker 2 is killed with kill -9 once the run has recorded
# KILL_AFTER steps: prints what the run recorded of the loss, the regroup and the relaunch's
# return (docs/topologies.md, "Elastic runs"), and the calm run's test accuracy beside it.
#   bench/elastic_kill.sh [LACONIC] [OUT_DIR]   (defaults: build/cli/laconic, a new temporary folder)
set -euo pipefail
laconic=$(realpath "${1:-build/cli/laconic}")
out=${2:-$(mktemp -d)}
kill_after=${KILL_AFTER:-500}
mkdir -p "$out" && cd "$out"
cat > elastic.lua <<'LUA'
experiment {
  name = "elastic",
  data = fashion_mnist(),
  model = lenet5(),
  optimizer = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 32, workers = 4, max_steps = 150, epochs = 8, eval_limit = 1000, timeout = 30,
  elastic = sweep { false, true },
}
LUA
rm -f elastic.db
# The calm run first (elastic = false), then the elastic one, whose worker 2 is killed.
"$laconic" run elastic.lua --db elastic.db > run.log 2>&1 &
controller=$!
steps() { "$laconic" query --db elastic.db --format csv \
  "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.name LIKE 'elastic=true%' AND m.key = 'train_loss' AND m.worker = 0" 2>/dev/null | tail -1 || echo 0; }
for _ in $(seq 1 1200); do
  [ "$(steps)" -ge "$kill_after" ] 2>/dev/null && break
  sleep 0.1
done
victim=""
for pid in $(pgrep -P "$controller"); do
  [ "$(cat /proc/"$pid"/comm)" = "laconic rank 2" ] && victim=$pid
done
[ -n "$victim" ] || { echo "worker 2 of the elastic run not found" >&2; exit 1; }
kill -9 "$victim"
echo "killed worker 2 (pid $victim) after $kill_after recorded steps"
wait "$controller"
tail -3 run.log
"$laconic" query --db elastic.db \
  "SELECT r.name AS run, m.step, m.key, m.worker, round(m.value, 4) AS value FROM metrics m JOIN runs r ON r.id = m.run_id
   WHERE m.key IN ('member_change', 'members', 'detect_seconds', 'regroup_seconds', 'join_seconds', 'join_bytes')
   ORDER BY m.step, m.key"
"$laconic" query --db elastic.db \
  "SELECT r.name AS run, round(m.value, 4) AS final_test_accuracy FROM metrics m JOIN runs r ON r.id = m.run_id
   WHERE m.key = 'test_accuracy' AND m.step = (SELECT max(step) FROM metrics WHERE run_id = r.id AND key = 'test_accuracy')"
"$laconic" query --db elastic.db \
  "SELECT r.name AS run, value AS elastic_relaunches FROM run_facts f JOIN runs r ON r.id = f.run_id WHERE f.key = 'elastic_relaunches'"
