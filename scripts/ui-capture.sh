#!/usr/bin/env bash
# Pictures of `laconic ui`'s pages, the way people script a capture: the page opened in its
# static mode (?static=1: no live stream, so headless chromium's virtual time can run out) and
# captured by `chromium --headless --screenshot`. docs/ui.md's pictures are made with it:
#   scripts/ui-capture.sh DB OUTDIR VIEW=NAME...
#   scripts/ui-capture.sh small.db docs/images/ui runs=runs run/1=run "compare?runs=1,2,3,4&bands=1=compare" experiment/sweep=experiment
# Each VIEW (the part after '#/') is written to OUTDIR/NAME.png. Needs laconic (LACONIC, default
# build/cli/laconic) and chromium (CHROMIUM, default chromium); every wait is bounded.
set -euo pipefail
db=$1 out=$2
shift 2
laconic=${LACONIC:-build/cli/laconic}
chromium=${CHROMIUM:-chromium}
mkdir -p "$out"
log=$(mktemp)
"$laconic" ui --db "$db" --port 0 >"$log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$log" | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "ui-capture: laconic ui printed no URL: $(cat "$log")" >&2; exit 1; }
for pair in "$@"; do
  view=${pair%=*} name=${pair##*=}
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900 \
    --virtual-time-budget=10000 --screenshot="$out/$name.png" "${url}?static=1#/$view" >/dev/null 2>&1
  echo "ui-capture: $out/$name.png ($view)"
done
