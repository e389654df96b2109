"""Share a build: versioned permalink token, Markdown/CSV/JSON export, import of a pasted list (pure)."""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
import re
import struct
import urllib.parse
import zlib
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planner.catalog import Catalog
from planner.checker import CheckReport, check_parts
from planner.errors import PlannerError, ShareError
from planner.models import CATEGORIES, AnyPart
from planner.money import check_currency, format_money, parse_decimal, quantize
from planner.requirements import Requirements

SCHEMA = "planner.build/1"
TOKEN_VERSION = "v1"
MAX_TOKEN_CHARS = 2048  # a token longer than this is refused before decoding
MAX_INFLATED_BYTES = 64 * 1024  # zip-bomb guard: never inflate more than this
MAX_LINES = 64  # parts in one shared build
DEFAULT_BASE_URL = "http://localhost:8501/"
# PCPartPicker's row labels, in its order; our category ids are accepted too when importing.
TYPE_LABELS = {"cpu": "CPU", "cooler": "CPU Cooler", "motherboard": "Motherboard", "memory": "Memory",
               "storage": "Storage", "gpu": "Video Card", "case": "Case", "psu": "Power Supply"}
_TYPE_ALIASES = {
    **{v.lower(): k for k, v in TYPE_LABELS.items()}, **{c: c for c in CATEGORIES},
    "graphics card": "gpu", "video cards": "gpu", "processor": "cpu", "cpu cooler": "cooler", "ram": "memory",
    "ssd": "storage", "nvme": "storage", "psu": "psu", "power supply unit": "psu", "mainboard": "motherboard",
}
# Words that make a different product of the same model number: present on one side only = no match.
VARIANT_WORDS = frozenset("ti super xt xtx gre pro ultra max plus lite mini se lc".split())
MATCH_THRESHOLD = 0.8  # weighted share of a catalog name found in an imported line to accept it
_HEADER = struct.Struct(">IH")  # CRC-32 of the deflate stream, its length in bytes


