#!/usr/bin/env python3
"""The GPU training check's tables (bench/gpu/train_check.sh), from what it recorded:

1. each run's step on the GPU, worker 0's median over the steps after --skip (compute: forward +
   backward + optimizer, each timed after the device finished its work), against the compute the
   hardware profile of the same card (scripts/profile-hardware.py) gives the same model and batch;
2. the codecs' time in training (time_compress / time_decompress: on the CPU, the gradient's
   copies to and from pinned host memory included) against the CUDA kernels' cost at the model's
   size from laconic_compress_cuda_bench's profile-format file: what moving the codecs onto the
   device would save.

usage: bench/gpu/gpu_tables.py DB PROFILE.json [KERNELS.json] [--skip 20]
"""
import argparse
import json
import sqlite3
import statistics

KEYS = ("time_step", "time_forward", "time_backward", "time_optimizer", "time_compress", "time_decompress",
        "time_communicate")
KERNEL_NAMES = {"fp16": "fp16", "topk": "topk"}  # the run's compressor: its kernels' entry


def runs(db, skip):
    """(experiment, run name, model, batch, parameters, compressor) -> {key: worker 0's median}."""
    out = {}
    with sqlite3.connect(db) as c:
        for run_id, experiment, name, config in c.execute(
                "SELECT r.id, e.name, r.name, r.config FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                "WHERE r.status = 'FINISHED' ORDER BY r.id"):
            cfg = json.loads(config)
            (parameters,) = c.execute("SELECT value FROM metrics WHERE run_id = ? AND key = 'model_parameters' "
                                      "LIMIT 1", (run_id,)).fetchone() or (0,)
            medians = {}
            for key in KEYS:
                values = [v for (v,) in c.execute("SELECT value FROM metrics WHERE run_id = ? AND worker = 0 AND "
                                                  "key = ? AND step >= ?", (run_id, key, skip))]
                medians[key] = statistics.median(values) if values else None
            model = cfg.get("model", {}).get("name", "?")
            out[(experiment, name, model, cfg.get("batch_size"), int(parameters),
                 cfg.get("compressor", {}).get("name", "?"))] = medians
    return out


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def step_table(measured, profile):
    models = {(m["model"], m["batch_size"]): m for m in profile.get("models", [])}
    print(f"Worker 0's medians per step (ms); the profile: {profile.get('name')}, "
          f"{profile.get('measured', {}).get('by')}, torch {profile.get('measured', {}).get('torch')}\n")
    print("| experiment | run | step | compute | profile's compute | compute / profile | compress | decompress "
          "| communicate |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (experiment, name, model, batch, _, _), m in measured.items():
        compute = None if m["time_forward"] is None else m["time_forward"] + m["time_backward"] + m["time_optimizer"]
        p = models.get((model, batch))
        theirs = p["forward"] + p["backward"] + p.get("optimizer", 0) if p else None
        ratio = f"{compute / theirs:.2f}" if compute and theirs else "-"
        print(f"| {experiment} | {name} | {ms(m['time_step'])} | {ms(compute)} | {ms(theirs)} | {ratio} | "
              f"{ms(m['time_compress'])} | {ms(m['time_decompress'])} | {ms(m['time_communicate'])} |")


def codec_table(measured, kernels):
    costs = kernels.get("compressors", {})
    print("\nCodecs in training (on the CPU, staged) against the CUDA kernels at the model's size (ms)\n")
    print("| experiment | run | elements | compress in training | kernel's | decompress in training | kernel's |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (experiment, name, _, _, parameters, compressor), m in measured.items():
        kernel = costs.get(KERNEL_NAMES.get(compressor, ""))
        if not kernel:
            continue
        at = lambda part: kernel[part]["per_call"] + kernel[part]["per_element"] * parameters
        print(f"| {experiment} | {name} | {parameters} | {ms(m['time_compress'])} | {ms(at('compress'))} | "
              f"{ms(m['time_decompress'])} | {ms(at('decompress'))} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("db")
    p.add_argument("profile")
    p.add_argument("kernels", nargs="?")
    p.add_argument("--skip", type=int, default=20, help="steps left out at the start (warm-up)")
    args = p.parse_args()
    measured = runs(args.db, args.skip)
    with open(args.profile) as f:
        step_table(measured, json.load(f))
    if args.kernels:
        with open(args.kernels) as f:
            codec_table(measured, json.load(f))


if __name__ == "__main__":
    main()
