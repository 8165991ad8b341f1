#!/bin/sh
# Storage at scale: ingest through the real writer, the writer's peak memory, and the read
# commands on a database of 1,000 runs and 10M metric rows. Figures: docs/benchmarks.md.
#
#   bench/storage_bench.sh [BUILD_DIR] [ROWS] [RUNS]
#
# BUILD_DIR (default build) must hold laconic_storage_bench (-DLACONIC_BUILD_BENCH=ON) and
# laconic. ROWS (default 10000000) and RUNS (default 1000) size the big database; the ingest
# median is taken over 3 builds of ROWS/10 rows in RUNS/10 runs. Needs about 1 GB of disk under
# $TMPDIR.
# READ_ONLY=1 skips the builds and times the read commands on the database a previous run left.
set -eu
BUILD=${1:-build}
ROWS=${2:-10000000}
RUNS=${3:-1000}
BENCH="$BUILD/bench/laconic_storage_bench"
LACONIC="$(cd "$(dirname "$BUILD/cli/laconic")" && pwd)/laconic"
DIR=${TMPDIR:-/tmp}/laconic-storage-bench
mkdir -p "$DIR"
DB="$DIR/scale.db"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if [ "${READ_ONLY:-0}" != 1 ]; then
# The quick ingests keep the full build's shape (rows per run), at a tenth of the size.
echo "## ingest: $((RUNS / 10)) runs, $((ROWS / 10)) rows, 3 repetitions"
for i in 1 2 3; do
  "$BENCH" build --db "$DIR/small.db" --runs $((RUNS / 10)) --rows $((ROWS / 10)) | tee -a "$DIR/small.txt"
done
printf 'median rows/s: '
sed 's/.* s: \([0-9]*\) rows\/s.*/\1/' "$DIR/small.txt" | median
printf 'median rows per CPU second: '
sed 's/.*CPU s: \([0-9]*\) rows per CPU.*/\1/' "$DIR/small.txt" | median
rm -f "$DIR/small.txt" "$DIR"/small.db*

# What a run costs besides its rows (adding, starting and finishing it, opening its sink, the
# last partial batch): runs of about 50 rows each.
echo "## per-run cost: $RUNS runs of about 50 rows"
"$BENCH" build --db "$DIR/small.db" --runs "$RUNS" --rows $((RUNS * 50))
rm -f "$DIR"/small.db*

echo "## ingest: $RUNS runs, $ROWS rows (the database the read commands use)"
"$BENCH" build --db "$DB" --runs "$RUNS" --rows "$ROWS"
ls -l "$DB"

echo "## writer peak memory: one run streaming 1M and 10M rows"
"$BENCH" stream --db "$DIR/stream.db" --rows 1000000
"$BENCH" stream --db "$DIR/stream.db" --rows 10000000
rm -f "$DIR"/stream.db*
fi

echo "## read commands on $DB"
cd "$DIR"
if command -v hyperfine >/dev/null 2>&1; then
  # The first command is start-up alone (a missing database): laconic does not link LibTorch
  # (run, worker, check and list exec laconic-engine), so it starts in milliseconds.
  hyperfine --warmup 1 --runs 5 -i --export-json "$DIR/read.json" \
    "$LACONIC runs --db $DIR/missing.db" \
    "$LACONIC runs --db $DB" \
    "$LACONIC runs --db $DB --experiment scale-3" \
    "$LACONIC runs --db $DB --where compressor=topk --where ratio=0.01" \
    "$LACONIC best --db $DB --experiment scale-3 --metric test_accuracy" \
    "$LACONIC show --db $DB 500" \
    "$LACONIC report scale-3 --db $DB --out $DIR/report"
  python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("median %.3f s  user %.3f s  %s" % (r["median"], r["user"], r["command"]))' "$DIR/read.json"
else
  for command in "runs --db $DB" "runs --db $DB --experiment scale-3" "report scale-3 --db $DB --out $DIR/report"; do
    for i in 1 2 3 4 5; do
      start=$(date +%s.%N)
      $LACONIC $command >/dev/null
      end=$(date +%s.%N)
      echo "$end - $start" | bc
    done | median | sed "s|^|median s: laconic $command: |"
  done
fi
