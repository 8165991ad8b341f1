#!/usr/bin/env bash
# Opens a laconic report in headless Chromium (Debian's `chromium` package) and checks that the
# browser decoded every figure: each <img> complete with a non-zero natural width, and no
# "Figure missing" box. Writes a screenshot next to the report (or where --screenshot says).
#
#   scripts/check-report-in-chromium.sh laconic-reports/quickstart/index.html [--figures N] [--screenshot FILE]
#
# Exit status: 0 when N figures (default: every <img>, at least one) were drawn, 1 when not,
# 2 for a usage error or a missing Chromium.
set -euo pipefail

usage() { echo "usage: $0 INDEX.html [--figures N] [--screenshot FILE.png]" >&2; exit 2; }
[ $# -ge 1 ] || usage
page="$1"; shift
want=""
screenshot=""
while [ $# -gt 0 ]; do
  case "$1" in
    --figures) want="${2:?}"; shift 2 ;;
    --screenshot) screenshot="${2:?}"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$page" ] || { echo "check-report: no such file: $page" >&2; exit 2; }
browser="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$browser" ] || { echo "check-report: chromium is not installed (apt-get install chromium)" >&2; exit 2; }
page="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
[ -n "$screenshot" ] || screenshot="$(dirname "$page")/screenshot.png"

work="$(mktemp -d "${TMPDIR:-/tmp}/laconic-chromium-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The flags that keep Chromium from reaching for the network and from needing a display or a
# sandbox (root in CI); a fresh profile each time.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars "--user-data-dir=$work/profile")

# A copy of the page with a script that, once everything loaded, writes what the browser decoded
# into an attribute of <body>; --dump-dom prints the DOM after load.
probe="$work/probe.html"
sed 's#</body>#<script>window.addEventListener("load", function () {\
  var images = Array.prototype.slice.call(document.images);\
  var drawn = images.filter(function (i) { return i.complete \&\& i.naturalWidth > 0; }).length;\
  var missing = document.querySelectorAll(".missing").length;\
  document.body.setAttribute("data-laconic-check", drawn + " " + images.length + " " + missing);\
});</script></body>#' "$page" > "$probe"
dom="$(timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=10000 --dump-dom "file://$probe" 2>"$work/stderr")" || {
  echo "check-report: chromium failed:" >&2; tail -5 "$work/stderr" >&2; exit 1; }
read -r drawn total missing < <(printf '%s' "$dom" | sed -n 's/.*data-laconic-check="\([0-9]*\) \([0-9]*\) \([0-9]*\)".*/\1 \2 \3/p' | head -1) || true
if [ -z "${drawn:-}" ]; then
  echo "check-report: the page never finished loading in chromium" >&2
  exit 1
fi
timeout 120 "$browser" "${flags[@]}" --window-size=1280,6000 "--screenshot=$screenshot" "file://$page" \
  >/dev/null 2>>"$work/stderr" || echo "check-report: warning: no screenshot written" >&2
echo "check-report: $page: chromium drew $drawn of $total figures; missing boxes: $missing; screenshot: $screenshot"
[ -n "$want" ] || want="$total"
if [ "$total" -lt 1 ] || [ "$drawn" -ne "$want" ] || [ "$total" -ne "$want" ] || [ "$missing" -ne 0 ]; then
  echo "check-report: expected $want drawn figures and no missing box" >&2
  exit 1
fi
