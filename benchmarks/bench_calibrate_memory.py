"""Benchmark `planner calibrate`'s log reader: peak resident memory and time on a large training-log CSV.

Run from the repository root:

    python benchmarks/bench_calibrate_memory.py [--mb 140] [--baseline GIT_REV]

Writes a Lightning-style CSV of about --mb MB (step, epoch, loss, a throughput column and filler metric columns) in
a temporary directory and reads it with `calibration_log.read_log` in a fresh subprocess, so the peak RSS
(ru_maxrss) is the reader's own. With --baseline, the planner/ package of that commit (git archive) reads the same
file in the same run (issue 37 item 7: the old reader loaded the whole text and a dict per row, 3.9 GB for 139 MB).
Prints figures, no pass/fail.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from planner.perf.calibration_log import read_log
t = time.perf_counter()
r = read_log(sys.argv[2])
dt = time.perf_counter() - t
print(json.dumps({"seconds": round(dt, 2), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "median": r.median, "points": r.points}))
"""


def write_log(path: Path, mb: float) -> int:
    """About `mb` MB of rows; returns the row count."""
    row = "{s},0,{loss:.5f},{tp:.1f},0.000123,0.98,0.0001,12.5,71.0,300.5,1890.0\n"
    header = ("step,epoch,train_loss,throughput/tokens_per_sec,lr,grad_scale,weight_decay,grad_norm,gpu_temp,"
              "gpu_power,sm_clock\n")
    target, size, s = mb * 2**20, len(header), 0
    with path.open("w") as fh:
        fh.write(header)
        while size < target:
            line = row.format(s=s, loss=4 / (1 + s / 5000), tp=20000 + (s * 7) % 300)
            fh.write(line)
            size += len(line)
            s += 1
    return s


def run(package_root: Path, log: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(package_root), str(log)], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=140.0)
    ap.add_argument("--baseline", default=None, help="git revision to compare with (its planner/ package)")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "metrics.csv"
        t = time.perf_counter()
        rows = write_log(log, args.mb)
        print(f"wrote {log.stat().st_size / 2**20:.0f} MB, {rows:,} rows in {time.perf_counter() - t:.1f} s")
        print("this tree:", json.dumps(run(REPO, log)))
        if args.baseline:
            base = Path(tmp) / "baseline"
            base.mkdir()
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.baseline, "planner"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
            print(f"{args.baseline}:", json.dumps(run(base, log)))


if __name__ == "__main__":
    main()
