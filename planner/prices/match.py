"""Listings -> catalog parts: normalised model tokens that must agree, brand, memory size, condition, confidence."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Protocol, Sequence

from planner.prices.condition import condition_from_text

DEFAULT_THRESHOLD = 0.75

# Words that change the product when present on one side only ("5070 Ti" is not "5070").
_VARIANTS = frozenset({"ti", "super", "xt", "xtx", "gre", "x3d"})
_VARIANTS_BY_CATEGORY = {"storage": frozenset({"pro", "evo", "plus"}), "psu": frozenset(), "cpu": frozenset()}
# Words that say nothing about which product it is (on either side).
_STOP = frozenset(
    "geforce nvidia radeon amd intel carte graphique graphics graphic card video pci express pcie pci-e "
    "gddr6 gddr6x gddr7 gddr5 hdmi displayport dp dlss ray tracing rtx gtx rx arc the de du la le et "
    "with avec and for pour edition processor processeur cpu desktop boxed box bulk tray mpk wof go gb "
    "memoire memory mémoire oc gaming version series mhz ghz kit ram ssd nvme m.2 m 2 internal interne "
    "alimentation power supply psu modulaire modular ventirad cooler boitier boîtier case tour tower "
    "wraith stealth prism spire sans ventilateur fan fans retail".split()
)
BRANDS = frozenset(
    "asus msi gigabyte aorus gainward zotac pny palit sapphire powercolor xfx asrock inno3d kfa2 galax evga "
    "nvidia amd intel corsair kingston crucial samsung wd western seagate gskill g.skill teamgroup team "
    "lexar sabrent noctua bequiet be quiet arctic deepcool cooler master nzxt fractal lianli lian li seasonic "
    "thermaltake phanteks hyte adata patriot sk hynix solidigm biostar".split()
)
_BRAND_ALIASES = {"aorus": "gigabyte", "galax": "kfa2", "g.skill": "gskill", "western": "wd", "lianli": "lian li"}
# A listing with these words is not a bare component (a whole PC, a laptop, an accessory for it).
_NOT_A_PART = re.compile(
    r"\b(?:pc gamer|pc portable|ordinateur|laptop|notebook|barebone|kit (?:upgrade|évolution)|waterblock|"
    r"water ?block|backplate|riser|support (?:gpu|carte)|bracket|câble|cable|extension|adaptateur|adapter)\b",
    re.I,
)
# The product name proper ends where a listing starts describing it ("..., 16GB GDDR7 (PCIe 5.0)", " · Occasion").
_HEAD_CUT = re.compile(r"\s[-–|·/]\s|[,(\[:]")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(gb|tb)$")
_GLUED = re.compile(r"^(rtx|gtx|rx|arc|gt)?(\d{3,5})(ti|super|xtx|xt|gre)?$")


class PartLike(Protocol):
    id: str
    name: str
    brand: str


def normalise(text: str) -> list[str]:
    """Lower-case tokens: '16 Go'/'16G' -> '16gb', 'RTX5070Ti' -> 'rtx 5070 ti', '7800X3D' stays one token."""
    t = text.lower().replace("\u00a0", " ")
    t = re.sub(r"(\d+)\s*(?:go|gb|gib|g)\b", r"\1gb", t)
    t = re.sub(r"(\d+)\s*(?:to|tb|tib)\b", r"\1tb", t)
    t = re.sub(r"(\d)\s*x\s*(\d+gb)", r"\1x\2", t)  # 2 x 16gb -> 2x16gb
    out: list[str] = []
    for tok in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", t):
        m = _GLUED.match(tok)
        if m and (m.group(1) or m.group(3)):
            out.extend(g for g in m.groups() if g)
        else:
            out.append(tok)
    return out


def _model_tokens(tokens: Iterable[str]) -> set[str]:
    """Tokens that name a model: three or more digits in a row (5070, 7800x3d, 13600k, 990)."""
    return {t for t in tokens if re.search(r"\d{3,}", t) and not _SIZE.match(t) and not re.match(r"^\d+x\d+gb$", t)}


def _sizes(tokens: Iterable[str]) -> set[str]:
    out = set()
    for t in tokens:
        m = _SIZE.match(t)
        if m:
            out.add(t)
        m2 = re.match(r"^(\d+)x(\d+)gb$", t)
        if m2:
            out.add(f"{int(m2.group(1)) * int(m2.group(2))}gb")
    return out


def _sizes_raw(tokens: Iterable[str]) -> list[str]:
    return [t for t in tokens if _SIZE.match(t) or re.match(r"^\d+x\d+gb$", t)]


def _brand(tokens: Sequence[str]) -> Optional[str]:
    for t in tokens[:4]:
        if t in BRANDS:
            return _BRAND_ALIASES.get(t, t)
    return None


@dataclass(frozen=True)
class MatchResult:
    """Best catalog part for a listing; `accepted` says whether the price may be used for it."""

    listing: str
    part_id: Optional[str]
    confidence: float
    accepted: bool
    reason: str
    condition: str = "new"
    runners_up: list[tuple[str, float]] = field(default_factory=list)


def score(listing: str, part: PartLike, category: Optional[str] = None) -> tuple[float, str]:
    """Confidence 0..1 that `listing` names `part`, with the reason for a zero or a low value."""
    lt = normalise(listing)
    pt = normalise(part.name)
    ls, ps = set(lt), set(pt)
    cat = category or getattr(part, "category", None)
    if _NOT_A_PART.search(listing) and not _NOT_A_PART.search(part.name):
        return 0.0, "listing is a complete PC or an accessory"
    missing = _model_tokens(pt) - ls
    if missing:
        return 0.0, f"model token(s) {', '.join(sorted(missing))} missing"
    extra_models = _model_tokens(lt) - ps - _model_tokens(normalise(getattr(part, "chip", "") or ""))
    variants = _VARIANTS | _VARIANTS_BY_CATEGORY.get(cat or "", frozenset())
    want, have = ps & variants, ls & variants
    if want != have:
        diff = sorted(want ^ have)
        return 0.0, f"variant {'/'.join(diff)} differs"
    pb = _BRAND_ALIASES.get(part.brand.lower().split()[0], part.brand.lower().split()[0])
    lb = _brand(lt)
    if lb is not None and pb in BRANDS and lb != pb:
        return 0.0, f"brand {lb} is not {pb}"
    psz, lsz = _sizes(pt), _sizes(lt)
    vram = getattr(part, "vram_gb", None)
    if vram:
        psz = psz | {f"{int(vram)}gb" if float(vram).is_integer() else f"{vram}gb"}
    penalty = 0.0
    if psz and lsz and not (psz & lsz):
        return 0.0, f"size {', '.join(sorted(lsz))} is not {', '.join(sorted(psz))}"
    if psz and not lsz:
        penalty += 0.05
    if extra_models:
        penalty += 0.1 * len(extra_models)  # e.g. a bundle naming a second product
    if lb is None and pb in BRANDS:
        penalty += 0.05
    ignore = _STOP | variants | _model_tokens(ps) | _model_tokens(lt) | psz | _sizes(lt) | {pb} | BRANDS
    distinct = {t for t in ps - ignore if not re.fullmatch(r"\d", t)}
    missing_words = sorted(distinct - ls)
    head = set(normalise(_HEAD_CUT.split(listing, 1)[0]))
    extra_words = sorted(t for t in head - ps - ignore - set(_sizes_raw(head)) if not re.fullmatch(r"\d", t))
    conf = 1.0 - 0.3 * len(missing_words) - 0.3 * len(extra_words) - penalty
    conf = max(0.0, min(1.0, conf))
    why = []
    if missing_words:
        why.append(f"part word(s) {', '.join(missing_words)} missing")
    if extra_words:
        why.append(f"listing word(s) {', '.join(extra_words)} not in the part")
    return round(conf, 3), "; ".join(why) or "all product words agree"


def match_listing(
    listing: str,
    parts: Iterable[PartLike],
    category: Optional[str] = None,
    condition: Optional[str] = None,
    threshold: float = DEFAULT_THRESHOLD,
    want_condition: str = "new",
) -> MatchResult:
    """Best part for a listing name. Below `threshold`, ambiguous, or another condition: not accepted.

    `condition` is the listing's (from the extractor); when None it is read from the listing's words.
    """
    condition = condition or condition_from_text(listing) or "new"
    scored = []
    for p in parts:
        if category and getattr(p, "category", category) != category:
            continue
        s, why = score(listing, p, category)
        scored.append((s, p.id, why))
    if not scored:
        return MatchResult(listing, None, 0.0, False, "no catalog part in this category", condition)
    scored.sort(key=lambda x: -x[0])
    best, best_id, why = scored[0]
    runners = [(pid, s) for s, pid, _ in scored[1:4] if s > 0]
    if best <= 0:
        return MatchResult(listing, None, 0.0, False, f"no match ({why})", condition, runners)
    if len(scored) > 1 and scored[1][0] >= best - 0.02 and scored[1][0] > 0:
        best = round(best * 0.8, 3)
        why = f"ambiguous between {best_id} and {scored[1][1]}"
    if condition != want_condition:
        return MatchResult(listing, best_id, best, False, f"{condition} listing, wanted {want_condition}",
                           condition, runners)
    accepted = best >= threshold
    reason = why if accepted else f"low confidence {best:.2f} < {threshold:.2f}: {why}"
    return MatchResult(listing, best_id, best, accepted, reason, condition, runners)
