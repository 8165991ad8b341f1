#!/usr/bin/env bash
# Sets laconic up on Debian 12 (as root, or with sudo): installs the Debian packages that are
# missing, configures and builds (Release, -j2), then either
#   quickstart  runs experiments/quickstart.lua (skipping runs already finished) and its report,
#   test        runs the test suite with ctest (the fast tests, then a bounded slow subset).
# Running it again skips what is already done: installed packages, built objects, finished runs.
set -euo pipefail

mode="${1:-quickstart}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LACONIC_BUILD_DIR:-$root/build}"
jobs="${LACONIC_JOBS:-2}"

packages=(
  build-essential cmake pkg-config
  libtorch-dev libgloo-dev liblua5.4-dev libsqlite3-dev zlib1g-dev
  libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev
  dataset-fashion-mnist gnuplot-nox sqlite3
)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "laconic-setup: all ${#packages[@]} Debian packages present"
    return
  fi
  echo "laconic-setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build_project() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLACONIC_BUILD_TESTS=ON >/dev/null
  cmake --build "$build" -j"$jobs"
}

case "$mode" in
  quickstart)
    install_packages
    build_project
    cd "$root"
    "$build/cli/laconic" run --resume experiments/quickstart.lua
    "$build/cli/laconic" runs --experiment quickstart
    "$build/cli/laconic" report quickstart
    echo "laconic-setup: open $root/laconic-reports/quickstart/index.html"
    ;;
  test)
    install_packages
    build_project
    # Fast tests first; then the slow ones, which are bounded by ctest's per-test timeout.
    ctest --test-dir "$build" --output-on-failure -LE slow
    ctest --test-dir "$build" --output-on-failure -L slow --no-tests=ignore
    ;;
  *)
    echo "usage: $0 [quickstart|test]" >&2
    exit 2
    ;;
esac
