#!/usr/bin/env python3
"""Functions that two files of one target define in their anonymous namespaces with different
parameters: in a unity build, a silent overload.

    python3 scripts/unity-names.py           # list them
    python3 scripts/unity-names.py --check   # and exit 1 if there is one (ctest runs this)

A unity build (LACONIC_UNITY_BUILD, README) concatenates a target's files in batches, so two files'
anonymous namespaces become one. Two types, constants or functions of one name and signature are
then a compile error, loud; two functions of one name whose parameters differ are two overloads,
and a call may silently take the other file's (a shape printed "1x28x28" instead of
"[1, 28, 28]", found when engine/train was split into folders). Which files share a batch changes
as files are added or moved, so this lists every function name defined at the top of an anonymous
namespace in two files of one target with different parameters (a target: the source folders its
CMakeLists.txt globs or lists; tests: one per folder). Rename one, or share one in a header.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Each target: the folders whose .cpp files it compiles together.
TARGETS = {
    "laconic::core": ["engine/core"],
    "laconic::compress": ["engine/compress"],
    "laconic::comm": ["engine/comm"],
    "laconic::topology": ["engine/topology", "engine/topology/parameter_server"],
    "laconic::schedule": ["engine/schedule"],
    "laconic::train": ["engine/train", "engine/train/data", "engine/train/models", "engine/train/optim"],
    "laconic::engine": ["engine"],
    "laconic::lua": ["lua"],
    "laconic::storage": ["storage"],
    "laconic::reports": ["reports"],
    "laconic::advise": ["advise"],
    "laconic::ui": ["ui"],
    "laconic::controller": ["controller"],
    "laconic_cli": ["cli"],
}
for tests in sorted((ROOT / "tests").iterdir()):
    if tests.is_dir():
        TARGETS[f"tests/{tests.name}"] = [f"tests/{tests.name}"]
# Programs of their own beside a folder's test target.
SEPARATE = {"tests/ui/ui_fixtures.cpp"}

# A function defined at the top level of an anonymous namespace: its name before "(" and the
# parameters up to the ")" before its body (which may span lines).
FUNCTION = re.compile(r"^(?:static\s+|inline\s+|constexpr\s+)*(?:[\w:<>,\*&\s]+?)\s[\*&]*(\w+)\s*\(")
NOT_NAMES = {"if", "for", "while", "switch", "return", "operator", "main"}


def parameters_at(lines, i, start):
    """The parameter text of the function whose "(" is at lines[i][start:], whitespace squeezed."""
    text, depth = "", 0
    for line in lines[i:i + 12]:
        for ch in line[start:]:
            if ch == "(":
                depth += 1
                if depth == 1:
                    continue
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return " ".join(text.split())
            text += ch
        text += " "
        start = 0
    return " ".join(text.split())


def anonymous_functions(text: str):
    """{name: {parameter texts}} of the functions defined at the top of each `namespace {` block."""
    names = {}
    # Raw string literals (SQL, JSON, Lua) out, their lines kept empty.
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + "\n" * m.group(0).count("\n"), text, flags=re.S)
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "namespace {":
            depth = 0
            i += 1
            while i < len(lines):
                line = lines[i]
                if depth == 0 and line.startswith("}  // namespace"):
                    break
                if depth == 0 and not line.startswith((" ", "\t", "//", "#", "}")):
                    match = FUNCTION.match(line)
                    if match and match.group(1) not in NOT_NAMES and not line.rstrip().endswith(";"):
                        names.setdefault(match.group(1), set()).add(parameters_at(lines, i, match.end() - 1))
                depth += line.count("{") - line.count("}")
                i += 1
        i += 1
    return names


def shared_names():
    """[(target, name, [files])] of function names two files of a target define with different parameters."""
    out = []
    for target, folders in TARGETS.items():
        where = {}
        for folder in folders:
            for file in sorted((ROOT / folder).glob("*.cpp")):
                if file.relative_to(ROOT).as_posix() in SEPARATE:
                    continue
                for name, parameters in anonymous_functions(file.read_text(errors="replace")).items():
                    where.setdefault(name, []).append((file.relative_to(ROOT).as_posix(), parameters))
        for name, found in sorted(where.items()):
            files = sorted({f for f, _ in found})
            signatures = {p for _, ps in found for p in ps}
            if len(files) > 1 and len(signatures) > 1:
                out.append((target, name, files))
    return out


def main():
    shared = shared_names()
    for target, name, files in shared:
        print(f"{target}: '{name}' with different parameters in the anonymous namespaces of {', '.join(files)}")
    if "--check" in sys.argv[1:]:
        if shared:
            print(f"unity-names: {len(shared)} overloads across files of a target: rename one, or share it in a header")
            return 1
        print(f"unity-names: no anonymous-namespace function is overloaded across the files of a target "
              f"({len(TARGETS)} targets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