class ShareInputs(BaseModel):
    """The inputs of the planner page: what a permalink restores besides the parts."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    budget: Optional[Decimal] = Decimal("7000.00")
    currency: str = "EUR"
    mode: Literal["best", "cheapest"] = "best"
    workload: Literal["transformer", "cnn", "generic"] = "transformer"
    precision: Literal["fp32", "tf32", "amp"] = "amp"
    runs: int = Field(default=8, ge=1, le=10_000)
    hours: float = Field(default=7.0, gt=0, le=10_000)  # hours per run on the GTX 1080 Ti
    model_params_m: Optional[float] = Field(default=None, gt=0, le=1_000_000)  # model size, M parameters
    min_vram_gb: Optional[float] = Field(default=None, ge=0, le=1024)
    deadline_hours: Optional[float] = Field(default=None, gt=0)
    owned: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    excluded_brands: tuple[str, ...] = ()
    cooler_type: Optional[Literal["air", "aio"]] = None
    max_wall_w: Optional[int] = Field(default=None, gt=0, le=10_000)
    gpu_count: int = Field(default=1, ge=1, le=4)
    power_fraction: float = Field(default=1.0, ge=0.5, le=1.0)
    used: Literal["none", "gpu", "all"] = "gpu"  # which parts may be bought used
    alternatives: int = Field(default=2, ge=0, le=5)

    @field_validator("currency")
    @classmethod
    def _ccy(cls, v: str) -> str:
        return check_currency(v)

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, v: object) -> object:
        return None if v in (None, "") else quantize(parse_decimal(v, "budget"))  # one spelling per amount

    def requirements(self) -> Requirements:
        """The solver request these inputs stand for (InputError one-liners on bad values)."""
        return Requirements.parse(
            budget=self.budget if self.mode == "best" else None, currency=self.currency, mode=self.mode,
            min_vram_gb=self.min_vram_gb, deadline_hours=self.deadline_hours, runs=self.runs,
            baseline_hours=self.hours, workload=self.workload, precision=self.precision, gpu_count=self.gpu_count,
            power_fraction=self.power_fraction, owned=self.owned, pinned=self.pinned, excluded=self.excluded,
            excluded_brands=self.excluded_brands, cooler_type=self.cooler_type, max_wall_w=self.max_wall_w,
            used=self.used)

    @classmethod
    def parse(cls, **raw: Any) -> "ShareInputs":
        try:
            return cls(**raw)
        except ValidationError as exc:
            raise ShareError(_one_line(exc)) from None


def _one_line(exc: ValidationError) -> str:
    err = exc.errors()[0]
    cause = err.get("ctx", {}).get("error")
    if isinstance(cause, PlannerError):
        return str(cause)
    where = ".".join(str(p) for p in err["loc"]) or "value"
    return f"{where}: {err['msg']} (got {_short(err.get('input'))})"


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class SharedState:
    """What a token carries: the inputs and the chosen parts with quantities."""

    inputs: ShareInputs
    parts: tuple[tuple[str, int], ...]


# ---------------------------------------------------------------- token


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def encode_token(inputs: ShareInputs, parts: list[tuple[str, int]] | tuple[tuple[str, int], ...]) -> str:
    """`v1.` + base64url(CRC-32, length, deflate(JSON of non-default inputs and [id, qty] pairs)); <= 2 KB."""
    if len(parts) > MAX_LINES:
        raise ShareError(f"a shared build holds at most {MAX_LINES} parts, got {len(parts)}")
    body = {"i": inputs.model_dump(mode="json", exclude_defaults=True), "p": [[str(i), int(q)] for i, q in parts]}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(text) + packer.flush()
    token = f"{TOKEN_VERSION}.{_b64encode(_HEADER.pack(zlib.crc32(stream), len(stream)) + stream)}"
    if len(token) > MAX_TOKEN_CHARS:
        raise ShareError(f"this build makes a {len(token)}-character link (limit {MAX_TOKEN_CHARS}); "
                         "share the JSON export instead")
    return token


def token_from_text(text: str) -> str:
    """The token inside a pasted link (`...?b=v1.xxx`) or the text itself."""
    t = text.strip()
    if "b=" in t and ("?" in t or "&" in t or t.startswith("b=")):
        query = urllib.parse.urlsplit(t).query if "?" in t else t
        values = urllib.parse.parse_qs(query).get("b")
        if values:
            return values[-1].strip()
    return t


def decode_token(token: str, catalog: Optional[Catalog] = None) -> SharedState:
    """Parse a token; every way it can be wrong (version, size, tampering, schema, unknown part) is a ShareError."""
    t = token_from_text(token)
    if len(t) > MAX_TOKEN_CHARS:
        raise ShareError(f"the build token is {len(t)} characters long, over the {MAX_TOKEN_CHARS} limit (refused)")
    version, dot, payload = t.partition(".")
    if not dot:
        raise ShareError("not a planner build token (expected it to start with 'v1.')")
    if version != TOKEN_VERSION:
        label = version if re.fullmatch(r"v\d{1,4}", version) else version[:12] + "..."
        raise ShareError(f"unknown build token version {label!r}; this planner reads {TOKEN_VERSION!r} tokens")
    if not re.fullmatch(r"[A-Za-z0-9_-]*", payload):
        raise ShareError("the build token holds characters outside base64url: it was altered or mis-copied")
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        raise ShareError("the build token is truncated (its base64 length is impossible)") from None
    if len(raw) < _HEADER.size:
        raise ShareError("the build token is truncated (too short to hold a build)")
    crc, length = _HEADER.unpack_from(raw)
    stream = raw[_HEADER.size:]
    if len(stream) < length:
        raise ShareError(f"the build token is truncated ({len(stream)} of {length} bytes): copy the whole link")
    if len(stream) > length:
        raise ShareError("the build token has extra data after its end: it was altered")
    if zlib.crc32(stream) != crc or _b64encode(raw) != payload:  # (stray bits in the last character)
        raise ShareError("the build token fails its checksum: it was altered or mis-copied")
    return SharedState(*_parse_body(_inflate(stream), catalog))


def _inflate(stream: bytes) -> bytes:
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(stream, MAX_INFLATED_BYTES)
    except zlib.error:
        raise ShareError("the build token does not decompress: it was altered or mis-copied") from None
    if inflater.unconsumed_tail or (not inflater.eof and inflater.decompress(b"", 1)):
        raise ShareError(f"the build token inflates beyond {MAX_INFLATED_BYTES // 1024} KB (refused)")
    if not inflater.eof:
        raise ShareError("the build token is truncated (its data stream does not end)")
    return out


def _parse_body(text: bytes, catalog: Optional[Catalog]) -> tuple[ShareInputs, tuple[tuple[str, int], ...]]:
    try:
        body = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ShareError("the build token does not hold a build (not JSON)") from None
    if not isinstance(body, dict) or set(body) - {"i", "p"} or not isinstance(body.get("p", []), list):
        raise ShareError("the build token does not hold a build (unexpected fields)")
    inputs = ShareInputs.parse(**body.get("i", {})) if isinstance(body.get("i", {}), dict) else None
    if inputs is None:
        raise ShareError("the build token does not hold a build (inputs are not an object)")
    parts: list[tuple[str, int]] = []
    for item in body.get("p", []):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and type(item[1]) is int and 1 <= item[1] <= 8):
            raise ShareError(f"the build token holds a malformed part entry {_short(item)}")
        parts.append((item[0], item[1]))
    if len(parts) > MAX_LINES:
        raise ShareError(f"the build token lists {len(parts)} parts (limit {MAX_LINES})")
    if catalog is not None:
        unknown = [i for i, _ in parts if i not in catalog.parts]
        for ident in (*inputs.owned, *inputs.pinned, *inputs.excluded):
            if ident not in catalog.parts:
                unknown.append(ident)
        if unknown:
            raise ShareError(f"the shared build names part {unknown[0]!r}, which this catalog does not have"
                             + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    return inputs, tuple(parts)


def permalink(token: str, base_url: str = DEFAULT_BASE_URL) -> str:
    base = base_url.split("#")[0]
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}b={token}"


# ---------------------------------------------------------------- a priced build list


@dataclass(frozen=True)
class SharedLine:
    category: str
    part_id: str
    name: str
    quantity: int = 1
    unit_price: Optional[Decimal] = None  # in SharedBuild.currency; None = no price known
    retailer: Optional[str] = None
    url: Optional[str] = None
    observed_on: Optional[str] = None
    price_source: Optional[str] = None
    owned: bool = False

    @property
    def line_total(self) -> Decimal:
        return Decimal(0) if self.owned or self.unit_price is None else self.unit_price * self.quantity

    def to_json(self, currency: str) -> dict[str, Any]:
        price = None if self.unit_price is None else {"amount": str(quantize(self.unit_price)), "currency": currency}
        return {"category": self.category, "id": self.part_id, "name": self.name, "quantity": self.quantity,
                "price": price, "retailer": self.retailer, "url": self.url, "price_observed_on": self.observed_on,
                "price_source": "owned" if self.owned else self.price_source, "owned": self.owned}


@dataclass(frozen=True)
class SharedBuild:
    lines: tuple[SharedLine, ...]
    currency: str = "EUR"
    inputs: Optional[ShareInputs] = None

    @property
    def total(self) -> Decimal:
        return quantize(sum((ln.line_total for ln in self.lines), Decimal(0)))

    def parts(self) -> list[tuple[str, int]]:
        return [(ln.part_id, ln.quantity) for ln in self.lines]

    def price_dates(self) -> list[str]:
        return sorted({ln.observed_on for ln in self.lines if ln.observed_on and not ln.owned})

    def token(self) -> str:
        inputs = self.inputs or ShareInputs(currency=self.currency)
        gpu = next((ln for ln in self.lines if ln.category == "gpu"), None)
        if gpu is not None and gpu.quantity != inputs.gpu_count and 1 <= gpu.quantity <= 4:
            inputs = inputs.model_copy(update={"gpu_count": gpu.quantity})
        return encode_token(inputs, self.parts())

    def to_json(self, *, with_token: bool = True) -> dict[str, Any]:
        return {"schema": SCHEMA, "currency": self.currency,
                "inputs": None if self.inputs is None else self.inputs.model_dump(mode="json"),
                "parts": [ln.to_json(self.currency) for ln in self.lines],
                "total": {"amount": str(self.total), "currency": self.currency},
                "price_dates": self.price_dates(), "token": self.token() if with_token else None}


def _sorted(lines: list[SharedLine]) -> tuple[SharedLine, ...]:
    order = {c: i for i, c in enumerate(TYPE_LABELS)}
    return tuple(sorted(lines, key=lambda ln: order.get(ln.category, 99)))


def build_from_json(data: Any, inputs: Optional[ShareInputs] = None) -> SharedBuild:
    """Our export (schema planner.build/1), `planner recommend --json` (first plan) or one plan."""
    if isinstance(data, dict) and "schema" in data and data["schema"] != SCHEMA:
        raise ShareError(f"unknown build schema {str(data['schema'])[:40]!r}; this planner reads {SCHEMA!r}")
    if isinstance(data, dict) and isinstance(data.get("plans"), list):
        if not data["plans"]:
            raise ShareError("the recommendation holds no plan (nothing fitted the request)")
        data = data["plans"][0]
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        raise ShareError("expected our build JSON, `planner recommend --json` output or one plan with a 'parts' list")
    currency = check_currency((data.get("total") or {}).get("currency") or data.get("currency") or "EUR")
    if inputs is None and isinstance(data.get("inputs"), dict):
        inputs = ShareInputs.parse(**data["inputs"])
    lines = []
    for i, p in enumerate(data["parts"][:MAX_LINES + 1]):
        if not isinstance(p, dict) or not p.get("id") or not p.get("category"):
            raise ShareError(f"part #{i + 1} needs at least 'category' and 'id'")
        if p["category"] not in CATEGORIES:
            raise ShareError(f"part #{i + 1} has unknown category {str(p['category'])[:30]!r}")
        price = p.get("price") if isinstance(p.get("price"), dict) else None
        amount = parse_decimal(price["amount"], f"price of {p['id']}") if price and "amount" in price else None
        if price and price.get("currency") and check_currency(price["currency"]) != currency:
            raise ShareError(f"part {p['id']} is priced in {price['currency']}, the build in {currency}")
        qty = p.get("quantity", 1)
        if type(qty) is not int or not 1 <= qty <= 8:
            raise ShareError(f"part {p['id']}: quantity must be a whole number 1-8 (got {qty!r})")
        lines.append(SharedLine(
            category=p["category"], part_id=str(p["id"]), name=str(p.get("name") or p["id"]), quantity=qty,
            unit_price=amount, retailer=p.get("retailer"), url=p.get("url"),
            observed_on=p.get("price_observed_on") or (price or {}).get("observed_on"),
            price_source=p.get("price_source") or (price or {}).get("source"), owned=bool(p.get("owned"))))
    if len(lines) > MAX_LINES:
        raise ShareError(f"a shared build holds at most {MAX_LINES} parts")
    return SharedBuild(_sorted(lines), currency, inputs)


def build_from_catalog(catalog: Catalog, parts: list[tuple[str, int]], *, currency: str = "EUR",
                       inputs: Optional[ShareInputs] = None, owned: tuple[str, ...] = (),
                       used: str = "gpu") -> SharedBuild:
    """Price catalog parts with today's offers, converted to `currency`."""
    from planner.catalog import used_allowed
    from planner.solver.currency import convert

    lines = []
    for pid, qty in parts:
        part = catalog.get(pid)
        offer = catalog.offer_for(pid, allow_used=used_allowed(used, part.category))
        price = None if offer is None else quantize(convert(offer.price, offer.currency, currency))
        lines.append(SharedLine(
            category=part.category, part_id=part.id, name=part.name, quantity=qty, unit_price=price,
            retailer=offer.retailer if offer else None, url=offer.url if offer else None,
            observed_on=offer.observed_on.isoformat() if offer else None,
            price_source=offer.source if offer else None, owned=part.id in owned))
    return SharedBuild(_sorted(lines), check_currency(currency), inputs)


