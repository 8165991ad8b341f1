#!/usr/bin/env python3
"""An outside check of laconic's projection against a paper's measurements: GRACE's released
throughputs (Xu et al., ICDCS 2021; sands-lab/grace-data, GRACE_data_release.pickle: TensorFlow
and Horovod on V100s, 10 Gbit/s Ethernet, 1 Gbit/s and 25 Gbit/s for ResNet-50 at 8 workers).
For every setting (model, bandwidth, workers) it projects each of GRACE's configurations'
throughput and reports Kendall's tau between the projected and the measured ranking.

A configuration's step at W workers, projected:
  compute  = batch / GRACE's own 1-worker throughput of `none` (what a V100 computes)
  codec    = per tensor: compress + decode (W payloads for an allgather, summed; error feedback's
             compensate and update where the run had memory), each timed here on one CPU thread
             (bench/grace_codecs.py, LibTorch ops) and carried to the V100 as
             launches x --launch-us + CPU seconds x (this CPU's copy GB/s / --gpu-copy-gbs)
  exchange = every payload's collective run among W ranks by laconic's own collectives, counted
             and projected onto the link (bench/collective_projection.cpp: the same model as
             `laconic report --link`, docs/network-model.md), fused as Horovod's Tensor Fusion
             does: a step's allreduces, and its allgathers of one dtype, into 64 MB buffers
  step     = compute + codec + what of the exchange outlasts backward (Horovod sends each fused
             buffer while backward goes on; codecs take the GPU, so they do not overlap):
             max(0, exchange - --backward-share x compute)
  throughput = W x batch / step

Usage: python3 bench/grace_ranking.py GRACE_data_release.pickle [--batch 32] [--projection BIN]
The pickle comes from the public repository sands-lab/grace-data (never shipped with laconic).
Needs Debian's python3-pandas and python3-torch, and laconic_collective_projection (a build with
-DLACONIC_BUILD_BENCH=ON). Figures and their reading: docs/advise.md, "Against GRACE's measurements".
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grace_codecs import codec_of  # noqa: E402
from grace_models import MODELS  # noqa: E402

TASKS = ("cifar10-classification", "imagenet-classification")
FUSION_BYTES = 64 << 20
BANDWIDTHS = {"1g": "1Gbit", "10g": "10Gbit", "25g": "25Gbit"}


class Projection:
    """A running laconic_collective_projection: one collective in, its projected seconds out."""

    def __init__(self, binary, latency):
        self.process = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.latency = latency
        self.cache = {}

    def seconds(self, bandwidth, workers, kind, size):
        key = (bandwidth, workers, kind, size)
        if key not in self.cache:
            self.process.stdin.write(f"{bandwidth},{self.latency} {workers} {kind} {size}\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline().split()
            if len(answer) != 3:
                sys.exit(f"grace_ranking: the projection helper failed on {key}")
            self.cache[key] = float(answer[2])
        return self.cache[key]

    def fused(self, bandwidth, workers, kind, size, per_buffer):
        """One step's `kind` collectives of `size` in all, in Horovod's fusion buffers."""
        full, rest = divmod(size, per_buffer)
        total = full * self.seconds(bandwidth, workers, kind, per_buffer) if full else 0.0
        return total + (self.seconds(bandwidth, workers, kind, rest) if rest else 0.0)


def top_level_ops(fn):
    """The LibTorch ops `fn` runs (each one kernel launch on a GPU), counted by the profiler."""
    with torch.autograd.profiler.profile() as profile:
        fn()
    return sum(1 for event in profile.function_events if event.cpu_parent is None)


def cpu_seconds(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class CodecCosts:
    """Per tensor shape and codec: V100 seconds of compress, decompress and one sum, and the
    payload parts' sizes in bytes."""

    def __init__(self, launch_seconds, cpu_per_gpu, repeats):
        self.launch_seconds, self.cpu_per_gpu, self.repeats = launch_seconds, cpu_per_gpu, repeats
        self.cache = {}

    def gpu_seconds(self, fn):
        return top_level_ops(fn) * self.launch_seconds + cpu_seconds(fn, self.repeats) * self.cpu_per_gpu

    def of(self, codec, key, shape):
        if (key, shape) not in self.cache:
            torch.manual_seed(0)
            t = torch.randn(shape)
            parts, ctx = codec.compress(t)
            other = torch.randn(shape)
            self.cache[(key, shape)] = {
                "compress": self.gpu_seconds(lambda: codec.compress(t)),
                "decompress": self.gpu_seconds(lambda: codec.decompress(parts, ctx)),
                "sum": self.gpu_seconds(lambda: t + other),
                "parts": [(p.numel() * p.element_size(), str(p.dtype)) for p in parts],
            }
        return self.cache[(key, shape)]


