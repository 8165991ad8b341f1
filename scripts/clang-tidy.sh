#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over every laconic source file (not the
# tests, not bench/), from the build's compile_commands.json; exits non-zero on any finding.
# Not part of CI: on the 2-core machine it takes about half an hour (LibTorch's headers).
#   bash scripts/clang-tidy.sh [BUILD_DIR]        default build/, configured by the setup script
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
if [ ! -f "$build/compile_commands.json" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi
cd "$root"
files=$(git ls-files 'engine/*.cpp' 'lua/*.cpp' 'storage/*.cpp' 'reports/*.cpp' 'cli/*.cpp')
run-clang-tidy -quiet -p "$build" -j "${LACONIC_JOBS:-2}" $files
