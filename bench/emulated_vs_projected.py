#!/usr/bin/env python3
"""The network model checked against emulated links: LeNet-5 and the MLP on Fashion-MNIST and
ResNet-20 on synthetic CIFAR-shaped data, 2 workers, each dense (`none`) and compressed
(`fp16`, `topk { ratio = 0.01 }`), on links emulated at 10 Gbit/s, 1 Gbit/s and 100 Mbit/s
(network = link { ..., emulate = true }: veth pairs shaped with tc tbf, latency 50 us added per
message). Every run measures `time_communicate` on the shaped link and projects the same
messages onto the same link (`projected_time_communicate`); the table gives the medians over
steps of worker 0, their ratio, and the bytes each worker sent per step (what sets the message
sizes). Needs root (the links are real namespaces).

usage: bench/emulated_vs_projected.py [path/to/laconic] [STEPS]
       (defaults: build/cli/laconic 30; about 3 minutes here)
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

laconic = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/cli/laconic")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30

MODELS = {
    "lenet5": ("fashion_mnist()", "lenet5()"),
    "mlp": ("fashion_mnist()", "mlp()"),
    "resnet20": ("synthetic { shape = {3, 32, 32}, n = 2560, test_n = 256 }", "resnet { depth = 20 }"),
}
LINKS = ["10Gbit", "1Gbit", "100Mbit"]
COMPRESSORS = ["none()", "fp16()", "topk { ratio = 0.01 }"]

EXPERIMENT = """
experiment {{
  name = "{model}", data = {data}, model = {net},
  optimizer = sgd {{ lr = 0.05, momentum = 0.9 }}, batch_size = 64, epochs = 1, max_steps = {steps},
  workers = 2, topology = allreduce(), schedule = synchronous(), eval_limit = 256,
  compressor = sweep {{ {compressors} }},
  network = sweep {{ {links} }},
  seeds = {{ 1 }},
}}
"""


def main():
    print(f"Medians over {steps} steps of worker 0, 2 workers, links emulated with veth + tbf (latency 50 us per "
          "message added by laconic's transport)\n")
    print("| model | compressor | link | bytes sent per step | measured (ms) | projected (ms) | measured / projected |")
    print("|---|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as directory:
        for model, (data, net) in MODELS.items():
            path = os.path.join(directory, f"{model}.lua")
            links = ", ".join(f'link {{ bandwidth = "{b}", latency = "50us", emulate = true }}' for b in LINKS)
            with open(path, "w") as f:
                f.write(EXPERIMENT.format(model=model, data=data, net=net, steps=steps,
                                          compressors=", ".join(COMPRESSORS), links=links))
            db = os.path.join(directory, f"{model}.db")
            subprocess.run([laconic, "run", path, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
            with sqlite3.connect(db) as c:
                for run_id, name in c.execute("SELECT id, name FROM runs ORDER BY id").fetchall():
                    def values(key):
                        return [v for (v,) in c.execute(
                            "SELECT value FROM metrics WHERE run_id = ? AND worker = 0 AND key = ?", (run_id, key))]
                    measured = statistics.median(values("time_communicate"))
                    projected = statistics.median(values("projected_time_communicate"))
                    sent = statistics.median(values("bytes_sent"))
                    compressor = name.split(",network=")[0].replace("compressor=", "")
                    link = next(b for b in LINKS if f"bandwidth={b}," in name)
                    print(f"| {model} | {compressor} | {link} | {sent / 1e3:.1f} kB | {1e3 * measured:.2f} | "
                          f"{1e3 * projected:.2f} | {measured / projected:.2f} |", flush=True)


if __name__ == "__main__":
    main()