# ---------------------------------------------------------------- exports


def _md_escape(text: str) -> str:
    return re.sub(r"([|\[\]\\])", r"\\\1", text.replace("\n", " "))


def _price_cell(ln: SharedLine, currency: str) -> str:
    if ln.owned:
        return "owned"
    if ln.unit_price is None:
        return "no price"
    bits = [format_money(ln.unit_price, currency)]
    if ln.retailer:
        bits.append(f"@ {_md_escape(ln.retailer)}")
    meta = ", ".join(x for x in (ln.observed_on, ln.price_source) if x)
    return " ".join(bits) + (f" ({meta})" if meta else "")


def to_markdown(build: SharedBuild, *, link: Optional[str] = None, today: Optional[date] = None) -> str:
    """PCPartPicker-shaped table: Type | Item | Price, one row per unit, a total row, price dates and sources."""
    cur = build.currency
    out = ["Type|Item|Price", ":----|:----|:----"]
    for ln in build.lines:
        name = _md_escape(ln.name)
        item = f"[{name}]({ln.url})" if ln.url and re.fullmatch(r"https?://[^\s()<>\[\]]+", ln.url) else name
        for _ in range(ln.quantity):
            out.append(f"**{TYPE_LABELS.get(ln.category, ln.category)}** | {item} | {_price_cell(ln, cur)}")
    dates = build.price_dates()
    when = (dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}") if dates else "no date"
    sources = sorted({ln.price_source for ln in build.lines if ln.price_source and not ln.owned})
    out.append(f" | *Prices in {cur} observed {when}; sources: {', '.join(sources) or 'none'}* |")
    out.append(f" | **Total** | **{format_money(build.total, cur)}**")
    stamp = (today or date.today()).isoformat()
    out.append(f" | Generated by planner on {stamp}" + (f": [open this build]({link})" if link else "") + " |")
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("type", "category", "id", "name", "quantity", "unit_price", "line_total", "currency",
               "retailer", "url", "price_observed_on", "price_source", "owned")


