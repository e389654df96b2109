"""CLI start-up: `planner --help` and `--version` against a bare interpreter and `import typer`, as medians and ratios.

Reproduce: python benchmarks/bench_cli_startup.py [--runs 15]
Target (issue 12): --help and --version within 2x of a bare typer start (`import typer`; for --help, a one-command\ntyper app printing its own --help, since rendering help loads rich's Markdown and pygments whoever the app is).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import typer'": [sys.executable, "-c", "import typer"],
    "bare typer app --help": [sys.executable, "-c",
                              "import sys, typer; app = typer.Typer(); app.command()(lambda n: None); "
                              "app.callback()(lambda: None); sys.argv = ['bare', '--help']; app()"],
    "planner --help": [sys.executable, "-c", "import sys; sys.argv=['planner','--help']; from planner.cli import main; main()"],
    "planner --version": [sys.executable, "-c", "import sys; sys.argv=['planner','--version']; from planner.cli import main; main()"],
    "planner recommend --help": [sys.executable, "-c",
                                 "import sys; sys.argv=['planner','recommend','--help']; from planner.cli import main; main()"],
}


def time_cmd(cmd: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    # interleave the cases round by round so a burst of load hits all of them alike
    samples: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(args.runs):
        for name, cmd in CASES.items():
            samples[name] += time_cmd(cmd, 1)
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med["python -c 'import typer'"]
    bare = med["bare typer app --help"]
    print(f"{'command':<28} {'median s':>9} {'vs import typer':>16} {'vs bare app --help':>19}")
    for name, m in med.items():
        print(f"{name:<28} {m:9.3f} {m / base:15.2f}x {m / bare:18.2f}x")
    print(f"\nreproduce: python benchmarks/bench_cli_startup.py --runs {args.runs}")


if __name__ == "__main__":
    main()
