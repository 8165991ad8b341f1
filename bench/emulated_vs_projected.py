#!/usr/bin/env python3
"""The network model checked against emulated links: LeNet-5 and the MLP on Fashion-MNIST and
ResNet-20 on synthetic CIFAR-shaped data, each dense (`none`) and compressed (`fp16`,
`topk { ratio = 0.01 }`), and a wide MLP (784-2048-1024-10, 3.7 M parameters) dense and fp16,
for messages of several megabytes; 2 workers, on links emulated at 10 Gbit/s, 1 Gbit/s and 100 Mbit/s
(network = link { ..., emulate = true }: veth pairs shaped with tc tbf, latency 50 us added per
message). Needs root (the links are real namespaces).

First the host is calibrated: the same runs on an emulated 100 Gbit/s link, where the link
costs next to nothing and what is left is the host's own cost of a message (system calls,
copies, the veth pair, the bridge, scheduling on 2 cores). A least-squares fit of the measured
time per step, less the link's share, to `messages x overhead + 8 x link_bytes / host_rate`
gives the two host terms of the model (docs/network-model.md).

Then every run on the three links measures `time_communicate` on the shaped link and projects the
same messages twice: onto the link alone (latency + size / (bandwidth x 0.936, TCP's payload
share), what `link` projects by default) and with the calibrated host terms (the run's `link { overhead, host_bandwidth }`, so
its own projected_time_communicate). The table gives medians over steps of worker 0 and the
ratios; none of these runs took part in the fit.

With --mean the calibration and the table take each run's mean over its steps instead of the
median: what a time to the target pays (its steps x the mean step), the host's occasional long
exchanges on a busy machine included, where the median gives the typical exchange. The host
costs that `laconic advise --link BANDWIDTH,LATENCY,OVERHEAD,HOST_RATE` should project with are
the mean's (docs/advise.md). --calibrate-only prints the calibration and stops; --repeat N runs
it N times and takes the one with the median overhead (it moves from run to run on a busy host).

usage: bench/emulated_vs_projected.py [--mean] [--calibrate-only] [--repeat N] [path/to/laconic] [STEPS]
       (defaults: build/cli/laconic 30; about 2 minutes here; --calibrate-only at 200 steps 40 s)
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import tempfile

parser = argparse.ArgumentParser(description="The network model checked against emulated links (root).")
parser.add_argument("laconic", nargs="?", default="build/cli/laconic", help="the binary (build/cli/laconic)")
parser.add_argument("steps", nargs="?", type=int, default=30, help="steps per run (30)")
parser.add_argument("--mean", action="store_true", help="means over steps instead of medians")
parser.add_argument("--calibrate-only", action="store_true", help="print the host calibration and stop")
parser.add_argument("--repeat", type=int, default=1,
                    help="calibrations to run; the one with the median overhead is used (1)")
args = parser.parse_args()
laconic = os.path.abspath(args.laconic)
steps = args.steps
average = statistics.fmean if args.mean else statistics.median
statistic = "means" if args.mean else "medians"

DENSE = ["none()", "fp16()"]
COMPRESSORS = ["none()", "fp16()", "topk { ratio = 0.01 }"]
# model: (data, network, compressors, steps as a share of STEPS). mlp_wide's messages are 7.3 MB
# (dense) and 3.7 MB (fp16): the 1 MB and more that the model is meant for.
MODELS = {
    "lenet5": ("fashion_mnist()", "lenet5()", COMPRESSORS, 1),
    "mlp": ("fashion_mnist()", "mlp()", COMPRESSORS, 1),
    "resnet20": ("synthetic { shape = {3, 32, 32}, n = 2560, test_n = 256 }", "resnet { depth = 20 }", COMPRESSORS, 1),
    "mlp_wide": ("fashion_mnist()", "mlp { sizes = {784, 2048, 1024, 10} }", DENSE, 1 / 3),
}
LINKS = ["10Gbit", "1Gbit", "100Mbit"]

EXPERIMENT = """
experiment {{
  name = "{model}", data = {data}, model = {net},
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 64, epochs = 1, max_steps = {steps},
  workers = 2, topology = allreduce {{ algorithm = "ring" }}, schedule = synchronous(), eval_limit = 256,
  compressor = sweep {{ {compressors} }},
  network = sweep {{ {links} }},
  seeds = {{ 1 }},
}}
"""
LATENCY = 50e-6
PAYLOAD = 1448 / 1547  # the link's payload share, TCP over Ethernet (kTcpPayloadFraction)
CALIBRATION_LINK = "100Gbit"


def rate(text):
    units = {"Gbit": 1e9, "Mbit": 1e6}
    return next(float(text[: -len(u)]) * f for u, f in units.items() if text.endswith(u))


def run(directory, model, links, extra=""):
    """Runs `model` with every compressor on every link; returns {(compressor, link): per-step
    values of worker 0 as {key: [values]}}."""
    data, net, compressors, share = MODELS[model]
    path = os.path.join(directory, f"{model}-{len(links)}.lua")
    written = ", ".join(f'link {{ bandwidth = "{b}", latency = "50us", emulate = true{extra} }}' for b in links)
    with open(path, "w") as f:
        f.write(EXPERIMENT.format(model=model, data=data, net=net, steps=max(3, round(steps * share)),
                                  compressors=", ".join(compressors), links=written))
    db = os.path.join(directory, f"{model}-{len(links)}.db")
    subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    out = {}
    with sqlite3.connect(db) as c:
        for run_id, name in c.execute("SELECT id, name FROM runs ORDER BY id").fetchall():
            steps_of = {}
            for key in ("time_communicate", "projected_time_communicate", "bytes_sent", "messages", "link_bytes"):
                steps_of[key] = [v for (v,) in c.execute(
                    "SELECT value FROM metrics WHERE run_id = ? AND worker = 0 AND key = ? ORDER BY step",
                    (run_id, key))]
            compressor = name.split(",network=")[0].replace("compressor=", "")
            link = next(b for b in links if f"bandwidth={b}," in name)
            out[(compressor, link)] = steps_of
    return out


def fit_host(calibration):
    """Least squares of (measured - link's share) = messages x overhead + 8 x bytes / host_rate
    over the calibration runs' medians (means with --mean), each row divided by its measured time
    (relative errors, so that the small exchanges weigh as much as the large); returns (overhead s,
    host bit/s)."""
    rows = []
    for values in calibration.values():
        m = average(values["messages"])
        b = average(values["link_bytes"])
        t = average(values["time_communicate"])
        excess = t - m * LATENCY - 8 * b / (rate(CALIBRATION_LINK) * PAYLOAD)
        rows.append((m / t, 8 * b / t, excess / t))
    # Normal equations of the two-parameter fit through the origin.
    smm = sum(m * m for m, _, _ in rows)
    sbb = sum(b * b for _, b, _ in rows)
    smb = sum(m * b for m, b, _ in rows)
    smt = sum(m * t for m, _, t in rows)
    sbt = sum(b * t for _, b, t in rows)
    det = smm * sbb - smb * smb
    overhead = (smt * sbb - sbt * smb) / det
    inverse_rate = (smm * sbt - smb * smt) / det
    return max(overhead, 0.0), (1 / inverse_rate if inverse_rate > 0 else 0.0)


def calibrate(directory):
    """The host's terms from every model's runs on the calibration link; returns (overhead s,
    host bit/s, runs)."""
    calibration = {}
    for model in MODELS:
        for key, values in run(directory, model, [CALIBRATION_LINK]).items():
            calibration[(model,) + key] = values
    return fit_host(calibration) + (len(calibration),)


def main():
    with tempfile.TemporaryDirectory() as directory:
        fits = []
        for i in range(max(1, args.repeat)):
            sub = os.path.join(directory, f"calibration-{i + 1}")
            os.mkdir(sub)
            fits.append(calibrate(sub))
            if args.repeat > 1:
                print(f"Calibration {i + 1} of {args.repeat}: overhead {1e6 * fits[-1][0]:.0f} us per message, host "
                      f"rate {fits[-1][1] / 1e9:.2f} Gbit/s", flush=True)
        overhead, host_rate, runs = sorted(fits)[len(fits) // 2]
        which = f", the median overhead of {len(fits)} calibrations" if len(fits) > 1 else ""
        print(f"Host calibration on an emulated {CALIBRATION_LINK} link ({runs} runs, {statistic} over "
              f"{steps} steps of worker 0{which}): overhead {1e6 * overhead:.0f} us per message, host rate "
              f"{host_rate / 1e9:.2f} Gbit/s (--link ...,{1e6 * overhead:.0f}us,{host_rate / 1e9:.2f}Gbit)\n",
              flush=True)
        if args.calibrate_only:
            return
        print(f"{statistic.capitalize()} over {steps} steps of worker 0, 2 workers, links emulated with veth + tbf "
              "(latency 50 us per message added by laconic's transport); link = the link alone, host = with the "
              "calibrated host terms\n")
        print("| model | compressor | link | bytes sent per step | measured (ms) | projected, link (ms) | "
              "measured / link | projected, host (ms) | measured / host |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|")
        host_fields = f', overhead = "{1e6 * overhead:.1f}us"' + (
            f', host_bandwidth = "{host_rate / 1e6:.0f}Mbit"' if host_rate > 0 else "")
        for model in MODELS:
            results = run(directory, model, LINKS, host_fields)
            for (compressor, link), v in results.items():
                measured = average(v["time_communicate"])
                link_only = average(
                    m * LATENCY + 8 * b / (rate(link) * PAYLOAD) for m, b in zip(v["messages"], v["link_bytes"]))
                host = average(v["projected_time_communicate"])
                sent = average(v["bytes_sent"])
                print(f"| {model} | {compressor} | {link} | {sent / 1e3:.1f} kB | {1e3 * measured:.2f} | "
                      f"{1e3 * link_only:.2f} | {measured / link_only:.2f} | {1e3 * host:.2f} | "
                      f"{measured / host:.2f} |", flush=True)


if __name__ == "__main__":
    main()