def to_csv(build: SharedBuild) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for ln in build.lines:
        w.writerow([TYPE_LABELS.get(ln.category, ln.category), ln.category, ln.part_id, ln.name, ln.quantity,
                    "" if ln.unit_price is None else str(quantize(ln.unit_price)), str(quantize(ln.line_total)),
                    build.currency, ln.retailer or "", ln.url or "", ln.observed_on or "",
                    "owned" if ln.owned else (ln.price_source or ""), str(ln.owned).lower()])
    w.writerow(["Total", "", "", "", "", "", str(build.total), build.currency, "", "", "", "", ""])
    return buf.getvalue()


def to_json_text(build: SharedBuild) -> str:
    return json.dumps(build.to_json(), ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------- import


def _tokens(text: str) -> list[str]:
    t = re.sub(r"\b(\d{1,2})\s*[x×]\s*(\d{1,3})\b(?!\.)", r"\1x\2", text.lower())
    t = re.sub(r"(\d)\s*(gb|tb|w|mm|mhz|ghz)\b", r"\1 \2", t)
    return list(dict.fromkeys(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", t)))


def _model_number(token: str) -> bool:
    """Tokens with digits name a model (9950x, 5090, rm850x), except memory generations (ddr5, gddr7)."""
    return bool(re.search(r"\d", token)) and not re.fullmatch(r"g?ddr\d+x?", token)


def _score(part: AnyPart, query: set[str]) -> tuple[float, int]:
    """Weighted share of the part's name tokens found in the query: model numbers count double, words in
    parentheses (part numbers, revisions) half. Ruled out: a plain number of the name or the brand missing
    from the query, or a variant word (Ti, SUPER, XT, Pro...) on one side only."""
    name = f"{part.brand} {part.name}"
    extra = set(_tokens(" ".join(re.findall(r"\(([^)]*)\)", name))))
    main = _tokens(re.sub(r"\([^)]*\)", " ", name))
    weights = {t: 0.5 for t in extra} | {t: 2.0 if _model_number(t) else 1.0 for t in main}
    if any(t.isdigit() and t not in query for t in main) or not set(_tokens(part.brand)) <= query:
        return 0.0, 0  # a plain number of the name (capacity, series) or the brand is missing
    if VARIANT_WORDS & query != VARIANT_WORDS & (set(main) | (extra & query)):
        return 0.0, 0  # an RTX 4070 is not an RTX 4070 SUPER, a 360 AIO is not its Pro version
    got = [t for t in weights if t in query]
    return sum(weights[t] for t in got) / max(1.0, sum(weights.values())), len(got)


@dataclass(frozen=True)
class Match:
    category: Optional[str]
    text: str
    quantity: int
    part: Optional[AnyPart] = None
    how: str = "none"  # id | name | fuzzy | none
    note: str = ""


def match_part(catalog: Catalog, text: str, category: Optional[str], quantity: int = 1) -> Match:
    """Exact id, exact name, Catalog.find, then a token-overlap fuzzy match; unmatched says the best guess."""
    q = text.strip()
    pool = catalog.parts.values() if category is None else catalog.by_category(category)
    if q in catalog.parts and (category is None or catalog.parts[q].category == category):
        return Match(category, text, quantity, catalog.parts[q], "id")
    named = [p for p in pool if p.name.lower() == q.lower()]
    if len(named) == 1:
        return Match(category, text, quantity, named[0], "name")
    try:
        return Match(category, text, quantity, catalog.find(q, category), "name")
    except PlannerError:
        pass
    query = set(_tokens(q))
    ranked = sorted(((_score(p, query), p) for p in pool), key=lambda sp: (sp[0], -len(sp[1].name)), reverse=True)
    if not ranked or ranked[0][0][0] == 0:
        return Match(category, text, quantity, note="no catalog part resembles it")
    (best, covered), part = ranked[0]
    if len(ranked) > 1 and ranked[1][0] == (best, covered):
        return Match(category, text, quantity, note=f"ambiguous: {part.id} or {ranked[1][1].id}")
    if best < MATCH_THRESHOLD:
        return Match(category, text, quantity, note=f"closest is {part.id} ({part.name}), {best:.0%} alike")
    return Match(category, text, quantity, part, "fuzzy", f"{best:.0%} of its name found")


_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(\s*([^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")


def parse_markdown(text: str) -> list[tuple[Optional[str], str, int, str]]:
    """Rows of a `Type | Item | Price` table as (category or None, item text, quantity, price cell)."""
    rows: list[tuple[Optional[str], str, int, str]] = []
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())]
        if len(cells) < 2:
            continue
        if cells and cells[0] == "" and line.strip().startswith("|"):
            cells = cells[1:]
        if cells and cells[-1] == "" and line.strip().endswith("|"):
            cells = cells[:-1]
        if len(cells) < 2 or re.fullmatch(r":?-{2,}:?", cells[0]) or not cells[0]:
            continue
        label = re.sub(r"[*_`]", "", cells[0]).strip().lower()
        if label in ("type", "total", "category"):
            continue
        item = cells[1]
        link = _LINK.search(item)
        name = link.group(1) if link else re.sub(r"[*_`]", "", item)
        qty = 1
        m = re.match(r"\s*(\d{1,2})\s*[x×]\s+(.*)", name if not link else item[: link.start()] + name)
        if m:
            qty, name = int(m.group(1)), m.group(2)
        name = re.sub(r"\\(.)", r"\1", name).strip()
        if name:
            cat = _TYPE_ALIASES.get(label)
            rows.append((cat, name if cat else f"{label}: {name}", qty, cells[2] if len(cells) > 2 else ""))
    return rows


@dataclass
class ImportResult:
    kind: str  # token | json | markdown
    matches: list[Match]
    inputs: Optional[ShareInputs] = None
    notes: list[str] = field(default_factory=list)
    report: Optional[CheckReport] = None
    build: Optional[SharedBuild] = None

    @property
    def matched(self) -> list[Match]:
        return [m for m in self.matches if m.part is not None]

    @property
    def unmatched(self) -> list[Match]:
        return [m for m in self.matches if m.part is None]

    def parts(self) -> list[tuple[str, int]]:
        return [(m.part.id, m.quantity) for m in self.matched]  # type: ignore[union-attr]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "matched": [{"category": m.part.category, "id": m.part.id, "name": m.part.name,  # type: ignore[union-attr]
                         "quantity": m.quantity, "from": m.text, "how": m.how, "note": m.note} for m in self.matched],
            "unmatched": [{"category": m.category, "text": m.text, "reason": m.note} for m in self.unmatched],
            "notes": list(self.notes),
            "inputs": None if self.inputs is None else self.inputs.model_dump(mode="json"),
            "check": None if self.report is None else self.report.to_json(),
            "build": None if self.build is None else self.build.to_json(),
        }


def _merge(matches: list[Match], notes: list[str]) -> list[Match]:
    """Repeated rows of one part add up (PCPartPicker lists two GPUs as two rows); one part per category."""
    merged: dict[str, Match] = {}
    out: list[Match] = []
    for m in matches:
        if m.part is None:
            out.append(m)
            continue
        prev = merged.get(m.part.category)
        if prev is None:
            merged[m.part.category] = m
            out.append(m)
        elif prev.part.id == m.part.id:  # type: ignore[union-attr]
            i = out.index(prev)
            out[i] = merged[m.part.category] = Match(prev.category, prev.text, prev.quantity + m.quantity,
                                                     prev.part, prev.how, prev.note)
        else:
            notes.append(f"a build takes one {m.part.category}; kept {prev.part.id}, left out {m.part.id}")  # type: ignore[union-attr]
    return out


def _from_token(raw: str, catalog: Catalog) -> tuple[list[Match], Optional[ShareInputs]]:
    state = decode_token(raw, catalog)
    return [Match(catalog.parts[i].category, i, q, catalog.parts[i], "id") for i, q in state.parts], state.inputs


def _from_json(raw: str, catalog: Catalog) -> tuple[list[Match], Optional[ShareInputs], tuple[str, ...]]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ShareError(f"the pasted JSON is invalid ({exc.msg} at line {exc.lineno})") from None
    shared = build_from_json(data)
    matches = []
    for ln in shared.lines:
        m = match_part(catalog, ln.part_id, ln.category, ln.quantity)
        matches.append(m if m.part else match_part(catalog, ln.name, ln.category, ln.quantity))
    owned = tuple(m.part.id for m, ln in zip(matches, shared.lines) if ln.owned and m.part)
    return matches, shared.inputs, owned


def _from_markdown(raw: str, catalog: Catalog, notes: list[str]) -> tuple[list[Match], tuple[str, ...]]:
    rows = parse_markdown(raw)
    if not rows:
        raise ShareError("no part rows found in the table (expected `Type | Item | Price` rows)")
    matches, owned = [], []
    for cat, name, qty, price in rows:
        if cat is None:
            notes.append(f"skipped {name!r}: not a part type the planner builds with")
            continue
        m = match_part(catalog, name, cat, qty)
        matches.append(m)
        if m.part is not None and price.strip().lower() == "owned":
            owned.append(m.part.id)
    return matches, tuple(owned)


def import_build(text: str, catalog: Catalog, *, currency: Optional[str] = None) -> ImportResult:
    """Read a pasted link/token, our JSON (or recommend output) or a Markdown table; match, check and price it."""
    raw = (text or "").strip()
    if not raw:
        raise ShareError("nothing to import: paste a link, a build token, our JSON or a Markdown table")
    if len(raw) > 1_000_000:
        raise ShareError("the pasted text is over 1 MB; a build list is far smaller")
    notes: list[str] = []
    owned: tuple[str, ...] = ()
    if raw.startswith("{"):
        matches, inputs, owned = _from_json(raw, catalog)
        kind = "json"
    elif "|" in raw:
        matches, owned = _from_markdown(raw, catalog, notes)
        inputs, kind = None, "markdown"
    elif "\n" not in raw:
        matches, inputs = _from_token(raw, catalog)
        kind = "token"
    else:
        raise ShareError("not a build link, token, JSON or Markdown table")
    result = ImportResult(kind, _merge(matches, notes), inputs, notes)
    parts = result.parts()
    if not parts:
        return result
    inputs = inputs or ShareInputs(currency=currency or "EUR")
    gpus = next((q for i, q in parts if catalog.parts[i].category == "gpu"), inputs.gpu_count)
    if not 1 <= gpus <= 4:
        raise ShareError(f"{gpus} GPUs: the planner checks builds with 1 to 4 identical GPUs")
    update: dict[str, Any] = {"gpu_count": gpus, "owned": tuple(dict.fromkeys((*inputs.owned, *owned)))}
    if currency:
        update["currency"] = check_currency(currency)
    result.inputs = inputs = inputs.model_copy(update=update)
    parts = [(i, gpus if catalog.parts[i].category == "gpu" else 1) for i, _ in parts]
    owned_here = tuple(i for i in inputs.owned if i in dict(parts))
    result.report = check_parts(catalog, [catalog.parts[i] for i, _ in parts], gpu_count=gpus,
                                power_fraction=inputs.power_fraction, workload=inputs.workload,
                                precision=inputs.precision, owned=owned_here, used=inputs.used)
    result.build = build_from_catalog(catalog, parts, currency=inputs.currency, inputs=inputs, owned=owned_here,
                                      used=inputs.used)
    return result
