#!/usr/bin/env python3
"""What `laconic ui` serves on the UI tests' fixtures, written down, to hold a change to the API.

    python3 scripts/api-snapshot.py LACONIC UI_FIXTURES OUT_DIR           # one JSON file per request
    python3 scripts/api-snapshot.py --compare BEFORE_DIR AFTER_DIR        # exit 1 if AFTER changed one
    python3 scripts/api-snapshot.py --check GOLDEN_DIR LACONIC UI_FIXTURES # both: the ctest api_golden

The fixtures are tests/ui/ui_fixtures' databases (small, hardware, clocks, verdicts). For each, the
script starts `laconic ui` on a free loopback port and asks it every read the pages make of those
runs. The host's name and times of the clock (when a run was created, started, ended or last beat, its wall time, the
server's `now`, the report's wall-time column) differ from one recording to the next and are
written as "<time>" (the host as "<host>"); the fixtures are made in a folder of their own, written "<fixtures>". --compare holds
AFTER to BEFORE: every value BEFORE has, AFTER has equal; what AFTER adds is listed, not refused
(an API grows by new fields). docs/ui.md, "API".
"""
import json
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

# Of the clock, or of the machine that recorded the fixtures (its host name): what stands for them.
VOLATILE = {**{k: "<time>" for k in ("created", "started", "ended", "heartbeat", "wall", "now")}, "host": "<host>"}
FIXTURES = {
    "small": ["/api/runs", "/api/runs/1", "/api/runs/2", "/api/runs/1/step_time",
              "/api/runs/1/series?key=train_loss&worker=0&points=1200",
              "/api/runs/2/series?key=train_loss&worker=0&points=1200&bytes=1&projected=1",
              "/api/runs/matching?where=compressor%3Dtopk", "/api/experiments", "/api/experiments/sweep",
              "/api/experiments/sweep?target=0.83"],
    "hardware": ["/api/runs", "/api/experiments", "/api/experiments/gpu"],
    "clocks": ["/api/runs", "/api/runs/1", "/api/runs/1/step_time", "/api/experiments/clocks"],
    "verdicts": ["/api/experiments/verdicts"],
}


def without_clock(value):
    if isinstance(value, dict) and "rows" in value and "columns" in value:  # a report table
        value = dict(value)
        for rows, header, name in (("rows", [c["header"] for c in value["columns"]], "wall time (s)"),
                                   ("csv_rows", value.get("csv_header", []), "wall_time_s")):
            if name in header:
                at = header.index(name)
                value[rows] = [r[:at] + ["<time>"] + r[at + 1:] for r in value[rows]]
    if isinstance(value, dict):
        return {k: (VOLATILE[k] if k in VOLATILE and not isinstance(v, (dict, list)) else without_clock(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [without_clock(v) for v in value]
    return value


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, deadline):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def snapshot(laconic, fixtures, out):
    laconic, fixtures = (str(pathlib.Path(p).resolve()) for p in (laconic, fixtures))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, paths in FIXTURES.items():
            db = f"{name}.db"
            subprocess.run([fixtures, name, db], check=True, stdout=subprocess.DEVNULL, timeout=120, cwd=tmp)
            port = free_port()
            server = subprocess.Popen([laconic, "ui", "--db", db, "--port", str(port)], cwd=tmp,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 30
                for path in paths:
                    status, body = get(f"http://127.0.0.1:{port}{path}", deadline)
                    file = out / (name + "_" + urllib.parse.quote(path.strip("/"), safe="") + ".json")
                    text = json.dumps({"status": status, "body": without_clock(body)}, indent=1, sort_keys=True)
                    # Paths the runs hold absolutely (a hardware profile's) name the fixtures' folder.
                    file.write_text(text.replace(str(pathlib.Path(tmp).resolve()), "<fixtures>") + "\n")
            finally:
                server.terminate()
                server.wait(timeout=30)


def differences(before, after, where, out):
    """Where `after` lacks or changes what `before` has (added keys go to out["added"])."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                out["changed"].append(f"{where}.{key}: gone")
            else:
                differences(before[key], after[key], f"{where}.{key}", out)
        out["added"].update(f"{where}.{key}" for key in after if key not in before)
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            out["changed"].append(f"{where}: {len(before)} items, now {len(after)}")
        for i, (b, a) in enumerate(zip(before, after)):
            differences(b, a, f"{where}[{i}]", out)
    elif before != after:
        out["changed"].append(f"{where}: {json.dumps(before)[:120]} -> {json.dumps(after)[:120]}")


def compare(before_dir, after_dir):
    out = {"changed": [], "added": set()}
    files = sorted(before_dir.glob("*.json"))
    for file in files:
        other = after_dir / file.name
        if not other.exists():
            out["changed"].append(f"{file.name}: not served")
            continue
        differences(json.loads(file.read_text()), json.loads(other.read_text()), file.stem, out)
    # An added key is listed once, whatever item of a list it is in.
    added = sorted({"".join(part.split("[")[0] for part in a.split("]")) for a in out["added"]})
    for line in added:
        print("added:", line)
    for line in out["changed"]:
        print("CHANGED:", line)
    print(f"{len(files)} responses compared: {len(out['changed'])} changed values, {len(added)} added fields")
    return 1 if out["changed"] else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--check":
        with tempfile.TemporaryDirectory() as now:
            snapshot(sys.argv[3], sys.argv[4], pathlib.Path(now))
            status = compare(pathlib.Path(sys.argv[2]), pathlib.Path(now))
        if status:
            print("the API changed what it served (above); if that is meant, write it down again: python3 "
                  "scripts/api-snapshot.py LACONIC UI_FIXTURES tests/ui/golden_api")
        return status
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]))
    if len(sys.argv) == 4:
        snapshot(sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
