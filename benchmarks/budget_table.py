"""Re-measure docs/solver.md's budget table: the headline build from EUR 1 500 to 40 000, for the default
workload and for the README user's (15 M parameters, 8 runs x 7 h), each row saying why its GPU count and its
generation won, from the figures the same answer shows (the best build of every GPU count the solver tried, and
the fastest build of another GPU generation among the alternatives).

Run: python benchmarks/budget_table.py   (prints two Markdown tables; about 3 minutes on 2 cores)
"""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Optional

from planner.catalog.load import load_catalog

BUDGETS = (1500, 3000, 5000, 7000, 10000, 15000, 25000, 40000)
PROFILES = {"default (160 M assumed)": [], "README user (15 M, 8 x 7 h)": ["--model-params", "15e6"]}
ALTERNATIVES = "4"  # other chips and counts beside the headline, where another generation shows up


def eur(amount: str) -> str:
    return f"EUR {float(amount):,.0f}".replace(",", " ")


def label(b: dict[str, Any]) -> str:
    return f"{b['gpu']['count']} x {b['gpu']['name']}"


def generation(b: dict[str, Any], chips: dict[str, Any]) -> str:
    return chips[b["gpu"]["chip"]].architecture.replace("_", " ").title()


def why(first: dict[str, Any], data: dict[str, Any], chips: dict[str, Any]) -> str:
    """Why this count (every other count's best, or that none fits) and this generation (the fastest other one)."""
    bits = []
    counts = []
    for tried in data["stats"]["by_gpu_count"]:
        if tried["gpus"] == first["gpu"]["count"]:
            continue
        b: Optional[dict[str, Any]] = tried.get("build")
        if b is None:
            counts.append(f"{tried['gpus']}: none within the budget")
        else:
            counts.append(f"{tried['gpus']}: {b['sweep_hours']:.2f} h ({label(b)}, {eur(b['total']['amount'])})")
    if counts:
        bits.append("other GPU counts: " + "; ".join(counts))
    share = first.get("runs_sharing_each_gpu")
    if share:
        bits.append(f"{share['runs_per_gpu']} runs share each card at {share['gain']:.2f}x one run "
                    f"({share['one_run_per_gpu_hours']['value']:.2f} h with one run per card)")
    mine = generation(first, chips)
    others = [p["summary"] for p in data["plans"][1:]] + [t["build"] for t in data["stats"]["by_gpu_count"]
                                                         if t.get("build")]
    other_gen = [b for b in others if generation(b, chips) != mine]
    if other_gen:
        best = min(other_gen, key=lambda b: (b["sweep_hours"], float(b["total"]["amount"])))
        bits.append(f"{mine} over {generation(best, chips)}: {label(best)} {best['sweep_hours']:.2f} h, "
                    f"{eur(best['total']['amount'])}")
    else:
        bits.append(f"no build of another generation among the {ALTERNATIVES} alternatives")
    return "; ".join(bits)


def row(budget: int, extra: list[str], chips: dict[str, Any]) -> str:
    out = subprocess.run([sys.executable, "-m", "planner", "recommend", "--budget", str(budget), "--json",
                          "--alternatives", ALTERNATIVES, *extra], capture_output=True, text=True)
    if not out.stdout.strip():
        return f"| {budget} | no answer | | | {out.stderr.strip()[:80]} |"
    data = json.loads(out.stdout)
    if not data.get("plans"):
        return f"| {budget} | no build | | | |"
    first = data["plans"][0]["summary"]
    return (f"| {budget} | {label(first)} | {eur(first['total']['amount'])} | {first['sweep_hours']:.2f} h "
            f"({first['sweep_hours_low']:.1f}-{first['sweep_hours_high']:.1f}) | {why(first, data, chips)} |")


def main() -> None:
    chips = load_catalog().chips
    for name, extra in PROFILES.items():
        print(f"\n**{name}**\n\n| budget (EUR) | headline | total | sweep (range) | why this GPU count and generation |"
              "\n|---|---|---|---|---|")
        for b in BUDGETS:
            print(row(b, extra, chips), flush=True)


if __name__ == "__main__":
    main()
