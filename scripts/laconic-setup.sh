#!/usr/bin/env bash
# Sets laconic up on Debian 12 (as root, or with sudo): installs the Debian packages that are
# missing, configures (Release), then either
#   quickstart  builds laconic and laconic-engine only (-j2), runs experiments/quickstart.lua
#               (skipping runs already finished) and writes its report,
#   test        builds everything, tests included (and the CUDA kernels where nvcc is installed),
#               and runs the test suite with ctest (the fast tests, then a bounded slow subset);
#               also installs Chromium, which a test opens the report in.
# Running it again skips what is already done: installed packages, built objects, finished runs.
# OpenBLAS (libopenblas0-pthread) becomes the system's libblas.so.3, which LibTorch uses: about
# 2x faster training steps than Debian's reference BLAS. Each rank runs one thread. iproute2 (ip,
# tc) builds emulated links (network = link { emulate = true }, as root). perl-doc is the English
# corpus of the perldoc dataset (experiments/gpt.lua; docs/models-and-data.md): text, no daemon.
set -euo pipefail

mode="${1:-quickstart}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LACONIC_BUILD_DIR:-$root/build}"
jobs="${LACONIC_JOBS:-2}"

packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libgloo-dev libhiredis-dev liblua5.4-dev libsqlite3-dev zlib1g-dev
  libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev libcpp-httplib-dev
  dataset-fashion-mnist perl-doc gnuplot-nox sqlite3 libopenblas0-pthread
  iproute2
)
# Only the test suite needs these: tests open the report and `laconic ui` in headless Chromium;
# the multi-host tests start ranks with torchrun (python3-torch) and mpirun (openmpi-bin) and
# meet through a Redis server (redis-server; started by the test itself, on loopback).
test_packages=(chromium python3-torch openmpi-bin redis-server)

install_packages() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # The build fetches `laconic ui`'s chart library with npm (ui/package-lock.json). A Node.js
  # that brings its own npm (NodeSource's) is kept; else Debian's nodejs and npm.
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  if [ ${#missing[@]} -eq 0 ]; then
    echo "laconic-setup: all $((${#packages[@]} + $#)) Debian packages present, and npm"
    report_blas
    return
  fi
  echo "laconic-setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  report_blas
}

# Which BLAS LibTorch will load: the alternatives system's libblas.so.3.
report_blas() {
  local blas
  blas="$(readlink -f "/usr/lib/$(gcc -print-multiarch)/libblas.so.3" 2>/dev/null || true)"
  echo "laconic-setup: libblas.so.3 is ${blas:-missing}"
  case "$blas" in
    *openblas*) ;;
    *) echo "laconic-setup: warning: not OpenBLAS; training steps run about 2x slower" \
            "(update-alternatives --config libblas.so.3-$(gcc -print-multiarch))" ;;
  esac
}

# The CUDA kernels (engine/compress/cuda) are built with the tests where nvcc is installed (the
# CUDA toolkit is not a Debian package here: /usr/local/cuda, or LACONIC_NVCC); their tests run
# only where a GPU is, and report themselves skipped elsewhere. Nothing else needs nvcc.
cuda_options() {
  local nvcc="${LACONIC_NVCC:-/usr/local/cuda/bin/nvcc}"
  if [ -x "$nvcc" ]; then
    echo "laconic-setup: $("$nvcc" --version | tail -1); building the CUDA kernels too" >&2
    echo "-DLACONIC_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER=$nvcc"
  else
    echo "laconic-setup: no nvcc at $nvcc: the CUDA kernels are not built (LACONIC_WITH_CUDA off)" >&2
  fi
}

# build_project [TARGET...]: configure, then build the targets (everything when none).
build_project() {
  local options=()
  [ "$mode" = test ] && read -r -a options <<<"$(cuda_options)"
  # Ninja for a new build folder (it keeps both cores busy to the end); a folder configured
  # before keeps its generator, which CMake cannot change in place.
  [ -f "$build/CMakeCache.txt" ] || options+=(-G Ninja)
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLACONIC_BUILD_TESTS=ON "${options[@]}" >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$build" -j"$jobs" "${targets[@]}"
}

case "$mode" in
  quickstart)
    install_packages
    build_project laconic laconic-engine
    cd "$root"
    "$build/cli/laconic" run --resume experiments/quickstart.lua
    "$build/cli/laconic" runs --experiment quickstart
    "$build/cli/laconic" report quickstart
    echo "laconic-setup: open $root/laconic-reports/quickstart/index.html"
    ;;
  test)
    install_packages "${test_packages[@]}"
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
