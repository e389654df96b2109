"""Benchmark the doctor: metrics rows/s and peak memory by length, kernel-log lines/s, watch rows/s, linear guards.

Run from the repository root:

    python benchmarks/bench_doctor.py [--rows 200000 1000000 5000000] [--kernel-lines 1000000]
                                      [--baseline GIT_REV] [--metrics-only]
    python benchmarks/bench_doctor.py --same-file-mb 1024 --xml-mb 50 [--baseline GIT_REV]

--same-file-mb N writes one metrics CSV of about N MB in a temporary directory and reads it with `doctor metrics`
and with one `doctor watch` poll over the whole backlog (issue 27: the same engine, so about the same time);
--xml-mb N measures the peak RSS of `doctor events` on a wevtutil XML export holding N MB of elements other than
<Event> (issue 27: 50 MB reached 1.7 GB before).

Each case runs in a fresh subprocess so its peak resident memory (ru_maxrss) is its own. With --baseline, the
planner/ package of that commit (git archive) reads the same generated file in the same run, so the printed
ratio and the [rows, findings] of both are comparable. Prints figures, no pass/fail.
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
    """A steady run with a throughput dip (40-42 %), a hot stretch (70 %) and five NaN losses (90 %), so the
    findings of the old and new readers can be compared, not just their row counts."""
    dip, hot, nan = range(rows * 40 // 100, rows * 42 // 100), range(rows * 70 // 100, rows * 705 // 1000), \
        range(rows * 9 // 10, rows * 9 // 10 + 5)
    with path.open("w") as fh:
        fh.write("step,loss,tokens_per_s,gpu_util,gpu_temp\n")
        fh.writelines(f"{s},{'nan' if s in nan else f'{4 / (1 + s / 5000):.5f}'},"
                      f"{(600 if s in dip else 1000) + s % 7},{95 + s % 3},{(86 if s in hot else 70) + s % 4}\n"
                      for s in range(1, rows + 1))


def write_kernel(path: Path, lines: int) -> None:
    noise = "rig kernel: r8169 0000:05:00.0 enp5s0: Link is Up - 1Gbps/Full - flow control rx/tx\n"
    xid = "rig kernel: NVRM: Xid (PCI:0000:01:00): 13, pid=7781, name=python3, Graphics SM Warp Exception\n"
    with path.open("w") as fh:
        for n in range(lines):
            fh.write(f"2025-10-{14 + n // 86400 % 10:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+0200 "
                     + (xid if n % 1000 == 0 else noise))


CPU_S: dict[str, float] = {}  # code -> CPU seconds (user + system) of its last run: steadier than wall on a busy box


def run_case(code: str, root: Path = REPO) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB of that process, its stdout) of a Python snippet in a fresh interpreter."""
    probe = ("\nimport resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF); print(_u.ru_utime + _u.ru_stime); "
             "print(_u.ru_maxrss)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + probe], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    *out, cpu, peak = done.stdout.strip().splitlines()
    CPU_S[code] = float(cpu)
    return wall, int(peak) / 1024, "\n".join(out)


def baseline_root(base: Path, rev: str | None) -> Path | None:
    if not rev:
        return None
    root = base / "baseline"
    root.mkdir()
    archive = subprocess.run(["git", "archive", rev, "planner"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    (root / "planner" / "data").symlink_to(REPO / "data")
    return root


def same_file(mb: float | None, xml_mb: float | None, rev: str | None) -> None:
    """Issue 27's two figures: watch vs metrics on the same file, and XML peak memory."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        roots = [("this tree", REPO)]
        old = baseline_root(base, rev)
        if old is not None:
            roots.append((f"baseline {rev}", old))
        if mb:
            path = base / "big.csv"
            rows = int(mb * 1024 * 1024 / 26.6)  # about 26.6 bytes a row in write_metrics
            write_metrics(path, rows)
            print(f"metrics file: {path.stat().st_size / 1024 / 1024:,.0f} MB, {rows:,} rows")
            metrics = ("from planner.doctor import diagnose_metrics; "
                       f"r = diagnose_metrics({str(path)!r}); print(r.rows, sorted({{f.kind for f in r.findings}}))")
            watch = ("from planner.doctor.watch import Watch, WatchOptions; "
                     f"w = Watch(WatchOptions(metrics={str(path)!r}, state_path={str(base / 's.json')!r})); "
                     "kinds = sorted({s.kind for s in w.poll()}); "
                     "print(w.feed.rows if hasattr(w, 'feed') else w.detector.rows, kinds)")
            for label, root in roots:
                m_wall, m_rss, m_out = run_case(metrics, root)
                m_cpu = CPU_S[metrics]
                w_wall, w_rss, w_out = run_case(watch, root)
                w_cpu = CPU_S[watch]
                (base / "s.json").unlink(missing_ok=True)
                print(f"{label}: doctor metrics {m_wall:6.1f} s wall {m_cpu:6.1f} s CPU, peak RSS {m_rss:5.0f} MiB, "
                      f"{m_out}\n{' ' * len(label)}  doctor watch   {w_wall:6.1f} s wall {w_cpu:6.1f} s CPU, peak RSS "
                      f"{w_rss:5.0f} MiB, {w_out}\n{' ' * len(label)}  watch / metrics: {w_cpu / m_cpu:.2f}x CPU, "
                      f"{w_wall / m_wall:.2f}x wall")
            path.unlink()
        if xml_mb:
            path = base / "events.xml"
            events = (REPO / "tests" / "data" / "doctor" / "user-system.xml").read_text(encoding="utf-8")
            other = "<Other><Item a='1'/><Item a='2'/><Item a='3'/></Other>\n"
            with path.open("w") as fh:
                fh.write(events)
                fh.write(other * int(xml_mb * 1024 * 1024 / len(other)))
                fh.write(events)
            code = f"from planner.doctor import diagnose_events; r = diagnose_events({str(path)!r}); print(len(r.incidents))"
            for label, root in roots:
                wall, rss, out = run_case(code, root)
                print(f"{label}: doctor events on {xml_mb:g} MB of XML: {wall:6.1f} s wall, peak RSS {rss:6.0f} MiB, "
                      f"{out} incidents")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--kernel-lines", type=int, default=500_000)
    parser.add_argument("--baseline", metavar="GIT_REV", help="also time this commit's planner/ on the same files")
    parser.add_argument("--metrics-only", action="store_true", help="skip the watch, events and grouping cases")
    parser.add_argument("--same-file-mb", type=float, help="only: doctor metrics vs doctor watch on one file this big")
    parser.add_argument("--xml-mb", type=float, help="only: peak memory of doctor events on this much XML")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    if args.same_file_mb or args.xml_mb:
        same_file(args.same_file_mb, args.xml_mb, args.baseline)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        old_root = None
        if args.baseline:
            old_root = base / "baseline"
            old_root.mkdir()
            archive = subprocess.run(["git", "archive", args.baseline, "planner"], cwd=REPO, capture_output=True,
                                     check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive, check=True)
        idle = "import planner.doctor.diagnose, planner.doctor.watch"
        idle_wall, idle_rss, _ = run_case(idle)
        print(f"import only: {idle_wall:.2f} s wall, {CPU_S[idle]:.2f} s CPU, peak RSS {idle_rss:.0f} MiB")
        for rows in args.rows:
            path = base / f"m{rows}.csv"
            write_metrics(path, rows)
            code = ("from planner.doctor import diagnose_metrics; import json; "
                    f"r = diagnose_metrics({str(path)!r}); print(json.dumps([r.rows, [f.kind for f in r.findings]]))")
            wall, rss, out = run_case(code)
            cpu = CPU_S[code]
            print(f"doctor metrics {rows:>9,} rows: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {rows / wall:9,.0f} rows/s, "
                  f"peak RSS {rss:6.0f} MiB, [rows, findings] {out}")
            if old_root is not None:
                old_wall, old_rss, old_out = run_case(code, old_root)
                old_cpu = CPU_S[code]
                print(f"  baseline {args.baseline}: {old_wall:6.1f} s wall, {old_cpu:6.1f} s CPU, peak RSS {old_rss:6.0f} "
                      f"MiB, [rows, findings] {old_out}; new is {old_wall / wall:.1f}x faster in wall time, "
                      f"{old_cpu / cpu:.1f}x in CPU time" + ("" if old_out == out else " (RESULTS DIFFER)"))
            if args.metrics_only:
                path.unlink()
                continue
            code = ("from planner.doctor.watch import Watch, WatchOptions; "
                    f"w = Watch(WatchOptions(metrics={str(path)!r}, state_path={str(base / 's.json')!r})); "
                    "kinds = sorted({s.kind for s in w.poll()}); "
                    "print(w.feed.rows if hasattr(w, 'feed') else w.detector.rows, kinds)")
            wall, rss, out = run_case(code)
            cpu = CPU_S[code]
            (base / "s.json").unlink()
            print(f"doctor watch   {rows:>9,} rows: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {rows / wall:9,.0f} rows/s, "
                  f"peak RSS {rss:6.0f} MiB (one poll of the whole backlog), [rows, signals] {out}")
            if old_root is not None:
                old_wall, old_rss, old_out = run_case(code, old_root)
                (base / "s.json").unlink()
                print(f"  baseline {args.baseline}: {old_wall:6.1f} s wall, {CPU_S[code]:6.1f} s CPU, peak RSS "
                      f"{old_rss:6.0f} MiB; new is {CPU_S[code] / cpu:.1f}x in CPU time"
                      + ("" if old_out == out else f" (RESULTS DIFFER: {old_out})"))
            path.unlink()
        if args.metrics_only:
            return
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
