#!/bin/bash
# On a GPU node, in one go: the CUDA kernels' tests (tests/compress_cuda), the same tests under
# compute-sanitizer's memcheck (the statistical one left out: it only repeats the others' launches),
# the kernels' benchmark with its profile-format costs, and PyTorch's reference figures.
#
# usage: bench/cuda/gpu_check.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR  a build with -DLACONIC_WITH_CUDA=ON (its tests/compress_cuda and bench/cuda binaries)
#   OUT_DIR    where the logs go (default: the current directory): gpu.txt, tests.log, memcheck.log,
#              bench.md, gpu-compressors.json, torch.log, torch.json
# Each step is bounded by a timeout; the exit status is the tests' (0 when they all passed).
set -uo pipefail
build=${1:?usage: bench/cuda/gpu_check.sh BUILD_DIR [OUT_DIR]}
out=${2:-.}
tests="$build/tests/compress_cuda/laconic_compress_cuda_tests"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/gpu.txt"
timeout 240 "$tests" --durations yes >"$out/tests.log" 2>&1
status=$?
tail -5 "$out/tests.log"
if command -v compute-sanitizer >/dev/null; then
  timeout 240 compute-sanitizer --tool memcheck "$tests" '~*unbiased*' >"$out/memcheck.log" 2>&1
  echo "memcheck: exit $? ($(grep -c 'Invalid' "$out/memcheck.log") invalid accesses reported)"
  tail -3 "$out/memcheck.log"
fi
timeout 240 "$build/bench/cuda/laconic_compress_cuda_bench" --out "$out/gpu-compressors.json" 2>&1 | tee "$out/bench.md"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_compress_reference.py --json "$out/torch.json" 2>&1 |
  tee "$out/torch.log"
exit $status
