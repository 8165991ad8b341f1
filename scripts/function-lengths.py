#!/usr/bin/env python3
"""Functions over 100 lines (C++ and the UI's pages' JavaScript) and .cpp files over 500 lines.

    python3 scripts/function-lengths.py           # the longest functions and files
    python3 scripts/function-lengths.py --check   # exit 1 if one is over its limit (ctest runs this)

A function is counted from the line of its signature's opening brace to its closing one, found by
braces in code with comments, strings and character literals blanked. A C++ function is a block
whose text before its brace ends in a parameter list (and qualifiers), and is not a control
statement's or a lambda's; a JavaScript one a `function NAME(`. Lambdas count toward the function
they are in. docs/architecture.md states the limits.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUNCTION_LINES = 100
FILE_LINES = 500
CPP_FOLDERS = ["engine", "lua", "storage", "reports", "advise", "ui", "controller", "cli", "bench", "tests"]
JS_GLOBS = ["ui/web/*.js", "bench/*.mjs", "tests/ui/*.mjs"]

CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*(\(.*\))?\s*$", re.S)
SIGNATURE = re.compile(
    r"\)\s*(const|noexcept(\([^)]*\))?|override|final|mutable|&|&&|->\s*[\w:<>,\s*&]+|\s)*$", re.S)


def blank(text: str) -> str:
    """The text with comments, string and character literals replaced by spaces (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and 0 < i < n - 1 and text[i - 1].isdigit() and text[i + 1].isalnum():
            out.append(c)  # a digit separator (200'000), not a character literal
            i += 1
        elif c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blocks(code: str):
    """(text before the brace since the last ; { or }, start line, end line) of every block."""
    stack, lines = [], 1
    head_start = 0
    for i, c in enumerate(code):
        if c == "\n":
            lines += 1
        elif c == "{":
            stack.append((code[head_start:i], lines))
            head_start = i + 1
        elif c == "}":
            if stack:
                head, start = stack.pop()
                yield head, start, lines
            head_start = i + 1
        elif c == ";":
            head_start = i + 1


def cpp_functions(path: pathlib.Path):
    code = blank(path.read_text(errors="replace"))
    for head, start, end in blocks(code):
        head = head.strip()
        if not SIGNATURE.search(head) or CONTROL.search(head) or re.search(r"\]\s*(\([^()]*\))?[^()]*$", head):
            continue
        name = re.search(r"([~\w:]+)\s*\(", head)
        yield (name.group(1) if name else "?"), start, end


def js_functions(path: pathlib.Path):
    code = blank(path.read_text(errors="replace"))
    for head, start, end in blocks(code):
        name = re.search(r"function\s*\*?\s*(\w+)\s*\([^()]*\)\s*$", head.strip())
        if name:
            yield name.group(1), start, end


def main() -> int:
    long_functions, long_files = [], []
    for folder in CPP_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".cu") or "node_modules" in path.parts:
                continue
            rel = path.relative_to(ROOT)
            if path.suffix == ".cpp" and len(path.read_text(errors="replace").splitlines()) > FILE_LINES:
                long_files.append(rel)
            for name, start, end in cpp_functions(path):
                long_functions.append((end - start + 1, f"{rel}:{start}", name))
    for pattern in JS_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            for name, start, end in js_functions(path):
                long_functions.append((end - start + 1, f"{path.relative_to(ROOT)}:{start}", name))
    long_functions.sort(reverse=True)
    over = [f for f in long_functions if f[0] > FUNCTION_LINES]
    for lines, where, name in (over if "--check" in sys.argv else long_functions[:15]):
        print(f"{lines:5d} lines  {where}  {name}")
    for rel in long_files:
        print(f"file over {FILE_LINES} lines: {rel}")
    if "--check" in sys.argv and (over or long_files):
        print(f"{len(over)} functions over {FUNCTION_LINES} lines, {len(long_files)} .cpp files over {FILE_LINES}: "
              "split them (docs/architecture.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
