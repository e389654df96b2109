"""The answer to an imported list: every rule run on what matched (catalog parts and generic stand-ins), each rule
that needs a fact the list does not state reported as not verified, plus what the list itself says is wrong."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Iterable, Optional

from planner.catalog.load import Catalog, used_allowed
from planner.catalog.models import Finding, Severity
from planner.compat.checker import CheckReport, sizing_for
from planner.compat.rules import ALL_RULES, Build
from planner.fx import convert_money
from planner.money import Money

_ONE_ONLY = ("cooler", "cpu", "motherboard", "case")  # a second one of these in a list is a mistake, not a spare


def _stated_only(p: Any) -> bool:
    return bool(getattr(p, "stated_only", False))


def check_listed(catalog: Catalog, parts: dict[str, Any], *, gpu_count: int, power_fraction: float = 1.0,
                 workload: str = "transformer", precision: str = "amp", model_params: Optional[float] = None,
                 owned: Iterable[str] = (), used: str = "gpu", currency: str = "EUR") -> CheckReport:
    """Every rule over the parts a list named (one per category). A rule reading a fact a stand-in does not carry is
    reported as not verified, naming the line's part, instead of guessing the fact."""
    full = Build(parts=dict(parts), chips=catalog.chips, gpu_count=gpu_count, power_fraction=power_fraction,
                 workload=workload, precision=precision, model_params=model_params)
    # power and most rules read a memory kit's DIMM count: a kit known by its capacity only stays out of those
    lean = Build(parts={c: p for c, p in parts.items() if not _stated_only(p)}, chips=catalog.chips,
                 gpu_count=gpu_count, power_fraction=power_fraction, workload=workload, precision=precision,
                 model_params=model_params)
    findings: list[Finding] = []
    for rule in ALL_RULES:
        b = full if "memory" in rule.categories else lean
        cpu_unknown = ("cpu" in rule.categories and "psu" in rule.categories and "cpu" not in b.parts
                       and b.has(*(c for c in rule.categories if c != "cpu")))
        if not rule.applies(b) and not cpu_unknown:
            continue
        try:
            got = rule.check(b)
            if cpu_unknown:  # the GPUs alone already ask this much: the CPU only adds to it
                got = [f.model_copy(update={"message": f.message + " (the CPU was not identified: its power is not "
                                            "counted, so the real need is higher)"}) for f in got]
                if not got:
                    got = [rule.unverified("the CPU's power (its line was not identified)", [])]
            findings.extend(got)
        except (AttributeError, TypeError, KeyError):
            stand = [p.id for c, p in b.parts.items() if c in rule.categories and p.id not in catalog.parts]
            findings.append(rule.unverified(f"a fact the list does not state (for {', '.join(stand) or 'a part'})",
                                            stand))
    order = {Severity.PROBLEM: 0, Severity.WARNING: 1, Severity.UNVERIFIED: 2}
    findings.sort(key=lambda f: order[f.severity])
    try:
        sizing = sizing_for(lean)
    except (AttributeError, TypeError, KeyError):
        sizing = None
    owned_set = frozenset(owned)
    offers = {p.id: catalog.offer_for(p.id, allow_used=used_allowed(used, c)) if p.id in catalog.parts else None
              for c, p in lean.parts.items()}
    total = Decimal(0)
    for c, p in lean.parts.items():
        offer = offers.get(p.id)
        if offer is not None and p.id not in owned_set:
            total += convert_money(offer.price, offer.currency, currency) * (gpu_count if c == "gpu" else 1)
    return CheckReport(build=lean, findings=findings, sizing=sizing, total=Money(amount=total, currency=currency),
                       offers=offers, owned=owned_set)


def list_findings(matches: list[Any], rows_text: str) -> list[Finding]:
    """What the list itself gets wrong or states, whatever the catalog holds: a second CPU cooler (or CPU, board,
    case) for one build, GPUs of different chips, GPUs the list says run on x1/x4 links."""
    out: list[Finding] = []
    by_cat: dict[str, list[Any]] = {}
    lines: dict[str, list[Any]] = {}
    for m in matches:
        if m.category:
            lines.setdefault(m.category, []).append(m)
        if m.part is not None and m.category:
            by_cat.setdefault(m.category, []).append(m)
    for cat in _ONE_ONLY:
        ms = [m for m in lines.get(cat, []) if m.text.strip()]
        ids = list(dict.fromkeys(m.part.id if m.part is not None else f"line {m.line}" for m in ms))
        if len(ms) > 1 and not all(m.part is not None and m.part.id == ms[0].part.id for m in ms):
            what = {"cooler": "CPU coolers for one CPU socket", "cpu": "CPUs for one socket",
                    "motherboard": "motherboards", "case": "cases"}[cat]
            out.append(Finding(rule="list_duplicate_part", severity=Severity.PROBLEM,
                               message=f"the list has {len(ms)} {what} ({'; '.join(m.text for m in ms)}); a build "
                                       "takes one: the first was checked", parts=ids))
    psus = [m for m in lines.get("psu", []) if m.text.strip()]
    if len(psus) > 1:
        out.append(Finding(rule="list_two_psus", severity=Severity.WARNING,
                           message=f"the list has {len(psus)} power supplies ({'; '.join(m.text for m in psus)}): the "
                                   "power checks use the first; with two units each must carry the cards it feeds",
                           parts=[m.part.id for m in psus if m.part is not None]))
    gpus = by_cat.get("gpu", [])
    chips = list(dict.fromkeys(getattr(m.part, "chip", m.part.id) for m in gpus))
    if len(chips) > 1:
        out.append(Finding(rule="list_mixed_gpus", severity=Severity.WARNING,
                           message=f"the list mixes GPU chips ({', '.join(chips)}); the checks assume identical cards "
                                   f"and used the first ({gpus[0].text})", parts=[m.part.id for m in gpus]))
    lanes = [int(a or b) for a, b in re.findall(r"\bx(\d{1,2}) lanes negotiated|\bpcie x(\d)\b each",
                                                  rows_text.lower())]
    narrow = [n for n in lanes if n < 8]
    risers = re.findall(r"\b(?:x1|1x)\b[^.\n]{0,40}\briser|\briser[^.\n]{0,40}\b(?:x1|1x)\b", rows_text.lower())
    narrow += [1] * len(risers)
    if narrow:
        out.append(Finding(rule="list_stated_link", severity=Severity.WARNING,
                           message=f"the list says {len(narrow)} GPU(s) run on x{min(narrow)} links: host-to-GPU "
                                   f"transfers and all-reduce get {min(narrow)}/16 of an x16 slot's bandwidth",
                           parts=[m.part.id for m in gpus[:1]]))
    return out
