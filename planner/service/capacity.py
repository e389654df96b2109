"""Catalog capacity for a request: the part it lacks (a 4-slot board), and brand = board maker vs chip maker."""

from __future__ import annotations

from planner.compat.rules.fit import slots_needed
from planner.catalog.load import Catalog
from planner.request import Request
from planner.settings import CHIP_MAKERS
from planner.vocab import CATEGORIES


def _priced(cat: Catalog, category: str, req: Request) -> list:
    """Parts of a category the solver may use: priced (or owned) and not excluded."""
    brands = {b.lower() for b in req.excluded_brands}  # as the solver reads them (planner.solver.model)
    return [p for p in cat.by_category(category)
            if p.id not in req.excluded and p.brand.lower() not in brands
            and (p.id in req.owned or cat.offer_for(p.id) is not None)]


def catalog_gaps(cat: Catalog, req: Request) -> list[str]:
    """Sentences naming what no part in the catalog offers for this request (empty when nothing is missing)."""
    out: list[str] = []
    n = req.gpu_count or 1  # None: the solver chose among counts; gaps are named for a count the user fixed
    if n > 1:
        boards = _priced(cat, "motherboard", req)
        # a GPU slot counts when its lanes are wired to the CPU (x8 or better): the solver's multi-GPU rule
        best = max(boards, key=lambda b: b.gpu_slots_x8 or 0, default=None)
        most = (best.gpu_slots_x8 or 0) if best else 0
        if most < n:
            out.append(f"no motherboard in the catalog is known to host {n} GPUs on CPU-wired x8 (or wider) slots "
                       f"(the most is {most}" + (f", {best.name}" if best else "") + "); add such a board "
                       f"(e.g. a WRX90 or TRX50 board with {n} double-spaced x16 slots) or ask for --gpus {max(most, 1)}")
        cases = _priced(cat, "case", req)
        slots = max((c.expansion_slots or 0 for c in cases), default=0)
        gpus = [g for g in _priced(cat, "gpu", req) if g.slots]
        thinnest = min(gpus, key=lambda g: slots_needed(g, n), default=None)
        if thinnest is not None and slots and slots_needed(thinnest, n) > slots:
            out.append(f"no case in the catalog has room for {n} cards: even {n} x {thinnest.name} "
                       f"({thinnest.slots:g} slots each) need {slots_needed(thinnest, n)} expansion slots, "
                       f"the roomiest case has {slots}")
    return out




def with_chip_makers_excluded(cat: Catalog, req: Request, makers: tuple[str, ...]) -> Request:
    """Leave out every GPU whose chip comes from one of `makers` (a PNY RTX 5090 is an NVIDIA chip on a PNY board),
    by adding those cards to the excluded parts; pinned and owned cards stay."""
    want = {m.lower() for m in makers}
    unknown = [m for m in makers if m.lower() not in {c.lower() for c in CHIP_MAKERS}]
    if unknown:
        from planner.errors import InputError

        raise InputError(f"{unknown[0]!r} is not a GPU chip maker; choose from {', '.join(CHIP_MAKERS)}")
    ids = tuple(g.id for g in cat.by_category("gpu") if g.chip in cat.chips and cat.chips[g.chip].vendor.lower() in want
                and g.id not in req.pinned and g.id not in req.owned)
    return req.model_copy(update={"excluded": tuple(dict.fromkeys((*req.excluded, *ids)))}) if ids else req


def brand_note(cat: Catalog, brands: tuple[str, ...]) -> list[str]:
    """Say what --exclude-brand meant when a brand is also a GPU chip maker (it is the maker on the box), and when
    no part carries it (a typo such as 'Zotak' would leave nothing out, unseen)."""
    import difflib

    out = []
    known = {p.brand.lower(): p.brand for c in CATEGORIES for p in cat.by_category(c) if p.brand}
    for b in brands:
        if b.lower() not in known:
            close = difflib.get_close_matches(b.lower(), list(known), n=3, cutoff=0.6)
            hint = (f"did you mean {' or '.join(known[c] for c in close)}?" if close
                    else "`planner catalog list` shows each part's brand")
            out.append(f"brand {b[:40]!r} left out nothing: no part in the catalog carries it ({hint})")
            continue
        maker = next((m for m in CHIP_MAKERS if m.lower() == b.lower()), None)
        if maker is None:
            continue
        theirs = sum(1 for g in cat.by_category("gpu") if g.brand.lower() == b.lower())
        chips = sum(1 for g in cat.by_category("gpu") if g.chip in cat.chips and cat.chips[g.chip].vendor == maker)
        out.append(f"brand {b!r} means the maker on the box: it leaves out {theirs} card(s) {maker} sells itself, "
                   f"not the {chips} card(s) with an {maker} chip from other board makers; to leave those out too, "
                   f"exclude the chip maker {maker}")
    return out
