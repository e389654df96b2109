"""Name -> catalog part, the one matcher: normalised tokens, model numbers and variants that must agree, confidence.

Used for retailer listings (planner.prices.match), names typed by a user (CLI, web UI) and imported build
lists (planner.share.importing). An exact id or exact name always wins; a typo gets "did you mean".
"""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Mapping, Optional, Protocol, Sequence

from planner.errors import CatalogError, UnknownPartError

DEFAULT_THRESHOLD = 0.75

# Words that change the product when present on one side only ("5070 Ti" is not "5070").
_VARIANTS = frozenset({"ti", "super", "xt", "xtx", "gre", "x3d"})
# Per category, more words that make another product ("990 Pro" vs "990 Evo Plus", a cooler's "Pro" or "LC").
_PLATFORM_VARIANTS = frozenset("pro ultra max plus lite mini se lc".split())
_VARIANTS_BY_CATEGORY = {"storage": frozenset({"pro", "evo", "plus"}), "psu": frozenset(), "cpu": frozenset(),
                         "gpu": frozenset(), "cooler": _PLATFORM_VARIANTS, "case": _PLATFORM_VARIANTS,
                         "motherboard": _PLATFORM_VARIANTS, "memory": _PLATFORM_VARIANTS}


def variant_words(category: Optional[str]) -> frozenset[str]:
    """Words that name another product when present on one side only, for a category (None: any category)."""
    if category is None:
        return _VARIANTS | _PLATFORM_VARIANTS
    return _VARIANTS | _VARIANTS_BY_CATEGORY.get(category, frozenset())
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
    variants = variant_words(cat) if cat else _VARIANTS
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




# ---- names typed by people (CLI arguments, web widgets, imported build lists) ----------------------------

SUGGEST_CUTOFF = 0.3  # below this confidence a part is not offered as "did you mean"


def _typo_tolerant(query: str, part: PartLike) -> str:
    """The query with each word that is a near-miss of a word of the part's name (Rysen -> ryzen) replaced."""
    words = set(normalise(f"{part.brand} {part.name}"))
    out = []
    for tok in normalise(query):
        if tok in words or re.search(r"\d", tok):
            out.append(tok)  # model numbers must agree exactly: a 4070 is not a 4080
            continue
        close = difflib.get_close_matches(tok, list(words), n=1, cutoff=0.75)
        out.append(close[0] if close else tok)
    return " ".join(out)


def coverage(query: str, part: PartLike, category: Optional[str] = None) -> float:
    """Weighted share of the part's name tokens found in a long description (a PCPartPicker line, a typed name):
    model numbers count double, words in parentheses half. Zero when a plain number of the name or the brand is
    missing, or a variant word is on one side only. Unlike `score`, extra words in the query cost nothing."""
    query_tokens = set(normalise(query))
    name = f"{part.brand} {part.name}"
    extra = set(normalise(" ".join(re.findall(r"\(([^)]*)\)", name))))
    main = normalise(re.sub(r"\([^)]*\)", " ", name))
    weights = {t: 0.5 for t in extra} | {t: 2.0 if re.search(r"\d", t) and not re.fullmatch(r"g?ddr\d+x?", t)
                                         else 1.0 for t in main}
    if any(t.isdigit() and t not in query_tokens for t in main) or not set(normalise(part.brand)) <= query_tokens:
        return 0.0
    variants = variant_words(category or getattr(part, "category", None))
    if variants & query_tokens != variants & (set(main) | (extra & query_tokens)):
        return 0.0
    got = [t for t in weights if t in query_tokens]
    return sum(weights[t] for t in got) / max(1.0, sum(weights.values()))


def rank(query: str, parts: Iterable[PartLike], category: Optional[str] = None,
         typos: bool = False, add_brand: bool = False) -> list[tuple[float, PartLike]]:
    """Parts by how much of their name the query holds (`coverage`), best first; zero scores left out.
    `typos`: words close to a word of the part's name count as that word; `add_brand`: a query without the
    part's brand is read as if it had it."""
    scored = []
    for p in parts:
        q = _typo_tolerant(query, p) if typos else query
        if add_brand and not set(normalise(p.brand)) <= set(normalise(q)):
            q = f"{p.brand} {q}"
        s = coverage(q, p, category)
        if s > 0:
            scored.append((s, p))
    scored.sort(key=lambda sp: (-sp[0], len(sp[1].name)))
    return scored


def _label(p: PartLike) -> str:
    return f"{p.id} ({p.name})"


