#!/usr/bin/env python3
"""The folders of laconic's source and the includes between them, from the sources themselves.

    python3 scripts/include-map.py            # the map: each folder and the folders it includes
    python3 scripts/include-map.py --check    # the same, and exit 1 naming every include that
                                              # points up the layers (ctest runs this)

The layers, lowest first (LAYERS below; docs/architecture.md draws them): a folder may include
its own headers and those of folders below it, never one above. A subfolder belongs to the layer
of the folder LAYERS names for it (engine/compress/cuda is engine/compress; tests and bench are
not layers and may include anything).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first. A folder given here owns its subfolders unless they are given too.
LAYERS = [
    "engine/core",
    "engine/compress",
    "engine/comm",
    "engine/topology",
    "engine/schedule",
    "engine/train/data",
    "engine/train/optim",
    "engine/train/models",
    "engine/train",
    "engine",
    "lua",
    "storage",
    "reports",
    "advise",
    "ui",
    "controller",
    "cli",
]
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str):
    """The layer a path inside the tree belongs to (the longest LAYERS prefix), or None."""
    best = None
    for layer in LAYERS:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def include_edges():
    """{(from_layer, to_layer): [(file, included path), ...]} over every source of every layer."""
    edges = {}
    for layer in LAYERS:
        for file in sorted((ROOT / layer).rglob("*")):
            if file.suffix not in SOURCES or not file.is_file():
                continue
            relative = file.relative_to(ROOT).as_posix()
            if layer_of(relative) != layer:
                continue  # a subfolder that is a layer of its own
            for included in INCLUDE.findall(file.read_text(errors="replace")):
                target = layer_of(included)
                if target is not None and target != layer:
                    edges.setdefault((layer, target), []).append((relative, included))
    return edges


def main():
    check = "--check" in sys.argv[1:]
    edges = include_edges()
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    print("folder -> the folders it includes (includes), lowest layer first")
    for layer in LAYERS:
        targets = sorted((t for (f, t) in edges if f == layer), key=lambda t: -rank[t])
        text = ", ".join(f"{t} ({len(edges[(layer, t)])})" for t in targets) or "-"
        print(f"  {layer} -> {text}")
    upward = [(f, t, where) for (f, t), where in edges.items() if rank[t] > rank[f]]
    for f, t, where in sorted(upward):
        for file, included in where:
            print(f"up the layers: {file} includes {included} ({f} is below {t})")
    if check:
        if upward:
            return 1
        print(f"include-map: every include of {len(LAYERS)} layers points down or within its folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
