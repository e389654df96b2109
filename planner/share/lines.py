"""One posted line -> a catalog part: its kind from the label or words, then chip/model token, brand and variant words,
capacity and kind; a generic stand-in built from the line's own facts when it names no product; how and how sure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any, Optional

from planner.catalog.load import Catalog
from planner.catalog.match import BRANDS, _BRAND_ALIASES, _STOP, normalise, variant_words
from planner.catalog.models import Gpu, Memory, Psu, Storage
from planner.share.part_index import index_for
from planner.share.readers import Row

_UNVERIFIED = re.compile(r"\s*\*?\(unverified\)\*?\s*$", re.I)
from planner.share.token import _TYPE_ALIASES

# ---------------------------------------------------------------- kinds

_LABEL_WORDS: list[tuple[str, str]] = [  # first hit wins; checked against the label's words
    (r"\b(?:fans?|fan connectors?|case fans?)\b", "-"),
    (r"\bcpu (?:water )?cooler|\bcooler\b|\bheatsink\b|\bcpu cooling\b|\baio\b", "cooler"),
    (r"\bgpus?\b|\bvideo cards?\b|\bgraphics(?: cards?)?\b|\bgraphic cards?\b", "gpu"),
    (r"\bmotherboard|\bmobo\b|\bmainboard\b|\bboard\b", "motherboard"),
    (r"\bcpus?\b|\bprocessor\b|\bi[3579]\b", "cpu"),
    (r"\bmemory\b|\bram\b|\bdimms?\b", "memory"),
    (r"\bstorage\b|\bssd\b|\bsshd\b|\bhdd\b|\bhard (?:disk|drive)|\bnvme\b|\bm\.2\b|\bdrives?\b|\bdisk\b", "storage"),
    (r"\bpsu\b|\bpower (?:supply|source|supplies)\b", "psu"),
    (r"\bcase\b|\btower\b|\bchassis\b", "case"),
]
_TEXT_WORDS: list[tuple[str, str]] = [  # an unlabelled line: its words say the kind
    (r"\b(?:psu|power supply)\b|\b\d{3,4}\s?w\b.*\b(?:gold|platinum|titanium|bronze|psu)\b", "psu"),
    (r"\bmotherboard\b|\bmainboard\b|\b[xbhzaq]\d{2,3}[a-z]?\b.*\b(?:pro\d?|prime|gaming|aorus|tomahawk|taichi|ws)\b|"
     r"\b(?:prime|strix|tuf|aorus|taichi|tomahawk)\b.*\b[xbhz]\d{3}", "motherboard"),
    (r"\b(?:gtx|rtx|rx|radeon|geforce|quadro|titan|gpus?)\b|\brx\s?\d{3,4}", "gpu"),
    (r"\bram\b|\bddr[345]\b|\bmemory\b|\bdimms?\b", "memory"),
    (r"\bssd\b|\bnvme\b|\bhdd\b|\bhard (?:disk|drive)\b|\bm\.2\b", "storage"),
    (r"\bryzen\b|\bcore\s?i[3579]\b|\bi[3579][- ]\d{3,5}|\bxeon\b|\bthreadripper\b|\bepyc\b|\bcpu\b|\bcore ultra\b",
     "cpu"),
    (r"\bcooler\b|\bnh-[a-z]\d", "cooler"),
    (r"\bcase\b|\btower\b", "case"),
]


def kind_of(row: Row) -> Optional[str]:
    """The category a row names: from its label ("PSU Primary", "Storage (OS)", "GPU 1"), else from its words;
    None when it is not a part the planner builds with (a monitor, fans, the OS)."""
    if row.label:
        lab = re.sub(r"[*_`]", "", row.label).strip().lower()
        direct = _TYPE_ALIASES.get(lab) or _TYPE_ALIASES.get(re.sub(r"[\s\d:()]+$", "", lab).strip())
        if direct:
            return direct
        for pattern, cat in _LABEL_WORDS:
            if re.search(pattern, lab):
                return None if cat == "-" else cat
        if lab in ("cooling",):  # "Cooling: Noctua fans" is fans; "Cooling: <AIO>" is a cooler
            return "cooler" if re.search(r"\b(?:aio|liquid|cooler|nh-)\b", row.text.lower()) else None
        if not re.search(r"^(?:[a-z]?\d|x\d|os\b|fast|slow|suggested)", lab):
            return None
    t = row.text.lower()
    if t.startswith("(") or len(t.split()) > 12:
        return None  # an aside or a sentence, not a part line
    for pattern, cat in _TEXT_WORDS:
        if re.search(pattern, t):
            return cat
    return None


# ---------------------------------------------------------------- results

@dataclass
class LineMatch:
    """A row and what it became: a catalog part (how: exact | model | board | twin), a generic stand-in (how:
    generic), or none with the closest candidates."""

    row: Row
    category: Optional[str]
    part: Any = None
    how: str = "none"
    confidence: float = 0.0
    note: str = ""
    candidates: list[tuple[str, str, float]] = field(default_factory=list)  # (id, name, score)

    @property
    def generic(self) -> bool:
        return self.how == "generic"

    @property
    def quantity(self) -> int:
        return self.row.quantity


# ---------------------------------------------------------------- facts stated in a line

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(gb|tb|gib|tib|gi|g|t)\b", re.I)
_KIT = re.compile(r"(\d{1,2})\s*[x×]\s*(\d{1,3})\s*g(?:b|i?b)?\b|\((\d{1,3})\s*g[bi]?\s*[x×]\s*(\d{1,2})\)", re.I)
_WATTS = re.compile(r"\b(\d{3,4})\s*w(?:att)?s?\b", re.I)
_DDR = re.compile(r"\bddr([345])(?:[- ](\d{4}))?\b", re.I)
_SPEED = re.compile(r"\b(\d{4})\s*(?:mhz|mt/s)\b|\bddr[345][- ](\d{4})\b|\b(\d{4})\b(?=.*\bddr)", re.I)


def pre(text: str) -> str:
    """A line in the spelling the matcher reads: '16Gx2' -> '2x16GB', '62Gi' -> '62GB', '360mm' keeps '360'."""
    t = re.sub(r"\b(\d{4,6})\s*MiB\b", lambda m: f"{round(int(m.group(1)) / 1024)}GB", text)  # nvidia-smi's 24576 MiB
    t = re.sub(r"(\d+)\s*G[Bi]?\s*[x×]\s*(\d+)\b", r"\2x\1GB", t, flags=re.I)
    t = re.sub(r"(\d+)\s*Gi(?:B)?\b", r"\1GB", t, flags=re.I)
    t = re.sub(r"(\d+)\s*Ti(?:B)\b", r"\1TB", t)
    t = re.sub(r"\b(\d{2,4})mm\b", r"\1mm \1", t, flags=re.I)
    return t


def stated_gb(text: str) -> Optional[float]:
    """The capacity a line states in GB (2 TB -> 2000; '60Gi total' -> 60): the first figure outside parentheses
    ('4 GB kingston RAM (i have tried an 8gb)' -> 4), else the first inside."""
    t = pre(text)
    total = re.search(r"\btotal(?: of)?\s*(\d+(?:\.\d+)?)\s*(gb|tb)\b", t, re.I)
    if total:
        return float(total.group(1)) * (1000 if total.group(2).lower() == "tb" else 1)
    outside = re.sub(r"\([^)]*\)", " ", t)
    for part in (outside, t):
        for num, unit in _SIZE.findall(part):
            return float(num) * (1000 if unit.lower() in ("tb", "tib", "t") else 1)
    return None


def stated_vram(text: str) -> Optional[float]:
    """A GPU line's memory in GB when it states one (24 GB, '20480 MiB' -> 20), else None."""
    gb = stated_gb(text)
    return gb if gb is not None and 2 <= gb <= 300 else None


