"""Wall time of the README's test command on every core (pytest-xdist, as pyproject's addopts run it) against the
same tests on one core (`-n 0`), in the same run, alternating which goes first.

    python benchmarks/bench_suite.py [--runs 1] [-- extra pytest args]

Each run is a fresh `python -m pytest -q -p no:cacheprovider` in this checkout with an empty PLANNER_HOME; the
script prints each wall time, the medians and their ratio, and the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _markdown import table  # noqa: E402 - the script's own folder is on sys.path

REPO = Path(__file__).resolve().parents[1]


def once(workers: str, extra: list[str]) -> tuple[float, str]:
    """One suite run with `-n workers`: (wall seconds, pytest's last line)."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PLANNER_HOME": home}
        start = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, *extra],
                           cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    last = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    if r.returncode != 0:
        raise SystemExit(f"pytest -n {workers} failed ({r.returncode}): {last}")
    return wall, last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("extra", nargs="*", help="extra pytest arguments (after --)")
    a = ap.parse_args()
    times: dict[str, list[float]] = {"0": [], "auto": []}
    for i in range(a.runs):
        for workers in (("0", "auto") if i % 2 == 0 else ("auto", "0")):
            wall, last = once(workers, a.extra)
            times[workers].append(wall)
            print(f"-n {workers}: {wall:.0f} s ({last})", flush=True)
    one, every = statistics.median(times["0"]), statistics.median(times["auto"])
    print()
    print(table(["one core (-n 0)", f"every core (-n auto, {os.cpu_count()} cores)", "ratio"],
                [[f"{one:.0f} s", f"{every:.0f} s", f"{every / one:.2f}"]]))
    print(f"\nmedians of {a.runs} run(s) each, alternating; load average {os.getloadavg()[0]:.1f}; reproduce: "
          f"python benchmarks/bench_suite.py --runs {a.runs}")


if __name__ == "__main__":
    main()
