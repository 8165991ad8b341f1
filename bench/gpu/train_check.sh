#!/bin/bash
# The GPU training check of issue 69, in one go on a GPU node with PyTorch (CUDA), cmake, ninja and
# nvcc but none of Debian's packages: unpack the carried ones (bench/gpu/carry-debs.sh, run first
# where apt works) into a prefix, build laconic against that node's LibTorch (PyTorch's), train
# LeNet-5 and the default transformer on the GPU at 2 and 4 ranks sharing the card with none, fp16
# and Top-k (bench/gpu/lenet5.lua, gpt.lua) into gpu.db, profile the same card
# (scripts/profile-hardware.py), compare laconic's compute per step with the profile's at one
# worker (bench/hardware_profile_check.py --device cuda), time the CUDA kernels
# (laconic_compress_cuda_bench), and print the tables (bench/gpu/gpu_tables.py). Each stage is
# bounded by a timeout; the whole stays under 8 minutes where the build takes under 4.
#
# usage (from the repository's root): bench/gpu/train_check.sh OUT_DIR
#   OUT_DIR gets: environment.txt, build.log, version.txt, train.log, gpu.db, profile.json,
#   profile_check.md, kernels.json, kernels.md, tables.md
# A rehearsal of the same stages where there is no GPU (the carried packages still unpacked):
#   CHECK_DEVICE=cpu CHECK_BUILD=build CHECK_STEPS=4 CHECK_PYTHON=/usr/bin/python3 bench/gpu/train_check.sh OUT
#   CHECK_DEVICE  cuda (default) or cpu: where the runs, the profile and the comparison compute
#   CHECK_BUILD   an existing build to use instead of configuring and building one
#   CHECK_STEPS   max_steps of the training runs instead of the files' 120, and the profiles' timed steps
#   CHECK_PYTHON  the Python with PyTorch (default python3; Debian's is /usr/bin/python3)
# Exit status: 0 when the build and both trainings finished, else the first failure's.
set -uo pipefail
out=${1:?usage: bench/gpu/train_check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
prefix=/tmp/laconic-prefix
python=${CHECK_PYTHON:-python3}
stage() { echo "== $* ($(date +%T))" | tee -a "$out/train.log"; }

stage "environment"
# nvcc and the toolkit CMake finds for PyTorch's CUDA libraries
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
  cmake --version | head -1; ninja --version; nvcc --version | tail -1; nproc
} >"$out/environment.txt" 2>&1
cat "$out/environment.txt"

stage "unpack the carried Debian packages into $prefix"
bench/gpu/unpack-debs.sh "$prefix" >>"$out/train.log" 2>&1 || exit 2
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$prefix/usr/lib:$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu:$torch_lib:${LD_LIBRARY_PATH:-}"
export PKG_CONFIG_PATH="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig"

device=${CHECK_DEVICE:-cuda}
runs=(--set "device=$device()")
[ -n "${CHECK_STEPS:-}" ] && runs+=(--set "max_steps=$CHECK_STEPS")
stage "configure and build against PyTorch's LibTorch ($torch_prefix)"
build=${CHECK_BUILD:-/tmp/laconic-build}
configure() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLACONIC_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr" -DLACONIC_UPLOT_DIST="$root/.carry/uplot" \
    -DLACONIC_WITH_CUDA="$1" >>"$out/build.log" 2>&1
}
with_cuda=OFF
if [ -z "${CHECK_BUILD:-}" ]; then
  with_cuda=ON
  configure ON || { with_cuda=OFF; rm -rf "$build"; configure OFF; } || { tail -40 "$out/build.log"; exit 3; }
  targets="laconic laconic-engine"
  [ "$with_cuda" = ON ] && targets="$targets laconic_compress_cuda_bench"
  # -k 0: every error of a failed build in one log, not the first file's alone
  timeout 300 cmake --build "$build" -j "$(nproc)" --target $targets -- -k 0 >>"$out/build.log" 2>&1 ||
    { grep -m 60 -E 'error|Error' "$out/build.log"; tail -20 "$out/build.log"; exit 4; }
fi
laconic="$build/cli/laconic"
"$laconic" --version | tee "$out/version.txt"

stage "train on the $device"
status=0
fashion="$prefix/usr/share/datasets/fashion-mnist"
pods=$(ls -d "$prefix"/usr/share/perl/*/pod | head -1)
train() {  # FILE DATA_ROOT: one experiment's runs into gpu.db; on a crash, the backtrace (cuda-gdb)
  # laconic, not laconic-engine: it pins the workers' OpenMP and BLAS threads before it execs the engine
  local command=("$laconic" run "$1" --db "$out/gpu.db" --set "data.root=$2" "${runs[@]}")
  timeout 120 "${command[@]}" >>"$out/train.log" 2>&1 && return 0
  local code=$?
  if [ $code -ge 128 ] && [ $code -ne 137 ] && command -v cuda-gdb >/dev/null; then
    stage "crashed with signal $((code - 128)): the backtrace into backtrace.txt"
    timeout 120 cuda-gdb -q -batch -ex run -ex bt -ex 'thread apply all bt 12' -ex 'info sharedlibrary' \
      --args "${command[@]}" --set "name=crash-$(basename "$1" .lua)" >>"$out/backtrace.txt" 2>&1
  fi
  return $code
}
train bench/gpu/lenet5.lua "$fashion" || status=5
train bench/gpu/gpt.lua "$pods" || { [ $status = 0 ] && status=6; }
tail -15 "$out/train.log"

stage "profile the same card"
steps=${CHECK_STEPS:-30}
warmup=$([ -n "${CHECK_STEPS:-}" ] && echo 2 || echo 10)
PYTHONUNBUFFERED=1 timeout 60 "$python" scripts/profile-hardware.py --device "$device" --models lenet5,gpt \
  --batch-size 64,32 --steps "$steps" --warmup "$warmup" --out "$out/profile.json" >>"$out/train.log" 2>&1
stage "laconic's compute against the profile's, one worker"
PYTHONUNBUFFERED=1 timeout 90 "$python" bench/hardware_profile_check.py "$laconic" --device "$device" \
  --models lenet5,gpt --repetitions 2 --steps "$steps" --warmup "$warmup" --fashion-root "$fashion" \
  --python "$(command -v "$python")" \
  >"$out/profile_check.md" 2>>"$out/train.log"
cat "$out/profile_check.md"
if [ "$with_cuda" = ON ]; then
  stage "the CUDA kernels' costs"
  timeout 60 "$build/bench/cuda/laconic_compress_cuda_bench" --out "$out/kernels.json" >"$out/kernels.md" 2>&1
fi
stage "tables"
"$python" bench/gpu/gpu_tables.py "$out/gpu.db" "$out/profile.json" \
  $([ -s "$out/kernels.json" ] && echo "$out/kernels.json") --skip "$([ -n "${CHECK_STEPS:-}" ] && echo 1 || echo 20)" |
  tee "$out/tables.md"
stage "done: exit $status"
exit $status