# memory totals a machine is built with; an OS report ("62Gi total") sees a little less than what is installed
_INSTALLED = (2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)


def installed_gb(text: str) -> Optional[tuple[int, float]]:
    """(installed GB, reported GiB) for an OS memory report ('60Gi total, 42Gi available' -> (64, 60)): the
    smallest standard total at or above what the OS sees; an estimate, said as one. None for any other line."""
    m = re.search(r"\b(\d+(?:\.\d+)?)\s*Gi(?:B)?\s+total\b", text)
    if not m:
        return None
    seen = float(m.group(1))
    return next((g for g in _INSTALLED if g >= seen), int(seen)), seen


def stated_kit(text: str) -> Optional[tuple[int, int]]:
    m = _KIT.search(pre(text))
    if not m:
        return None
    if m.group(1):
        return int(m.group(1)), int(m.group(2))
    return int(m.group(4)), int(m.group(3))


def stated_watts(text: str) -> Optional[int]:
    """A power supply line's wattage: '1000W', '1600 W', else a bare 3-4 digit figure ('SuperNOVA 1600 T2') or one
    inside a model name ('HX1000', 'RM850x'); None when the line gives none."""
    m = _WATTS.search(text)
    if m:
        return int(m.group(1))
    outside = re.sub(r"\([^)]*\)", " ", text)
    m = re.search(r"(?<![\d.])(\d{3,4})(?![\d.])(?!\s*(?:mm|rpm|cfm|mhz|gb|tb))", outside, re.I)
    if m and 200 <= int(m.group(1)) <= 3000 and not re.fullmatch(r"20[12]\d", m.group(1)):
        return int(m.group(1))
    return None


