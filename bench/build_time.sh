#!/usr/bin/env bash
# The quickstart's build (its two programs, laconic and laconic-engine, as scripts/laconic-setup.sh
# quickstart builds them) from a fresh clone, at two revisions, interleaved: the median seconds of
# each and their ratio. docs/benchmarks.md, "Build time".
#
#   bash bench/build_time.sh BEFORE_REV AFTER_REV [ROUNDS=2]
#
# Each round builds BEFORE then AFTER from scratch (configure included), with -j2 as the README's
# commands do; nothing else should run meanwhile. The clones live under a temporary folder.
set -euo pipefail
before=${1:?usage: build_time.sh BEFORE_REV AFTER_REV [ROUNDS]} after=${2:?usage: build_time.sh BEFORE_REV AFTER_REV [ROUNDS]}
rounds=${3:-2}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_once() {  # build_once REV -> seconds on stdout
  local rev=$1 dir="$work/clone"
  rm -rf "$dir"
  git clone -q "$repo" "$dir"
  git -C "$dir" checkout -q "$rev"
  local start end
  start=$(date +%s.%N)
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLACONIC_BUILD_TESTS=ON >/dev/null
  cmake --build "$dir/build" -j2 --target laconic --target laconic-engine >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {print b - a}'
}

times_before=() times_after=()
for ((r = 1; r <= rounds; r++)); do
  b=$(build_once "$before"); times_before+=("$b")
  a=$(build_once "$after"); times_after+=("$a")
  echo "round $r: $before ${b%.*} s, $after ${a%.*} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mb=$(median "${times_before[@]}") ma=$(median "${times_after[@]}")
awk -v n="$rounds" -v b="$before" -v a="$after" -v mb="$mb" -v ma="$ma" \
  'BEGIN {printf "median over %d rounds: %s %.0f s, %s %.0f s, ratio after/before %.3f\n", n, b, mb, a, ma, ma / mb}'
