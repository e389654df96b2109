"""Re-measure docs/solver.md's budget table: the headline build from EUR 1 500 to 40 000, for the default
workload and for the README user's (15 M parameters, 8 runs x 7 h), each row with the build it beat.

Run: python benchmarks/budget_table.py   (prints a Markdown table; about 2 minutes on 2 cores)
"""
from __future__ import annotations

import json
import subprocess
import sys

BUDGETS = (1500, 3000, 5000, 7000, 10000, 15000, 25000, 40000)
PROFILES = {"default (160 M assumed)": [], "README user (15 M, 8 x 7 h)": ["--model-params", "15e6"]}


def row(budget: int, extra: list[str]) -> str:
    out = subprocess.run([sys.executable, "-m", "planner", "recommend", "--budget", str(budget), "--json", *extra],
                         capture_output=True, text=True)
    if not out.stdout.strip():
        return f"| {budget} | no answer | | | {out.stderr.strip()[:80]} |"
    data = json.loads(out.stdout)
    if not data.get("plans"):
        return f"| {budget} | no build | | | |"
    p = data["plans"][0]
    sw = p["sweep"]
    head = f"{sw['gpu_count']} x {p['gpu'].get('name') or p['gpu'].get('chip')}"
    others = [b for b in (data.get("side_by_side") or {}).get("builds", []) if b.get("role") != "recommended"]
    beat = "; ".join(f"{b['role']}: {b['gpu']['count']} x {b['gpu']['name']} {b['sweep_hours']:.1f} h, "
                     f"EUR {b['total']['amount']}" for b in others) or "no other GPU count shown"
    return (f"| {budget} | {head} | EUR {p['total']['amount']} | {sw['wall_hours']['value']:.1f} h "
            f"({sw['wall_hours']['low']:.1f}-{sw['wall_hours']['high']:.1f}) | shortest sweep within the budget; "
            f"beside it: {beat} |")


def main() -> None:
    for name, extra in PROFILES.items():
        print(f"\n**{name}**\n\n| budget (EUR) | headline | total | sweep (range) | why it won |\n|---|---|---|---|---|")
        for b in BUDGETS:
            print(row(b, extra), flush=True)


if __name__ == "__main__":
    main()