def model_tokens(text: str) -> set[str]:
    """Tokens that name a model: they hold a digit and are not a size, a speed, a wattage or a memory type
    (3090, 7600k, d15, g2, x870e, sn850x, t705)."""
    out = set()
    for t in normalise(pre(text)):
        if not re.search(r"\d", t) or len(t) < 2:
            continue
        if t in ("2280", "2242", "2230", "2260", "22110"):
            continue  # M.2 lengths
        if re.fullmatch(r"\d+(?:\.\d+)?(?:gb|tb|gi)|\d+x\d+gb|ddr\d|g?ddr\dx?|cl\d+|\d{4}|\d+w|\d+mm|pcie\d?|gen\d|"
                        r"\d+(?:\.\d+)?|m\.?2|\d+(?:cfm|rpm|mhz|hz)|x\d{1,2}|80|\d+c|\d+t|\d+ghz", t):
            if re.fullmatch(r"\d{3,}", t) and not re.fullmatch(r"\d{4}", t):
                out.add(t)  # 990, 850
            elif re.fullmatch(r"\d{4}", t):
                out.add(t)  # 3090, 1080; memory speeds are dropped by the caller
            continue
        out.add(t)
    return out


def _brand_of(tokens: list[str]) -> Optional[str]:
    for t in tokens[:6]:
        if t in BRANDS:
            return _BRAND_ALIASES.get(t, t)
    return None


def _part_brand(part: Any) -> str:
    b = normalise(part.brand)
    return _BRAND_ALIASES.get(b[0], b[0]) if b else ""


# ---------------------------------------------------------------- stand-ins

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "part"


def _source(row: Row) -> str:
    return f"stand-in from the posted list's own words (line {row.line}: {row.text[:80]!r}); no catalog product named"


