#!/usr/bin/env python3
"""Regenerates the component reference of docs/dsl.md from the registries:
the part between the BEGIN/END markers becomes the output of `laconic list --markdown`.
A test (tests/cli) fails when the two disagree.

usage: scripts/update-dsl-reference.py [path/to/laconic]
"""
import pathlib
import subprocess
import sys

BEGIN = "<!-- BEGIN GENERATED: laconic list --markdown -->\n"
END = "<!-- END GENERATED -->\n"

binary = sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic"
doc = pathlib.Path(__file__).resolve().parent.parent / "docs" / "dsl.md"
text = doc.read_text()
start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
generated = subprocess.run([binary, "list", "--markdown"], check=True, capture_output=True,
                           text=True).stdout
doc.write_text(text[:start] + "\n" + generated + text[end:])
print(f"{doc}: component reference regenerated")
