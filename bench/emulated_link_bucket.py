#!/usr/bin/env python3
"""How faithfully tc's tbf carries one message, by its bucket and the largest packet it is given
(docs/network-model.md, "Emulated links"). Two network namespaces joined by a veth pair, tbf at
the link's rate at both ends (as laconic's emulated links shape each rank's link); a sender
writes a message every 3 ms, the receiver answers one byte once it has all of it, and the median
time of REPS messages is set against the message's bytes at the link's rate. 1.0x is the wire;
below it the message crossed faster than the link could carry it, by at most the bucket's time
when the emulation works as meant. Needs root.

usage: bench/emulated_link_bucket.py [REPS]      (default 20; about a minute and a half here)

Each row is one shaping: laconic's (controller/emulated_network.cpp: link_shaping), two it had before
(a floor of 16 kB under the bucket, 1.3 ms of 100 Mbit/s; a bucket of 1 ms with TCP's own
packets, up to 64 kB through a veth pair), and TCP's packets cut to 1500 bytes (GSO off).
"""
import json
import statistics
import subprocess
import sys

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
# One message of LeNet-5's Top-k 1% and QSGD exchanges (2 workers), its fp16 and dense ones, the
# MLP's, mlp_wide's.
SIZES = [2_500, 23_400, 123_400, 246_800, 1_311_500, 7_432_200]
NS = ("laconic-bucket-tx", "laconic-bucket-rx")
ADDR = ("10.88.0.1", "10.88.0.2")

RECEIVER = r"""
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.88.0.2", 5555)); s.listen(1); s.settimeout(60); c, _ = s.accept(); c.settimeout(60)
buf = bytearray(1 << 20)
while True:
    head = c.recv(8, socket.MSG_WAITALL)
    if len(head) < 8: break
    n = int.from_bytes(head, "little"); got = 0
    while got < n: got += c.recv_into(buf, min(len(buf), n - got))
    c.sendall(b"k")
"""

SENDER = r"""
import json, socket, statistics, sys, time
sizes, reps = json.loads(sys.argv[1]), int(sys.argv[2])
for attempt in range(50):
    try: s = socket.create_connection(("10.88.0.2", 5555), timeout=60); break
    except OSError: time.sleep(0.1)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
out = {}
for m in sizes:
    data, times = bytes(m), []
    for i in range(reps + 2):
        time.sleep(0.003)
        t = time.perf_counter(); s.sendall(m.to_bytes(8, "little") + data); s.recv(1)
        times.append(time.perf_counter() - t)
    out[m] = statistics.median(times[2:])
print(json.dumps(out))
"""


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def build(rate, burst, gso_max_size, gso_off):
    tear_down()
    for ns in NS:
        sh("ip", "netns", "add", ns)
    sh("ip", "-n", NS[0], "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", NS[1])
    for ns, addr in zip(NS, ADDR):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
        if gso_max_size:
            sh("ip", "-n", ns, "link", "set", "eth0", "gso_max_size", str(gso_max_size))
        if gso_off:
            sh("ip", "-n", ns, "link", "set", "eth0", "gso_max_segs", "1")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", f"{rate}bit", "burst", str(burst),
           "latency", "500ms")


def tear_down():
    for ns in NS:
        sh("ip", "netns", "del", ns, check=False)


def measure():
    receiver = subprocess.Popen(["ip", "netns", "exec", NS[1], "python3", "-c", RECEIVER])
    try:
        sender = subprocess.run(["ip", "netns", "exec", NS[0], "python3", "-c", SENDER, json.dumps(SIZES), str(REPS)],
                                capture_output=True, text=True, timeout=600, check=True)
    finally:
        receiver.kill()
        receiver.wait()
    return {int(k): v for k, v in json.loads(sender.stdout).items()}


def link_shaping(rate):  # controller/emulated_network.cpp's rule
    frame = 1514
    burst = max(3 * frame, rate // 8 // 5000)
    return burst, min(max(burst // 2, 2 * frame), 65536)


def main():
    rows = []
    for rate in (10**8, 10**9, 10**10):
        burst, packets = link_shaping(rate)
        rows.append((rate, f"{burst * 8e6 / rate:.0f} us ({burst} B), packets {packets} B (laconic)", burst, packets,
                     False))
    # Before: a floor of 16 kB (packets of 8 kB) at 100 Mbit/s; a bucket of 1 ms with TCP's own
    # packets at 1 Gbit/s; and TCP's packets cut to 1500 bytes.
    rows.append((10**8, "1311 us (16384 B), packets 8192 B (before)", 16384, 8192, False))
    rows.append((10**9, "1000 us (125000 B), TCP's packets (before)", 125000, 0, False))
    rows.append((10**9, "200 us (25000 B), GSO off (1500 B packets)", 25000, 0, True))
    print("The median time of a message in ms, and its ratio to the message's bytes at the link's rate")
    print(f"{'link':>10}  {'bucket, packets':52}" + "".join(f"{m / 1e3:>18.1f} kB" for m in SIZES))
    try:
        for rate, label, burst, packets, gso_off in rows:
            build(rate, burst, packets, gso_off)
            times = measure()
            cells = [f"{times[m] * 1e3:.3f} ms ({times[m] / (8 * m / rate):.2f}x)" for m in SIZES]
            print(f"{rate / 1e6:>6.0f}Mbit  {label:52}" + "".join(f"{c:>21}" for c in cells), flush=True)
    finally:
        tear_down()


if __name__ == "__main__":
    main()