def stand_in(catalog: Catalog, row: Row, category: str, chip: Optional[str] = None) -> Optional[Any]:
    """A generic part holding only what the line states, or None when it states too little to check anything."""
    text, low = row.text, row.text.lower()
    if category == "gpu" and chip:
        c = catalog.chips[chip]
        vram = stated_vram(text)
        if vram is None or not c.vram_gb or abs(vram - c.vram_gb) <= 1:
            return Gpu(id=f"generic-gpu-{_slug(chip)}", name=f"generic {c.name} (board not identified)",
                       brand="generic", chip=chip, vram_gb=c.vram_gb,
                       source=_source(row) + "; chip figures from data/gpu_chips.csv")
        bare = re.sub(r"\s*\(\d+\s*GB\)|\s+\d+\s*GB$", "", c.name)  # "GeForce RTX 3080 (10GB)" -> "GeForce RTX 3080"
        base = re.sub(r"-\d+gb$", "", chip)
        return Gpu(id=f"generic-gpu-{base}-{vram:g}gb", name=f"generic {bare} with {vram:g} GB as stated "
                   "(board not identified)", brand="generic", chip=chip, vram_gb=vram,
                   source=_source(row) + "; memory as the line states, other figures from data/gpu_chips.csv")
    if category == "psu":
        w = stated_watts(text)
        if not w:
            return None
        ff = "SFX-L" if re.search(r"\bsf[xf][- ]?l\b", low) else "SFX" if re.search(r"\bsfx\b", low) else "ATX"
        return Psu(id=f"generic-psu-{w}w-{ff.lower()}", name=f"generic {w} W {ff} power supply",
                   brand="generic", wattage_w=w, form_factor=ff, source=_source(row))
    if category == "storage":
        gb = stated_gb(text)
        if not gb:
            return None
        if re.search(r"\bhdd\b|hard (?:disk|drive)|\brpm\b|3\.5\"", low):
            iface, ff, kind = "SATA", "3.5", "hard drive"
        elif re.search(r"\bnvme\b|\bgen ?[345]\b|pcie", low):  # M.2 alone: SATA M.2 drives exist (WD Blue 2017)
            iface, ff, kind = "NVMe", "M.2-2280", "NVMe SSD"
        elif re.search(r"\bsata\b|\b2\.5\b", low) and "ssd" in low:
            iface, ff, kind = "SATA", "2.5", "SATA SSD"
        else:
            return None  # an SSD or a hard drive, and which slot: not said
        return Storage(id=f"generic-storage-{int(gb)}gb-{_slug(kind)}", name=f"generic {int(gb)} GB {kind}",
                       brand="generic", interface=iface, form_factor=ff, capacity_gb=int(gb), source=_source(row))
    if category == "memory":
        gb = stated_gb(text)
        kit = stated_kit(text)
        if kit:
            gb = kit[0] * kit[1]
        if not gb:
            return None
        gb *= max(row.quantity, 1) if not kit else 1
        seen = installed_gb(text)
        if seen:
            return SimpleNamespace(id=f"generic-memory-{seen[0]}gb", name=f"generic {seen[0]} GB of memory (estimated: "
                                   f"the OS reports {seen[1]:g} GiB; type and speed not stated)", brand="generic",
                                   category="memory", capacity_gb=seen[0], source=_source(row), stated_only=True,
                                   estimate=True)
        ddr = _DDR.search(text)
        speed = _SPEED.search(text)
        speed_v = next((int(g) for g in (speed.groups() if speed else ()) if g), None)
        if ddr and speed_v and kit:
            return Memory(id=f"generic-memory-{int(gb)}gb", name=f"generic DDR{ddr.group(1)}-{speed_v} {int(gb)} GB "
                          f"({kit[0]}x{kit[1]} GB)", brand="generic", memory_type=f"DDR{ddr.group(1)}",
                          modules=kit[0], module_gb=kit[1], speed_mts=speed_v, source=_source(row))
        # only the capacity is stated: a stand-in the capacity rules can read; rules needing the type are not checked
        return SimpleNamespace(id=f"generic-memory-{int(gb)}gb", name=f"generic {int(gb):g} GB of memory (type and "
                               "speed not stated)", brand="generic", category="memory", capacity_gb=int(gb),
                               source=_source(row), stated_only=True)
    return None


# ---------------------------------------------------------------- matching

def _chip_of(catalog: Catalog, text: str) -> Optional[str]:
    """The GPU chip a line names: the chip whose model number and variant words (Ti, Super, XT) agree with it."""
    toks = normalise(pre(text))
    ts = set(toks)
    nums = {t for t in ts if re.fullmatch(r"[a-z]?\d{3,4}[a-z]?", t)}
    if not nums and "titan" not in ts:
        return None
    best: Optional[tuple[int, str]] = None
    for cid, chip in catalog.chips.items():
        names = [chip.name, *chip.aliases]
        for n in names:
            ct = normalise(n)
            core = [t for t in ct if t not in _STOP and t not in ("nvidia", "amd")]
            cnums = {t for t in core if re.search(r"\d", t) and not re.fullmatch(r"\d+gb", t)}
            if not core or not cnums <= ts:
                continue
            if not cnums and not (set(ct) <= ts and not nums):
                continue  # a chip without a number ("Titan RTX") only when every word of it is on the line
            var = variant_words("gpu") | {"ada", "pro", "max", "q", "maxq", "generation"}
            if (set(core) & var) != (ts & var & (set(core) | variant_words("gpu"))):
                continue
            sizes = {t for t in ct if re.fullmatch(r"\d+gb", t)}
            if sizes and (ts & {t for t in ts if re.fullmatch(r"\d+gb", t)}) and not sizes & ts:
                continue
            missing = [t for t in core if t not in ts]
            score = 10 * len(cnums) - len(missing)
            stated = stated_vram(text)
            if stated is not None and abs(stated - chip.vram_gb) <= 1:
                score += 5  # "RTX 3080 12GB": the 12 GB chip, not the plain "RTX 3080" alias of the 10 GB one
            if best is None or score > best[0]:
                best = (score, cid)
    return best[1] if best else None


