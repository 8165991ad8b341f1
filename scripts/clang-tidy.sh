#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over laconic's sources (not the tests, not
# bench/) from the build's compile_commands.json; exits non-zero on any finding.
#
# Left out: the files compiled against LibTorch (engine/train, engine/catalog.cpp,
# engine/rendezvous_store.cpp and the CLI's engine side). Debian 12's clang-tidy 14 cannot parse
# Debian's LibTorch 1.13 headers with GCC 12's libstdc++ (c10::IValue is an incomplete type to it
# inside std::vector), so every such file fails before a check runs. The script says how many it
# left out. Not part of CI: about 10 minutes on the 2-core machine.
#   bash scripts/clang-tidy.sh [BUILD_DIR]        default build/, as the setup script configures it
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
[ -f "$build/compile_commands.json" ] ||
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
# laconic --version's header is written at build time; clang-tidy needs it to parse the CLI.
cmake --build "$build" --target laconic_git_describe >/dev/null
cd "$root"
mapfile -t files < <(python3 - "$build/compile_commands.json" <<'PY'
import json, os, sys
entries = json.load(open(sys.argv[1]))
root = os.getcwd() + "/"
kept, skipped = [], 0
for e in entries:
    f = e["file"]
    if not f.startswith(root) or "/tests/" in f or "/bench/" in f or "/build" in f[len(root):len(root) + 6]:
        continue
    if "torch" in e.get("command", " ".join(e.get("arguments", []))):
        skipped += 1
        continue
    kept.append(f)
print(f"clang-tidy: {len(kept)} files; {skipped} compiled against LibTorch left out (see the header)", file=sys.stderr)
print("\n".join(sorted(set(kept))))
PY
)
run-clang-tidy -quiet -p "$build" -j "${LACONIC_JOBS:-2}" "${files[@]}"