def copy_gbs():
    """This CPU's copy bandwidth on one thread (read + write), GB/s."""
    src = torch.randn(32 << 20)
    dst = torch.empty_like(src)
    seconds = cpu_seconds(lambda: dst.copy_(src), 5)
    return 2 * src.numel() * 4 / seconds / 1e9


def step_parts(row, codec, shapes, costs, projection, workers, bandwidth):
    """(codec seconds, exchange seconds) of one step of GRACE's configuration `row`, coded by `codec`."""
    key = row["name"]
    codec_seconds, allreduce_floats, allgather_bytes = 0.0, [0] * codec.phases, {}
    for shape in shapes:
        c = costs.of(codec, key, shape)
        decodes = workers if codec.collective == "allgather" else 1
        codec_seconds += c["compress"] + decodes * c["decompress"]
        if codec.collective == "allgather":
            codec_seconds += (workers - 1) * c["sum"]
            for size, dtype in c["parts"]:
                allgather_bytes[dtype] = allgather_bytes.get(dtype, 0) + size
        else:
            for phase, (size, _) in enumerate(c["parts"]):
                allreduce_floats[min(phase, codec.phases - 1)] += size // 4
        if row.memory == "true":
            codec_seconds += 2 * c["sum"] + c["decompress"]
    exchange = sum(projection.fused(bandwidth, workers, "allreduce", f, FUSION_BYTES // 4) for f in allreduce_floats if f)
    exchange += sum(projection.fused(bandwidth, workers, "allgatherv", b, FUSION_BYTES) for b in allgather_bytes.values())
    return codec_seconds, exchange


def kendall_tau(xs, ys):
    """Kendall's tau-b of two equally long sequences."""
    concordant = discordant = ties_x = ties_y = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


def self_check():
    """Kendall's tau against hand-counted pairs, and every codec's payload size and decoded
    error against its definition; exits 1 on a mismatch."""
    from grace_codecs import Dense, Qsgd, SignSgd, TopK, PowerSgd
    failures = []
    # 3 of 3 pairs concordant; all discordant; (1,2,3,4) vs (1,3,2,4): 5 concordant, 1 discordant.
    for xs, ys, want in (([1, 2, 3], [10, 20, 30], 1.0), ([1, 2, 3], [3, 2, 1], -1.0),
                         ([1, 2, 3, 4], [1, 3, 2, 4], 4 / 6)):
        if abs(kendall_tau(xs, ys) - want) > 1e-12:
            failures.append(f"kendall_tau({xs}, {ys}) = {kendall_tau(xs, ys)}, want {want}")
    torch.manual_seed(0)
    t = torch.randn(64, 16, 3, 3)
    n = t.numel()
    for codec, want_bytes in ((Dense(), [4 * n]), (TopK(0.01), [8 * int(0.01 * n)]), (Qsgd(64), [n, 4]),
                              (SignSgd(), [n]), (PowerSgd(), [4 * 64, 4 * 16 * 9])):
        parts, ctx = codec.compress(t)
        got = [p.numel() * p.element_size() for p in parts]
        decoded = codec.decompress(parts, ctx)
        if got != want_bytes or decoded.shape != t.shape:
            failures.append(f"{type(codec).__name__}: parts {got} bytes, want {want_bytes}; shape {decoded.shape}")
    # Top-k keeps exactly the largest magnitudes; QSGD is unbiased (mean of many draws near t).
    parts, ctx = TopK(0.01).compress(t)
    kept = TopK.decompress(parts, ctx).flatten()
    if not torch.equal(kept.abs().topk(int(0.01 * n)).values.sort().values,
                       t.flatten().abs().topk(int(0.01 * n)).values.sort().values):
        failures.append("TopK did not keep the largest magnitudes")
    # QSGD rounds |x| / norm x levels up or down at random between levels norm / levels apart: a
    # draw's standard deviation is at most half that spacing, the mean of 400 draws' 1/20 of it.
    v, q = torch.randn(256), Qsgd(16)
    spacing = float(v.norm()) / 16
    mean = sum(q.decompress(*q.compress(v)) for _ in range(400)) / 400
    if (mean - v).abs().max() > 5 * spacing / 2 / 20:
        failures.append(f"Qsgd's mean of 400 draws is {float((mean - v).abs().max()):.3f} from the vector at worst")
    for failure in failures:
        print("grace_ranking self-check: " + failure)
    print(f"grace_ranking self-check: {'FAILED' if failures else 'passed'}")
    sys.exit(1 if failures else 0)


def settings(data):
    """GRACE's throughput runs per (task, model, bandwidth, workers > 1), with the model's
    1-worker throughput of `none`."""
    for task in TASKS:
        runs = data[task]
        runs = runs[runs["mode"] == "throughput"]
        for model in sorted(runs["model"].unique()):
            of_model = runs[runs["model"] == model]
            single = of_model[(of_model["workers"] == 1) & (of_model["method"] == "none")]
            if single.empty:
                continue
            for (bw, workers), group in of_model[of_model["workers"] > 1].groupby(["bw", "workers"]):
                yield task, model, bw, int(workers), float(single["throughput"].iloc[0]), group


def rank_setting(args, model, bw, workers, single, group, costs, projection):
    shapes = MODELS[model]()
    compute = args.batch / single
    rows, left_out = [], []
    for _, row in group.drop_duplicates("name").iterrows():
        codec = codec_of(row.method, row.ratio, row["name"])
        if codec is None:
            left_out.append(row["name"])
            continue
        codec_seconds, exchange = step_parts(row, codec, shapes, costs, projection, workers, BANDWIDTHS[bw])
        exposed = max(0.0, exchange - args.backward_share * compute)
        step = compute + codec_seconds + exposed
        rows.append({"name": row["name"], "measured": float(row["throughput"]),
                     "projected": workers * args.batch / step, "codec_ms": 1e3 * codec_seconds,
                     "exchange_ms": 1e3 * exchange, "bytes_only": workers * args.batch / (compute + exposed)})
    tau = kendall_tau([r["measured"] for r in rows], [r["projected"] for r in rows])
    tau_bytes = kendall_tau([r["measured"] for r in rows], [r["bytes_only"] for r in rows])
    return rows, left_out, tau, tau_bytes


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: -values[i])
    out = [0] * len(values)
    for position, i in enumerate(order):
        out[i] = position + 1
    return out


def format_tau(tau):
    return "every configuration tied" if math.isnan(tau) else f"{tau:+.3f}"


def print_setting(model, bw, workers, rows, left_out, tau, tau_bytes, show_rows):
    print(f"\n{model}, {bw}, {workers} workers: {len(rows)} configurations, Kendall's tau {tau:+.3f} "
          f"(codecs free: {format_tau(tau_bytes)}); not modelled: {', '.join(left_out) or 'none'}")
    measured_rank = ranks([r["measured"] for r in rows])
    projected_rank = ranks([r["projected"] for r in rows])
    for r, m, p in zip(rows, measured_rank, projected_rank):
        r["rank_measured"], r["rank_projected"] = m, p
    if not show_rows:
        return
    print(f"  {'configuration':28} {'measured img/s':>14} {'projected img/s':>15} {'rank m/p':>8} "
          f"{'codec ms':>9} {'exchange ms':>11}")
    for r in sorted(rows, key=lambda r: r["rank_measured"]):
        flag = "  <- off by 3+" if abs(r["rank_measured"] - r["rank_projected"]) >= 3 else ""
        print(f"  {r['name']:28} {r['measured']:14.0f} {r['projected']:15.0f} "
              f"{r['rank_measured']:>3}/{r['rank_projected']:<4} {r['codec_ms']:9.2f} {r['exchange_ms']:11.2f}{flag}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pickle", nargs="?", help="GRACE_data_release.pickle from sands-lab/grace-data")
    parser.add_argument("--self-check", action="store_true",
                        help="check Kendall's tau and the codecs against their definitions, then exit")
    parser.add_argument("--batch", type=int, default=32, help="images per worker per step (default 32)")
    parser.add_argument("--backward-share", type=float, default=2 / 3,
                        help="backward's share of a step's compute, under which the exchange hides (default 2/3: "
                        "backward's two products per layer to forward's one; 0: no overlap)")
    parser.add_argument("--latency", default="50us", help="the link's one-way latency per message (default 50us)")
    parser.add_argument("--launch-us", type=float, default=8.0,
                        help="a GPU kernel launch, microseconds, per LibTorch op (default 8)")
    parser.add_argument("--gpu-copy-gbs", type=float, default=800.0,
                        help="the V100's device copy, GB/s read + write (default 800)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per codec and tensor, median (default 3)")
    parser.add_argument("--projection", default="build/bench/laconic_collective_projection",
                        help="the helper (default build/bench/laconic_collective_projection)")
    parser.add_argument("--rows", action="store_true", help="print every configuration of every setting")
    parser.add_argument("--json", help="also write every setting's rows to this file")
    args = parser.parse_args()
    if args.self_check:
        self_check()
    if not args.pickle:
        parser.error("the pickle is required (or --self-check)")
    if not os.access(args.projection, os.X_OK):
        sys.exit(f"grace_ranking: {args.projection} is missing: configure with -DLACONIC_BUILD_BENCH=ON and "
                 "build the target laconic_collective_projection")
    torch.set_num_threads(1)
    import pandas  # only here: --self-check runs without it

    data = pandas.read_pickle(args.pickle)
    cpu_gbs = copy_gbs()
    costs = CodecCosts(args.launch_us * 1e-6, cpu_gbs / args.gpu_copy_gbs, args.repeats)
    projection = Projection(args.projection, args.latency)
    print(f"grace_ranking: batch {args.batch} per worker, backward {args.backward_share:.2f} of compute, "
          f"latency {args.latency}, launch {args.launch_us:g} us, "
          f"this CPU's copy {cpu_gbs:.1f} GB/s against the V100's {args.gpu_copy_gbs:g}")
    results, taus = [], []
    for task, model, bw, workers, single, group in settings(data):
        rows, left_out, tau, tau_bytes = rank_setting(args, model, bw, workers, single, group, costs, projection)
        print_setting(model, bw, workers, rows, left_out, tau, tau_bytes, args.rows)
        taus.append(tau)
        results.append({"task": task, "model": model, "bw": bw, "workers": workers, "tau": tau,
                        "tau_exchange_only": tau_bytes, "left_out": left_out, "rows": rows})
    print(f"\n{len(taus)} settings: median Kendall's tau {statistics.median(taus):+.3f}; "
          f">= 0.7 in {sum(t >= 0.7 for t in taus)} of {len(taus)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