# words that describe a part without naming it (form factor, colour, rating)
_GENERIC_WORDS = frozenset("atx matx eatx itx eeb mid full tower rgb argb gold platinum titanium bronze "
                           "certified fully semi modular solid state drive ga".split())  # GA-: Gigabyte's old prefix


def _distinct(part: Any, category: str, extra_ignore: set[str] = frozenset()) -> set[str]:  # type: ignore[assignment]
    toks = set(normalise(re.sub(r"\([^)]*\)", " ", part.name)))
    ignore = _STOP | set(normalise(part.brand)) | BRANDS | extra_ignore | _GENERIC_WORDS
    return {t for t in toks if t not in ignore and not re.search(r"\d", t) and len(t) > 1}


def _same_specs(a: Any, b: Any) -> bool:
    da = {k: v for k, v in a.model_dump().items() if k not in ("id", "source", "notes")}
    db = {k: v for k, v in b.model_dump().items() if k not in ("id", "source", "notes")}
    return da == db


def _gpu(catalog: Catalog, row: Row) -> LineMatch:
    chip = _chip_of(catalog, row.text)
    lm = LineMatch(row, "gpu")
    if chip is None:
        lm.note = "no GPU chip the catalog knows is named"
        lm.candidates = _closest(catalog, row.text, "gpu")
        return lm
    q = set(normalise(pre(row.text)))
    qbrand = _brand_of(normalise(row.text))
    chip_words = set(normalise(" ".join([catalog.chips[chip].name, *catalog.chips[chip].aliases])))
    board_words = {t for t in q - chip_words - _STOP - BRANDS - {"used", "s", "miner", "card", "cards", "gpus"}
                   if len(t) > 1 and not re.fullmatch(r"\d+(?:gb|mib|mb)?|\d+x\d+gb", t)}
    scored = []
    for f in _features(catalog, "gpu"):
        p, pb = f.part, f.brand
        if p.chip != chip:
            continue
        # NVIDIA's own board sold under its distributor's name ("PNY RTX A6000": the row names PNY) is that board
        resold = pb == "nvidia" and qbrand is not None and qbrand != "nvidia" and qbrand in f.words
        if qbrand and pb != qbrand and not (qbrand == "nvidia" and "founders" in f.words) and not resold:
            continue
        need = set(f.need - chip_words)
        have = need & q
        if need - q:
            continue
        extra = board_words - need - {"founders"} if "founders" in need else board_words - need
        scored.append((len(have) - 0.5 * len(extra) + (1 if resold and not extra else 0),
                       len(have) + (1 if resold and not extra else 0), p, extra))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    vram = stated_vram(row.text)
    chip_vram = catalog.chips[chip].vram_gb
    odd_vram = vram is not None and bool(chip_vram) and abs(vram - chip_vram) > 1
    if odd_vram:
        scored = []  # a 20 GB RTX 3080: no board of the catalog carries it; the chip's figures with the stated memory
    if scored and scored[0][1] > 0 and (qbrand or scored[0][1] >= 2):
        top = scored[0]
        twins = [s for s in scored[1:] if s[0] == top[0] and s[1] == top[1]]
        if twins and not all(_same_specs(top[2], t[2]) for t in twins):
            lm.note = "ambiguous: " + " or ".join(p.id for _, _, p, _ in [top, *twins][:3])
            lm.candidates = [(p.id, p.name, 1.0) for _, _, p, _ in [top, *twins][:4]]
            return lm
        lm.part, lm.how = top[2], "twin" if twins else "board"
        lm.confidence = round(max(0.5, 1.0 - 0.15 * len(top[3])), 2)
        lm.note = f"chip {chip}, board words agree" + (f"; line words {', '.join(sorted(top[3]))} not in its name"
                                                       if top[3] else "")
        return lm
    # the line names a maker's line ("PNY ... XLR8") that exactly one board of that maker and chip carries
    if qbrand and board_words and not odd_vram:
        line = [p for p in catalog.by_category("gpu") if p.chip == chip and _part_brand(p) == qbrand
                and board_words <= set(normalise(p.name))]
        if line and all(_same_specs(line[0], o) for o in line[1:]):
            lm.part, lm.how, lm.confidence = line[0], "board", 0.75
            lm.note = (f"chip {chip}; the line names the {qbrand.upper()} {' '.join(sorted(board_words)).upper()} line, "
                       f"which only this board of the catalog carries (its full name has more words)")
            return lm
    lm.part = stand_in(catalog, row, "gpu", chip)
    lm.how, lm.confidence = "generic", 0.9
    named = " ".join(sorted(board_words)) or "none"
    lm.note = (f"generic {catalog.chips[chip].name}: the line names no board the catalog holds (board words: {named}); "
               "chip figures only, the card's size is unknown")
    if lm.part.vram_gb != chip_vram:
        lm.confidence = 0.6
        lm.note += (f"; the line states {lm.part.vram_gb:g} GB of memory where the chip's cards have {chip_vram:g} GB "
                    "(a modified or unlisted board): memory as stated, the rest from the chip")
    lm.candidates = [(p.id, p.name, 0.5) for p in catalog.by_category("gpu") if p.chip == chip][:4]
    return lm


