"""Benchmark the doctor: metrics rows/s and peak memory by length, kernel-log lines/s, watch rows/s, linear guards.

Run from the repository root:

    python benchmarks/bench_doctor.py [--rows 200000 1000000 5000000] [--kernel-lines 1000000]

Each case runs in a fresh subprocess so its peak resident memory (ru_maxrss) is its own. Prints figures,
no pass/fail.
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


def write_metrics(path: Path, rows: int) -> None:
    with path.open("w") as fh:
        fh.write("step,loss,tokens_per_s,gpu_util,gpu_temp\n")
        fh.writelines(f"{s},{4 / (1 + s / 5000):.5f},{1000 + s % 7},{95 + s % 3},{70 + s % 4}\n"
                      for s in range(1, rows + 1))


def write_kernel(path: Path, lines: int) -> None:
    noise = "rig kernel: r8169 0000:05:00.0 enp5s0: Link is Up - 1Gbps/Full - flow control rx/tx\n"
    xid = "rig kernel: NVRM: Xid (PCI:0000:01:00): 13, pid=7781, name=python3, Graphics SM Warp Exception\n"
    with path.open("w") as fh:
        for n in range(lines):
            fh.write(f"2025-10-{14 + n // 86400 % 10:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+0200 "
                     + (xid if n % 1000 == 0 else noise))


def run_case(code: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB of that process, its stdout) of a Python snippet in a fresh interpreter."""
    probe = "\nimport resource as _r; print(_r.getrusage(_r.RUSAGE_SELF).ru_maxrss)"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + probe], cwd=REPO, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    *out, peak = done.stdout.strip().splitlines()
    return wall, int(peak) / 1024, "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--kernel-lines", type=int, default=500_000)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        idle_wall, idle_rss, _ = run_case("import planner.doctor.diagnose, planner.doctor.watch")
        print(f"import only: {idle_wall:.2f} s, peak RSS {idle_rss:.0f} MiB")
        for rows in args.rows:
            path = base / f"m{rows}.csv"
            write_metrics(path, rows)
            wall, rss, out = run_case(
                "from planner.doctor import diagnose_metrics; import json; "
                f"r = diagnose_metrics({str(path)!r}); print(json.dumps([r.rows, len(r.findings)]))")
            print(f"doctor metrics {rows:>9,} rows: {wall:6.1f} s, {rows / wall:9,.0f} rows/s, peak RSS {rss:6.0f} "
                  f"MiB, [rows, findings] {out}")
            wall, rss, out = run_case(
                "from planner.doctor.watch import Watch, WatchOptions; "
                f"w = Watch(WatchOptions(metrics={str(path)!r}, state_path={str(base / 's.json')!r})); w.poll(); "
                "print(w.detector.rows)")
            (base / "s.json").unlink()
            print(f"doctor watch   {rows:>9,} rows: {wall:6.1f} s, {rows / wall:9,.0f} rows/s, peak RSS {rss:6.0f} "
                  f"MiB (one poll of the whole backlog)")
            path.unlink()
        kern = base / "kern.log"
        write_kernel(kern, args.kernel_lines)
        wall, rss, out = run_case(
            "from planner.doctor import diagnose_events; "
            f"r = diagnose_events({str(kern)!r}); print(r.total_events, len(r.incidents))")
        print(f"doctor events  {args.kernel_lines:>9,} kernel lines (short-iso): {wall:6.1f} s, "
              f"{args.kernel_lines / wall:9,.0f} lines/s, peak RSS {rss:6.0f} MiB, [events, incidents] {out}")
        for lines in (50_000, 200_000):
            fl = base / "fl.txt"
            fl.write_text("TimeCreated  : 10/14/2025 2:13:55 AM\nProviderName : Microsoft-Windows-Kernel-Power\n"
                          "Id           : 41\nMessage      : rebooted\n"
                          + "".join(f"               continuation {n}\n" for n in range(lines)))
            wall, _, _ = run_case(f"from planner.doctor import diagnose_events; diagnose_events({str(fl)!r})")
            print(f"Format-List with {lines:,} continuation lines: {wall:.2f} s (issue 16: 17.5 s for 50k before)")
        wall, _, out = run_case(
            "import time; from datetime import datetime, timedelta; from planner.doctor.catalogue import lookup; "
            "from planner.doctor.events import LogEvent, group_incidents; i = lookup('nvlddmkm', 153); "
            "ev = [LogEvent(time=datetime(2025, 1, 1) + timedelta(milliseconds=n), info=i) for n in range(20000)]; "
            "t = time.perf_counter(); g = group_incidents(ev); print(f'{time.perf_counter() - t:.3f}')")
        print(f"grouping 20,000 events in one burst: {float(out):.3f} s (issue 16: 23-31 s before)")
    print(json.dumps({"note": "figures from one run on this machine; other sessions may load it"}))


if __name__ == "__main__":
    main()
