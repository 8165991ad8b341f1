#!/usr/bin/env python3
"""laconic's gpt against its PyTorch twin (scripts/laconic_models.py: Gpt), on what
tests/train/gpt_parity_test.cpp wrote to DIR: the model's options and weights, a batch of tokens
and targets, laconic's logits on it, and laconic's losses over AdamW steps on that batch (its
Adam with AdamW's options, warm-up and cosine factors, clipping at a global norm).

The twin loads the weights, computes the logits and takes the same steps with torch.optim.AdamW,
torch.nn.utils.clip_grad_norm_ and the learning rates of the schedule as written from its
definition here. Prints the largest differences as JSON; exits 1 when the logits differ by more
than 1e-5 or a loss by more than 1e-4 (the issue's tolerances), or a learning rate by more than
1e-12.

usage: gpt_twin_check.py DIR
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import laconic_models  # noqa: E402

LOGITS_TOLERANCE, LOSS_TOLERANCE, LR_TOLERANCE = 1e-5, 1e-4, 1e-12


def tensor(directory, entry):
    data = open(os.path.join(directory, entry["file"]), "rb").read()
    dtype = {"float32": torch.float32, "int64": torch.int64}[entry["dtype"]]
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(entry["shape"])


def learning_rate(step, run):
    """laconic's cosine schedule (engine/train/optim/lr_schedule.cpp) with its linear warm-up."""
    total = max(1, run["steps"] - 1)
    progress = min(1.0, step / total)
    factor = run["final"] + (1 - run["final"]) * 0.5 * (1 + math.cos(math.pi * progress))
    if step < run["warmup_steps"]:
        factor *= (step + 1) / run["warmup_steps"]
    return run["lr"] * factor


def main(directory):
    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    model = laconic_models.Gpt(**manifest["options"])
    names = [name for name, _ in model.named_parameters()]
    laconic_names = [p["name"] for p in manifest["parameters"]]
    if names != laconic_names:
        print(json.dumps({"error": "parameter names differ", "twin": names, "laconic": laconic_names}))
        return 1
    with torch.no_grad():
        for p, entry in zip(model.parameters(), manifest["parameters"]):
            p.copy_(tensor(directory, entry))
    tokens, targets = tensor(directory, manifest["tokens"]), tensor(directory, manifest["targets"])

    logits = model(tokens)
    logits_difference = (logits - tensor(directory, manifest["logits"])).abs().max().item()

    run = manifest["training"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=run["lr"], betas=tuple(run["betas"]), eps=run["eps"],
                                  weight_decay=run["weight_decay"])
    losses, lrs = [], []
    for step in range(run["steps"]):
        lr = learning_rate(step, run)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad()
        out = model(tokens)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), run["clip_norm"])
        optimizer.step()
        losses.append(loss.item())
        lrs.append(lr)
    loss_difference = max(abs(a - b) for a, b in zip(losses, run["losses"]))
    lr_difference = max(abs(a - b) for a, b in zip(lrs, run["lrs"]))
    ok = logits_difference <= LOGITS_TOLERANCE and loss_difference <= LOSS_TOLERANCE and lr_difference <= LR_TOLERANCE
    print(json.dumps({"logits_max_difference": logits_difference, "loss_max_difference": loss_difference,
                      "lr_max_difference": lr_difference, "twin_losses": losses, "laconic_losses": run["losses"],
                      "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