_MEM_SPEC = re.compile(r"^\d{4}$")
# a socket named on a line ("EATX sTRX4 Motherboard") says which platform, not which product
_SOCKET_TOKENS = frozenset("am4 am5 lga1700 lga1851 lga1151 lga1150 lga2011 lga2066 str4 strx4 swrx8 str5 sp3 sp5 tr4 "
                           "tr5 sp6".split())
# words that make another product when on one side only, beyond catalog.match's (O11 Dynamic EVO vs EVO XL)
_MORE_VARIANTS = frozenset({"xl", "compact", "server", "air", "mini", "elite", "nano", "ii", "iii", "iv"})  # II: a generation


# What names a product of a category when its name has no model token (3090, NH-D15, SN850X): its maker and one of its
# distinctive words, plus these facts stated on the line and agreeing (two distinctive words are enough anywhere).
# None: words alone never name one (a CPU or a board is named by its model).
_IDENTIFYING_FACTS: dict[str, Optional[tuple[str, ...]]] = {
    "memory": ("capacity", "speed"),  # "Corsair Vengeance 2x16GB DDR5-6000": maker + line + capacity + speed
    "storage": ("capacity", "kind"),  # "WD Black 4TB hard drive"; "WD Black 4TB" alone could be an NVMe SSD
    "psu": ("watts",),
    "cooler": ("radiator",),
    "case": (),  # "Fractal Design Torrent": the maker and the name
    "cpu": None, "motherboard": None,
}
_HDD_WORDS = re.compile(r"\bhdd\b|hard (?:disk|drive)|\brpm\b|3\.5\s*(?:\"|in\b|inch)", re.I)
_SSD_WORDS = re.compile(r"\bssd\b|\bnvme\b|solid state|\bm\.2\b", re.I)


def _line_facts(text: str, category: str) -> dict[str, Any]:
    """The identifying facts a line states (None when it does not state one)."""
    gb = stated_gb(text)
    kit = stated_kit(text)
    if kit:
        gb = kit[0] * kit[1]
    speed = _SPEED.search(text) if category == "memory" else None
    mts = next((int(g) for g in (speed.groups() if speed else ()) if g), None)
    if category == "memory" and mts is None and re.search(r"\bddr[45]\b", text, re.I):  # "DDR5 96GB 6000"
        bare = [int(n) for n in re.findall(r"(?<![\d.])(\d{4})(?![\d.])", text) if 1600 <= int(n) <= 9600]
        mts = bare[0] if len(bare) == 1 else None
    rad = re.search(r"\b(120|140|240|280|360|420)\s*(?:mm)?\b", text) if category == "cooler" else None
    return {"capacity": gb if category in ("memory", "storage") else None,
            "speed": mts,
            "watts": stated_watts(text) if category == "psu" else None,
            "kind": "hdd" if _HDD_WORDS.search(text) else "ssd" if _SSD_WORDS.search(text) else None,
            "radiator": int(rad.group(1)) if rad else None}


