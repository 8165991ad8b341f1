#!/usr/bin/python3
"""Writes a PyTorch model as a TorchScript file that laconic trains (model = torchscript {...}).

    python3 scripts/export-torchscript.py MODULE:CLASS [--args JSON] [--kwargs JSON]
        [--input SHAPE] [--tokens] [--trace] [--seed N] --out FILE.pt

MODULE is a Python file (examples/lenet5.py) or an importable module (mypackage.models); CLASS is
the nn.Module subclass in it, built with --args (a JSON list) and --kwargs (a JSON object) after
torch.manual_seed(--seed): the weights in FILE.pt are the run's initial weights. The module is
scripted (torch.jit.script); --trace traces it instead on an example of --input (zeros; int64
tokens with --tokens), for models scripting cannot read. With --input the script runs one
example through the saved file and prints the line to paste into an experiment file.

Uses Debian's python3-torch (PyTorch 1.13) under /usr/bin/python3; see docs/models-and-data.md,
"Your own model".
"""
import argparse
import importlib
import importlib.util
import json
import os
import sys

try:
    import torch
except ImportError:
    sys.exit(f"export-torchscript: {sys.executable} has no PyTorch; run it with Debian's /usr/bin/python3 after "
             "apt-get install python3-torch (scripts/laconic-setup.sh test installs it)")


def load_class(spec: str):
    if ":" not in spec:
        sys.exit(f"export-torchscript: expected MODULE:CLASS (examples/lenet5.py:LeNet5), got {spec!r}")
    module_name, class_name = spec.rsplit(":", 1)
    if module_name.endswith(".py") or os.sep in module_name:
        if not os.path.exists(module_name):
            sys.exit(f"export-torchscript: no such file: {module_name}")
        loader = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(module_name))[0], module_name)
        module = importlib.util.module_from_spec(loader)
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_name)))
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    if not hasattr(module, class_name):
        known = sorted(n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, torch.nn.Module))
        sys.exit(f"export-torchscript: {module_name} has no {class_name}; its nn.Module classes: {', '.join(known) or 'none'}")
    return getattr(module, class_name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="MODULE:CLASS, e.g. examples/lenet5.py:LeNet5")
    parser.add_argument("--args", default="[]", help="constructor arguments, a JSON list (default [])")
    parser.add_argument("--kwargs", default="{}", help="constructor keyword arguments, a JSON object (default {})")
    parser.add_argument("--input", default="", help="shape of one example without the batch dimension, e.g. 1,28,28")
    parser.add_argument("--tokens", action="store_true", help="the examples are int64 tokens (a language model)")
    parser.add_argument("--trace", action="store_true", help="trace on an example of --input instead of scripting")
    parser.add_argument("--seed", type=int, default=1, help="torch.manual_seed before building the model (default 1)")
    parser.add_argument("--out", required=True, help="the TorchScript file to write")
    a = parser.parse_args()

    cls = load_class(a.model)
    torch.manual_seed(a.seed)
    model = cls(*json.loads(a.args), **json.loads(a.kwargs))
    shape = [int(d) for d in a.input.split(",")] if a.input else []
    example = None
    if shape:
        example = torch.zeros([1] + shape, dtype=torch.int64 if a.tokens else torch.float32)
    if a.trace:
        if example is None:
            sys.exit("export-torchscript: --trace needs --input")
        model.eval()
        scripted = torch.jit.trace(model, example)
    else:
        scripted = torch.jit.script(model)
    scripted.train()
    scripted.save(a.out)

    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"export-torchscript: wrote {a.out}: {cls.__name__}, {trainable:,} trainable parameters")
    if example is not None:
        loaded = torch.jit.load(a.out)
        loaded.eval()
        with torch.no_grad():
            out = loaded(example)
        classes = out.shape[-1]
        shape_lua = ", ".join(str(d) for d in shape)
        extra = f", bptt = {shape[0]}" if a.tokens else ""
        print(f"export-torchscript: one example {list(example.shape)} -> {list(out.shape)}")
        print(f'  model = torchscript {{ file = "{os.path.basename(a.out)}", input = {{{shape_lua}}}, classes = {classes}{extra} }},')


if __name__ == "__main__":
    main()
