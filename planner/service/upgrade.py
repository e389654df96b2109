"""Upgrade first: a user who owns a platform (CPU and board) is shown the build that keeps their machine (a GPU
swap, a PSU when the old one cannot carry the card) ahead of a new platform, when it sweeps at least as fast."""

from __future__ import annotations

from typing import Any, Callable, Optional

from planner.catalog.load import Catalog
from planner.catalog.models import Storage
from planner.money import format_money
from planner.request import Request

Solve = Callable[[Request], Any]
SWAPPABLE = ("gpu", "psu")  # what an upgrade may replace; the rest of the machine stays
SAME_SPEED = 1.02  # the upgrade leads unless the new platform sweeps more than 2 % faster


def box_warnings(catalog: Catalog, keep: tuple[str, ...], req: Request) -> tuple[str, ...]:
    """Warning rules the kept parts raise among themselves (4 DIMMs on 2 channels, an old PSU): properties of the
    machine the user keeps, not choices the plan makes, so the upgrade accepts them (and still shows them)."""
    from planner.compat.checker import check_parts

    report = check_parts(catalog, [catalog.parts[i] for i in keep], gpu_count=1, power_fraction=req.power_fraction,
                         workload=req.workload, precision=req.precision, model_params=req.model_params,
                         owned=keep, used=req.used, currency=req.currency)
    return tuple(dict.fromkeys(f.rule for f in report.warnings))


def upgrade_request(catalog: Catalog, req: Request) -> Optional[Request]:
    """The request that keeps every owned part but the GPUs and the PSU (both stay owned, at EUR 0, and are
    swapped only when the new card needs it), or None when the user owns no platform."""
    owned = [catalog.parts[i] for i in req.owned if i in catalog.parts]
    if req.mode != "best" or req.budget is None or not {"cpu", "motherboard"} <= {p.category for p in owned}:
        return None
    keep = tuple(p.id for p in owned if p.category not in SWAPPABLE)
    accept = box_warnings(catalog, keep, req)
    disks = [p.capacity_gb for p in owned if isinstance(p, Storage)]
    storage = min(req.min_storage_gb, max(disks)) if disks else req.min_storage_gb  # the user's drive holds their data
    return req.model_copy(update={"min_storage_gb": storage, "pinned": tuple(dict.fromkeys((*req.pinned, *keep))), "alternatives": 0,
                                  "accepted_warnings": tuple(dict.fromkeys((*req.accepted_warnings, *accept)))})


def upgrade_note(up: Any, other: Any, req: Request, accepted: tuple[str, ...],
                 owned_names: tuple[tuple[str, str, str], ...] = ()) -> str:
    """'Upgrade of your machine: keeps ...; buys ...; a new platform instead (...) costs ... and sweeps in ... h'."""
    from planner.solver.notes import shown, sweep_hours

    kept = [p.name for p in up.parts.values() if p.id in up.owned]
    bought = [(f"{up.gpu_count} x " if c == "gpu" and up.gpu_count > 1 else "") + p.name
              for c, p in up.parts.items() if p.id not in up.owned]
    text = (f"upgrade of your machine: keeps your {', '.join(kept)} (owned, EUR 0); buys {', '.join(bought)} for "
            f"{format_money(up.total, req.currency)}, the sweep in {shown(sweep_hours(up, req))} h")
    old_psu = next((name for pid, name, category in owned_names if category == "psu"
                    and pid not in {p.id for p in up.parts.values()}), None)
    if old_psu is not None and "psu" in up.parts and up.parts["psu"].id not in up.owned:
        text += f" (the new PSU because your {old_psu} cannot carry the new card safely)"
    if other is not None:
        used = {p.id for p in other.parts.values()}
        dropped = [name for pid, name, _ in owned_names if pid not in used]
        text += (f"; the build that replaces {'your ' + ', '.join(dropped) if dropped else 'more of your machine'} "
                 f"(next) costs {format_money(other.total, req.currency)} and sweeps in "
                 f"{shown(sweep_hours(other, req))} h")
    if accepted:
        text += ("; kept as they are in your machine, with their warnings shown: " + ", ".join(accepted))
    return text


def upgrade_first(catalog: Catalog, req: Request, rec: Any, solve: Solve) -> Any:
    """`rec` with the upgrade of the user's machine as its first plan when it sweeps at least as fast (within
    SAME_SPEED) as the recommended new build; the new build follows as the first alternative."""
    from planner.solver.notes import sweep_hours
    from planner.solver.plan import trade_offs

    up_req = upgrade_request(catalog, req)
    if up_req is None or not rec.plans:
        return rec
    first = rec.plans[0]
    if set(up_req.pinned) <= {p.id for p in first.parts.values()}:
        first.notes.insert(0, upgrade_note(first, None, req, ()))  # the plan already is the upgrade: say so
        return rec
    up = solve(up_req)
    if not up.plans:
        up = solve(up_req.model_copy(update={"avoid_warnings": False}))
    if not up.plans or sweep_hours(up.plans[0], req) > sweep_hours(first, req) * SAME_SPEED:
        return rec
    better = up.plans[0]
    accepted = tuple(r for r in up_req.accepted_warnings if r not in req.accepted_warnings)
    names = tuple((i, catalog.parts[i].name, catalog.parts[i].category) for i in req.owned if i in catalog.parts
                  and catalog.parts[i].category != "gpu")
    better.notes.insert(0, upgrade_note(better, first, req, accepted, names))
    first.trade_offs = trade_offs(better, first)
    rec.plans[:] = [better, *rec.plans]
    return rec