def _part_facts(part: Any, category: str) -> dict[str, Any]:
    ff = str(getattr(part, "form_factor", "") or "")
    return {"capacity": getattr(part, "capacity_gb", None), "speed": getattr(part, "speed_mts", None),
            "watts": getattr(part, "wattage_w", None),
            "kind": ("hdd" if ff == "3.5" else "ssd") if category == "storage" else None,
            "radiator": getattr(part, "radiator_mm", None)}


def _agrees(fact: str, line: Any, part: Any) -> bool:
    """A fact stated on both sides agrees (capacity within 6 %: 2 TB vs 1.92 TB); unstated on either side: no say."""
    if line is None or part is None:
        return True
    if fact == "capacity":
        return abs(part - line) <= 0.06 * max(part, line)
    return line == part


def _other(catalog: Catalog, row: Row, category: str) -> LineMatch:
    lm = LineMatch(row, category)
    text = row.text
    q_tokens = normalise(pre(text))
    q = set(q_tokens)
    qmodels = model_tokens(text)
    if category == "memory":
        qmodels = {t for t in qmodels if not _MEM_SPEC.match(t) and not re.fullmatch(r"\d{4}", t)}  # 6000: a speed
    if category in ("psu", "case", "cooler"):  # "Pure Power 12M" is the "Pure Power 12 M": a generation and a letter
        joined = {t for t in q if re.fullmatch(r"\d{1,2}[a-z]", t)}
        q |= {t[:-1] for t in joined} | {t[-1] for t in joined}
        qmodels -= joined
    qbrand = _brand_of(q_tokens)
    facts = _line_facts(text, category)
    identifying = _IDENTIFYING_FACTS.get(category)
    variants = variant_words(category) | _MORE_VARIANTS
    scored = []
    for f in _features(catalog, category):
        p, pmodels, digits, pn, need, pb = f.part, f.models, f.digits, f.words, f.need, f.brand
        if (pmodels | digits) - q:  # a model token of the part the line lacks: NH-D15 is not the NH-D15 G2
            continue
        if (qmodels - _SOCKET_TOKENS) and not (qmodels & pmodels):
            continue
        if qbrand and pb in BRANDS and pb != qbrand:
            continue
        if (pn & variants) != (q & variants):
            continue
        pfacts = _part_facts(p, category)
        if not all(_agrees(k, facts[k], pfacts[k]) for k in facts):
            continue  # 2 TB is not the 1 TB row, an HDD line not an SSD, DDR5-6400 not the 6000 kit
        have = need & q
        if need and len(have) / len(need) < 0.5:
            continue
        maker_named = bool(pb) and (pb == qbrand or pb in q)
        by_facts = (identifying is not None and maker_named and bool(have)
                    and all(facts[k] is not None and pfacts[k] is not None for k in identifying))
        if not pmodels and not (digits and have) and len(have) < 2 and not by_facts:
            continue  # the line does not name this product (see _IDENTIFYING_FACTS)
        score = len(have) + 2 * len(pmodels & q) - 0.3 * len(need - q) + 0.1 * len(pn & q)  # ATX 3.1 vs 2.53
        scored.append((round(score, 3), p, need - q))
    scored.sort(key=lambda s: -s[0])
    if scored:
        top = scored[0]
        twins = [s for s in scored[1:] if s[0] == top[0]]
        if twins and not all(_same_specs(top[1], t[1]) for t in twins):
            lm.note = "ambiguous: " + " or ".join(s[1].id for s in [top, *twins][:3])
            lm.candidates = [(s[1].id, s[1].name, 1.0) for s in [top, *twins][:4]]
            return lm
        lm.part, lm.how = top[1], "twin" if twins else "model"
        lm.confidence = round(max(0.5, 1.0 - 0.15 * len(top[2]) - (0.1 if not qbrand else 0)), 2)
        lm.note = "model token and words agree" + (f"; its words {', '.join(sorted(top[2]))} not in the line"
                                                   if top[2] else "")
        if twins:
            lm.note += f"; identical twin rows ({', '.join(t[1].id for t in twins)}) resolved to this one"
        return lm
    # no catalog product: a memory kit, a power supply or a drive is checked by what the line states (capacity,
    # wattage, kind), said as generic; a CPU, board, case or cooler cannot be guessed from words
    generic = stand_in(catalog, row, category)
    if generic is not None:
        lm.part, lm.how = generic, "generic"
        lm.confidence = 0.8 if not (qmodels or qbrand) else 0.6
        said = generic.name.removeprefix("generic ")
        lm.note = (f"generic: the line names no product, only {said}" if not (qmodels or qbrand) else
                   f"generic: the named product is not in the catalog; checked as {said}, as the line states")
        lm.candidates = _closest(catalog, text, category)
        return lm
    lm.note = "no catalog part carries this model" if qmodels else "the line names no product the catalog holds"
    lm.candidates = _closest(catalog, text, category)
    return lm