def exact(query: str, parts: Sequence[PartLike]) -> Optional[PartLike]:
    """The part whose id, name or brand + name is exactly the query (case and spacing ignored)."""
    q = " ".join(query.lower().split())
    for p in parts:
        name = " ".join(p.name.lower().split())
        brand = " ".join(p.brand.lower().split())
        bare = name[len(brand):].strip() if brand and name.startswith(brand + " ") else name
        if q in (p.id.lower(), name, bare, f"{brand} {name}"):
            return p
    return None


def resolve(query: str, parts: Sequence[PartLike], category: Optional[str] = None) -> PartLike:
    """One part for a name a person typed: exact id or name first, then the fragment every word of which is in
    exactly one part's id, brand and name, then one clear best match; otherwise UnknownPartError with choices."""
    q = query.strip()
    hit = exact(q, parts)
    if hit is not None:
        return hit
    words = q.lower().split()
    contains = [p for p in parts if words and all(w in f"{p.id} {p.brand} {p.name}".lower() for w in words)]
    if len(contains) == 1:
        return contains[0]
    if contains:
        listed = "; ".join(_label(p) for p in contains[:8])
        more = f" and {len(contains) - 8} more" if len(contains) > 8 else ""
        raise UnknownPartError(f"{query!r} is ambiguous: {listed}{more}; give the id or the full name")
    # A typo is never taken silently: the closest parts are offered instead (people often leave the brand out).
    ranked = rank(q, parts, category, typos=True, add_brand=True)
    def own_words(p: PartLike) -> int:  # query words found in the name, beyond the brand we added
        return len((set(normalise(_typo_tolerant(q, p))) & set(normalise(p.name))) - set(normalise(p.brand)))

    worded = sorted(((own_words(p), s, p) for s, p in ranked if own_words(p)), key=lambda x: (-x[0], -x[1]))
    close = [p for n, s, p in worded if n == worded[0][0] and s >= SUGGEST_CUTOFF][:3]
    if not close:  # nothing scores: fall back to spelling alone
        names = {p.name.lower(): p for p in parts}
        close = [names[n] for n in difflib.get_close_matches(q.lower(), list(names), n=3, cutoff=0.75)]
    hint = f"; did you mean {' or '.join(_label(p) for p in close)}?" if close else "; try `planner catalog list`"
    raise UnknownPartError(f"no part matches {query!r}{hint}")


# ---- GPU chips by name (the speed model's --gpu names, cloud and calibration names, dataset chipsets) ---------

_CHIP_NOISE = re.compile(r"\b(nvidia|geforce|tesla|amd|radeon|lhr)\b")  # maker, brand and mining-limiter words


def chip_key(name: str) -> str:
    """Case-, space- and punctuation-free key of a chip name: 'GeForce RTX 4090' -> 'rtx4090', 'A100-80G' ->
    'a10080g', 'RTX 3060 LHR' -> 'rtx3060'."""
    return re.sub(r"[^a-z0-9]", "", _CHIP_NOISE.sub(" ", str(name).lower()))


class ChipLike(Protocol):
    id: str
    name: str
    aliases: list[str]


class ChipNames:
    """The one chip matcher: chip id, name and each alias by `chip_key`; a key claimed by two chips is a data error
    in data/gpu_chips.csv."""

    def __init__(self, chips: "Mapping[str, ChipLike]"):  # read only: a dict of GpuChip is one
        self.index: dict[str, str] = {}
        for chip in chips.values():
            for label in (chip.id, chip.name, *chip.aliases):
                key = chip_key(label)
                if not key:
                    continue
                other = self.index.setdefault(key, chip.id)
                if other != chip.id:
                    raise CatalogError(f"data/gpu_chips.csv: name {label!r} matches both {other!r} and {chip.id!r}")

    def find(self, name: str) -> Optional[str]:
        """The chip id a name stands for, or None."""
        return self.index.get(chip_key(name))

    def suggest(self, name: str, n: int = 4) -> list[str]:
        """Chip ids close to `name`: those whose key contains it first ('RTX 6000' -> Quadro / Ada), then similar
        spellings."""
        key = chip_key(name)
        if not key:
            return []
        ids = [cid for k, cid in self.index.items() if len(key) >= 3 and key in k]
        ids += [self.index[k] for k in difflib.get_close_matches(key, list(self.index), n=3 * n, cutoff=0.6)]
        return list(dict.fromkeys(ids))[:n]