@dataclass(frozen=True)
class _Features:
    part: Any
    models: frozenset[str]
    digits: frozenset[str]
    words: frozenset[str]
    need: frozenset[str]
    brand: str
    all_words: frozenset[str]


_FEATURES: dict[tuple[int, str], tuple[Any, int, list[_Features]]] = {}


def _features(catalog: Catalog, category: str) -> list[_Features]:
    """What matching reads of each part of a category, worked out once per catalog (a 100 000-part catalog would
    otherwise cost seconds per line)."""
    key = (id(catalog), category)
    hit = _FEATURES.get(key)
    if hit is not None and hit[0] is catalog and hit[1] == len(catalog.parts):
        return hit[2]
    out = []
    for p in catalog.by_category(category):
        models = model_tokens(re.sub(r"\([^)]*\)", " ", p.name))  # a SKU or year in brackets is not required
        if category == "memory":
            models = {t for t in models if not _MEM_SPEC.match(t)}
        # a generation number in a name: "Enthoo Pro 2" is not the "Enthoo Pro", "Dark Power 13" not the Dark Power 12
        digits = ({t for t in normalise(re.sub(r"\([^)]*\)", " ", p.name))
                   if re.fullmatch(r"\d", t) or (category == "psu" and re.fullmatch(r"\d\d", t) and t != "80")}
                  if category in ("case", "cooler", "psu") else set())
        out.append(_Features(p, frozenset(models), frozenset(digits), frozenset(normalise(p.name)),
                             frozenset(_distinct(p, category)), _part_brand(p),
                             frozenset(set(normalise(f"{p.brand} {p.name}")) - _STOP)))
    if len(_FEATURES) > 32:
        _FEATURES.clear()
    _FEATURES[key] = (catalog, len(catalog.parts), out)
    return out


def _closest(catalog: Catalog, text: str, category: str, n: int = 3) -> list[tuple[str, str, float]]:
    """The parts sharing most words with the line, to pick from."""
    q = set(normalise(text)) - _STOP
    if not q:
        return []
    scored = []
    for f in _features(catalog, category):
        p, pn = f.part, f.all_words
        if not pn:
            continue
        s = len(q & pn) / len(pn | q)
        if s > 0:
            scored.append((round(s, 2), p))
    scored.sort(key=lambda s: -s[0])
    return [(p.id, p.name, s) for s, p in scored[:n]]


def match_line(catalog: Catalog, row: Row, category: str) -> LineMatch:
    """The part a posted line names, how it was found and how sure (see the module docstring)."""
    text = _UNVERIFIED.sub("", row.text).strip()  # our own export's mark on a row not yet re-read (plan_view)
    if not text:
        return LineMatch(row, category, note="the line names no part (only a link or a quantity)")
    if text != row.text.strip():
        row = replace(row, text=text)
    hit = catalog.parts.get(text)
    if hit is None:
        hit = index_for(catalog, category).find_exact(text)
    if hit is not None and hit.category == category:
        return LineMatch(row, category, hit, "exact", 1.0, "id or full name")
    if category == "gpu":
        return _gpu(catalog, row)
    return _other(catalog, row, category)
