"""The plan as files, links and front ends read it: one PlanView of PricedLines, written once, validated at each edge.

The solver produces it (`planner.solver.plan.Plan.view`), the checker and the share exports write their priced
lines with `PricedLine.priced`, and every reader (plan files for `costs --build` / `sweep --build`, share import,
the service, the web UI) reads the typed object instead of parsing dicts again. JSON keeps the shape of
`planner recommend --json` (`PlanView.to_json`, `PricedLine.to_json`); `read_plan_view` reads that output, one
plan, our share export (planner.build/1 and /2) or a hand-written plan, ignores keys it does not know and is
strict on the types and ranges of those it does: a bad file is one line naming the part and the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, ValidationInfo, model_validator

from planner.errors import InputError, validation_message
from planner.money import CurrencyCode, check_currency, parse_amount, quantize
from planner.price_label import PriceLabel, price_label
from planner.validation import not_future
from planner.vocab import CATEGORIES, Category, Efficiency

MAX_TEXT = 300  # characters in a name, retailer, URL or source of a line
MAX_LINES = 64  # parts in one plan or shared build
MAX_QUANTITY = 8  # units of one part in a build (the checker takes 1-8 GPUs)
MAX_WATTS = 100_000
CONDITIONS = ("new", "used", "refurbished")
# how every front end marks a part whose catalog row was not re-read against a dated source (data/verified_rows.csv)
UNVERIFIED_MARK = "(unverified)"
UNVERIFIED_NOTE = ("catalog row not yet re-read against a dated maker's page or review (data/verified_rows.csv); "
                   "check its length, connectors and slots on the maker's page before ordering")

Text = Annotated[str, StringConstraints(max_length=MAX_TEXT, strict=True)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT, strict=True)]
Condition = Literal["new", "used", "refurbished"]
_FROZEN = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


def _iso_day(value: Any, what: str) -> Optional[date]:
    """A past ISO date from JSON text (or a date); None for null or ''; else InputError naming `what`."""
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise InputError(f"{what} must be an ISO date such as 2026-11-02 (got {type(value).__name__})")
    try:
        return not_future(date.fromisoformat(value[:10] if len(value) > 10 and value[10] == "T" else value), what)
    except ValueError as exc:
        raise InputError(f"{what} {value[:20]!r} is not a past ISO date ({exc})") from None


class PricedLine(BaseModel):
    """One part of a build with its price: unit price in `currency` (None = no price known), quantity, where and
    when the price was seen and what kind of price it is. An owned part costs nothing (its line total and its JSON
    price are 0); its unit price, when known, is what it is worth (JSON `value`), which costs count as owned."""

    model_config = _FROZEN

    category: Category
    part_id: Name = Field(alias="id")
    name: Name
    quantity: int = Field(default=1, ge=1, le=MAX_QUANTITY, strict=True)
    unit_price: Optional[Decimal] = None
    currency: CurrencyCode = "EUR"
    retailer: Optional[Text] = None
    url: Optional[Text] = None
    observed_on: Optional[date] = None
    price_source: Optional[Text] = None
    price_based_on: Optional[date] = None  # an estimate: the date of the data it rests on (its age counts from it)
    owned: bool = Field(default=False, strict=True)
    condition: Optional[Condition] = None
    # facts of the part a plan file may carry beside an id the catalog lacks (the writer adds them too)
    chip: Optional[Name] = None  # GPU chip id (data/gpu_chips.csv)
    wattage_w: Optional[int] = Field(default=None, gt=0, le=MAX_WATTS, strict=True)  # PSU rating
    efficiency: Optional[Efficiency] = None  # PSU 80 PLUS level
    # the part's row was re-read against a dated source (data/verified_rows.csv); None: no register to ask
    verified: Optional[bool] = Field(default=None, strict=True)
    # an unverified row: the fact still to check on the maker's page (data/verified_rows.csv `unsettled`)
    unverified_what: Optional[Text] = None

    @model_validator(mode="before")
    @classmethod
    def _from_json(cls, data: Any, info: ValidationInfo) -> Any:
        """The JSON shape (`id`, a `price` object, `price_observed_on`) and the flat one both read; the amount is
        a finite, non-negative number of sane size, named after the part when it is not; a line without its own
        currency is in the plan's (validation context `currency`)."""
        if not isinstance(data, dict):
            raise InputError(f"a part must be an object, not {type(data).__name__}")
        pid = _pid(data)
        out = {k: v for k, v in data.items() if k != "price"}
        price = data.get("price")
        if price is not None and not isinstance(price, dict):
            raise InputError(f"part {pid!r}: 'price' must be an object with 'amount' and 'currency'")
        for key, flat in (("amount", "unit_price"), ("currency", "currency"), ("observed_on", "price_observed_on"),
                          ("source", "price_source"), ("retailer", "retailer"), ("url", "url")):
            if out.get(flat) is None and (price or {}).get(key) is not None:
                out[flat] = price[key]  # type: ignore[index]
        value = out.pop("value", None)
        if value is not None and out.get("owned") is True:  # an owned line's worth (its price paid is 0)
            if not isinstance(value, dict):
                raise InputError(f"part {pid!r}: 'value' must be an object with 'amount' and 'currency'")
            if value.get("amount") is not None:
                out["unit_price"] = parse_amount(value["amount"], f"value of {pid}")
        if out.get("price_observed_on") is not None and out.get("observed_on") is None:
            out["observed_on"] = out["price_observed_on"]
        out.pop("price_observed_on", None)
        out["observed_on"] = _iso_day(out.get("observed_on"), f"part {pid!r}: 'price_observed_on'")
        out["price_based_on"] = _iso_day(out.get("price_based_on"), f"part {pid!r}: 'price_based_on'")
        if out.get("unit_price") is not None and not isinstance(out["unit_price"], Decimal):
            out["unit_price"] = parse_amount(out["unit_price"], f"price of {pid}")
        if out.get("currency") is None:
            out["currency"] = (info.context or {}).get("currency", "EUR")
        elif isinstance(out["currency"], str):
            out["currency"] = check_currency(out["currency"])
        if out.get("name") in (None, "") and isinstance(out.get("id"), str):
            out["name"] = out["id"]
        if out.get("price_source") == "owned" and out.get("owned") is None:
            out["owned"] = True
        for key in ("retailer", "url", "price_source", "condition", "chip", "efficiency"):
            if out.get(key) == "":
                out[key] = None
        return out

    @classmethod
    def priced(cls, part: Any, quantity: int, offer: Any, currency: str, *, owned: bool = False,
               amount: Optional[Decimal] = None, verified: Optional[bool] = None,
               unverified_what: Optional[str] = None) -> "PricedLine":
        """The one writer of a priced line: a catalog part, its offer (or None) and the price converted to
        `currency` (`amount`; computed with the shared conversion when not given)."""
        if amount is None and offer is not None:
            from planner.fx import convert_money

            amount = convert_money(offer.price, offer.currency, currency)
        return cls(category=part.category, id=part.id, name=part.name, quantity=quantity,
                   unit_price=None if amount is None else quantize(amount), currency=currency, retailer=None if offer is None else offer.retailer,
                   url=None if offer is None else offer.url,
                   observed_on=None if offer is None else offer.observed_on,
                   price_source="owned" if owned else (None if offer is None else offer.source),
                   price_based_on=_based_on(offer),
                   owned=owned, condition=None if offer is None else offer.condition,
                   chip=getattr(part, "chip", None), wattage_w=getattr(part, "wattage_w", None),
                   efficiency=getattr(part, "efficiency", None), verified=verified,
                   unverified_what=unverified_what if verified is False else None)

    # ---- what readers ask

    @property
    def used(self) -> bool:
        return self.condition in ("used", "refurbished")

    @property
    def observed_text(self) -> Optional[str]:
        return None if self.observed_on is None else self.observed_on.isoformat()

    @property
    def line_total(self) -> Decimal:
        """What the line costs: unit price x quantity; owned parts and lines without a price count 0."""
        return Decimal(0) if self.owned or self.unit_price is None else self.unit_price * self.quantity

    @property
    def unverified(self) -> bool:
        """The catalog has a register of re-read rows and this part is not in it (or did not pass)."""
        return self.verified is False

    @property
    def label(self) -> PriceLabel:
        """The kind of price and the date it stands for, as people read them (planner.price_label)."""
        return price_label(self.price_source, self.observed_text, owned=self.owned,
                           basis_on=None if self.price_based_on is None else self.price_based_on.isoformat())

    def to_json(self) -> dict[str, Any]:
        """The line as `planner recommend --json` and the share export write it (keys unchanged since v1)."""
        paid = Decimal(0) if self.owned else self.unit_price  # an owned part costs nothing to buy
        price = None if self.unit_price is None else {"amount": str(quantize(paid)), "currency": self.currency}  # type: ignore[arg-type]
        out = {"category": self.category, "id": self.part_id, "name": self.name, "quantity": self.quantity,
               "price": price, "retailer": self.retailer, "url": self.url,
               "price_source": "owned" if self.owned else self.price_source,
               "price_observed_on": self.observed_text, "condition": self.condition, "owned": self.owned}
        if self.price_based_on is not None and not self.owned:
            out["price_based_on"] = self.price_based_on.isoformat()
        if not self.owned and self.price_source:  # the record every surface prints (planner.price_label)
            label = self.label
            out["price_kind"], out["price_seen_on"], out["price_age_days"] = label.kind, label.seen_on, label.age_days()
        if self.owned and self.unit_price:  # what the owned part is worth at today's prices (costs count it)
            out["value"] = {"amount": str(quantize(self.unit_price)), "currency": self.currency}
        for key in ("chip", "wattage_w", "efficiency", "verified", "unverified_what"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def seen_dates(lines: Iterable[PricedLine]) -> list[str]:
    """The days the lines' prices were seen on (ISO, oldest first, each once); lines without a date add none."""
    return [d.isoformat() for d in sorted({ln.observed_on for ln in lines if ln.observed_on is not None})]


def _based_on(offer: Any) -> Optional[date]:
    """The date of the data an estimate rests on, from its catalog note (None for other prices)."""
    if offer is None or getattr(offer, "source", None) != "estimate":
        return None
    from planner.price_label import basis_date

    found = basis_date(getattr(offer, "note", None))
    try:
        return None if found is None else date.fromisoformat(found)
    except ValueError:
        return None


def _pid(data: dict[str, Any]) -> str:
    pid = data.get("id", data.get("part_id"))
    return pid[:40] if isinstance(pid, str) else "?"


class GpuSummary(BaseModel):
    model_config = _FROZEN

    chip: Name
    name: Name
    count: int = Field(ge=1, le=MAX_QUANTITY, strict=True)
    vram_gb: float = Field(gt=0, le=1024, strict=True)


class Speed(BaseModel):
    """Speed vs a GTX 1080 Ti with the model's range: 0 < low <= value <= high."""

    model_config = _FROZEN

    value: float = Field(gt=0, le=10_000, strict=True)
    low: float = Field(gt=0, le=10_000, strict=True)
    high: float = Field(gt=0, le=10_000, strict=True)
    basis: Text = ""

    @model_validator(mode="after")
    def _ordered(self) -> "Speed":
        if not self.low <= self.value <= self.high:
            raise InputError(f"speed range {self.low:g}..{self.high:g} does not hold the speed {self.value:g}")
        return self


Watts = Optional[Annotated[float, Field(ge=0, le=MAX_WATTS, allow_inf_nan=False, strict=True)]]


class Power(BaseModel):
    model_config = _FROZEN

    sustained_w: Watts = None
    transient_w: Watts = None
    recommended_psu_w: Watts = None
    breakdown: Optional[dict[Text, Watts]] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: _int(getattr(self, k)) for k in ("sustained_w", "transient_w", "recommended_psu_w")}
        if self.breakdown is not None:
            out["breakdown"] = {k: _int(v) for k, v in self.breakdown.items()}
        return out


def _int(v: Optional[float]) -> Optional[float | int]:
    return int(v) if v is not None and float(v).is_integer() else v


class FindingView(BaseModel):
    model_config = _FROZEN

    rule: Name
    message: Annotated[str, StringConstraints(max_length=2000, strict=True)]
    parts: tuple[Text, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "parts": list(self.parts)}


class PlanView(BaseModel):
    """A build as the answer shows it: priced lines in one currency, and (for a solved plan) the GPU summary,
    speed, power, findings and notes. Produced once from a solver Plan; read from files with `read_plan_view`."""

    model_config = _FROZEN

    name: Optional[Text] = None
    currency: CurrencyCode = "EUR"
    parts: tuple[PricedLine, ...] = Field(default=(), max_length=MAX_LINES)
    gpu: Optional[GpuSummary] = None
    speed: Optional[Speed] = None
    power: Optional[Power] = None
    warnings: tuple[FindingView, ...] = ()
    unverified: tuple[FindingView, ...] = ()
    trade_offs: tuple[Annotated[str, StringConstraints(max_length=2000, strict=True)], ...] = ()
    quality_points: int = Field(default=0, ge=-1000, le=1000, strict=True)
    power_limit: float = Field(default=1.0, ge=0.4, le=1.0, strict=True)
    notes: tuple[Annotated[str, StringConstraints(max_length=20_000, strict=True)], ...] = ()  # a checklist runs long

    @model_validator(mode="before")
    @classmethod
    def _from_json(cls, data: Any) -> Any:
        """Plan JSON to fields: the currency of `total` (or `currency`), speed from the speedup keys, every
        line priced in that currency (a line in another one is refused, never added as if it were the same)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        total = out.pop("total", None)
        if total is not None and not isinstance(total, dict):
            raise InputError("the build's 'total' must be an object with 'amount' and 'currency'")
        declared = (total or {}).get("currency") or out.get("currency") or "EUR"
        if not isinstance(declared, str):
            raise InputError("the build's currency must be an ISO code such as EUR")
        currency = out["currency"] = check_currency(declared)
        if "speedup_vs_1080ti" in out and out.get("speed") is None:
            rng = out.get("speedup_range") or [out["speedup_vs_1080ti"]] * 2
            if not isinstance(rng, (list, tuple)) or len(rng) != 2:
                raise InputError("the plan's 'speedup_range' must be [low, high]")
            out["speed"] = {"value": out["speedup_vs_1080ti"], "low": rng[0], "high": rng[1],
                            "basis": out.get("speedup_basis") or ""}
        parts = out.get("parts", ())
        if not isinstance(parts, (list, tuple)):
            raise InputError("expected `planner recommend --json` output or one plan with a 'parts' list")
        if len(parts) > MAX_LINES:
            raise InputError(f"a build holds at most {MAX_LINES} parts (got {len(parts)})")
        out["parts"] = tuple(_line(i, p, currency) for i, p in enumerate(parts))
        if isinstance(out.get("power"), dict) and out["power"].get("breakdown") is None:
            out["power"] = {k: v for k, v in out["power"].items() if k != "breakdown"}
        return out

    # ---- what readers ask

    @property
    def total(self) -> Decimal:
        """The sum of the lines as shown (each rounded to the cent), so a table adds up."""
        return quantize(sum((ln.line_total for ln in self.parts), Decimal(0)))

    def lines(self, category: str) -> list[PricedLine]:
        return [ln for ln in self.parts if ln.category == category]

    def line(self, category: str) -> Optional[PricedLine]:
        return next(iter(self.lines(category)), None)

    @property
    def gpu_count(self) -> int:
        """GPUs in the build: the summary's count, else the GPU lines' quantities."""
        return self.gpu.count if self.gpu is not None else sum(ln.quantity for ln in self.lines("gpu"))

    def part_ids(self) -> list[str]:
        return [ln.part_id for ln in self.parts]

    def price_dates(self) -> list[str]:
        return seen_dates(ln for ln in self.parts if not ln.owned)

    def to_json(self) -> dict[str, Any]:
        """`planner recommend --json`'s plan object (keys and order as before PlanView)."""
        out: dict[str, Any] = {"parts": [ln.to_json() for ln in self.parts],
                               "total": {"amount": str(self.total), "currency": self.currency}}
        if self.name is not None:
            out["name"] = self.name
        if self.gpu is not None:
            out["gpu"] = {"chip": self.gpu.chip, "name": self.gpu.name, "count": self.gpu.count,
                          "vram_gb": self.gpu.vram_gb}
        if self.speed is not None:
            out["speedup_vs_1080ti"] = round(self.speed.value, 3)
            out["speedup_range"] = [round(self.speed.low, 3), round(self.speed.high, 3)]
            out["speedup_basis"] = self.speed.basis
        if self.power is not None:
            out["power"] = self.power.to_json()
        if self.gpu is not None:  # a solved plan: its findings, trade-offs, quality, power limit and notes
            out.update({"warnings": [f.to_json() for f in self.warnings],
                        "unverified": [f.to_json() for f in self.unverified],
                        "trade_offs": list(self.trade_offs), "quality_points": self.quality_points,
                        "power_limit": self.power_limit, "notes": list(self.notes)})
        return out


def _line(i: int, p: Any, currency: str) -> PricedLine:
    """Line i of a plan, in the plan's currency; one-line errors naming the part."""
    if isinstance(p, PricedLine):
        if p.unit_price is not None and p.currency != currency:
            raise InputError(f"part {p.part_id[:40]!r} is priced in {p.currency}, the build in {currency}")
        return p
    if not isinstance(p, dict):
        raise InputError(f"part #{i + 1} is not an object")
    for key in ("id", "category"):
        v = p.get(key)
        if v is None or v == "":
            raise InputError(f"part #{i + 1} needs a '{key}'")
        if not isinstance(v, str):
            raise InputError(f"part #{i + 1}: '{key}' must be text, not {type(v).__name__}")
    where = f"part {p['id'][:40]!r}"
    if p["category"] not in CATEGORIES:
        raise InputError(f"part #{i + 1} has unknown category {p['category'][:30]!r}")
    qty = p.get("quantity", 1)
    if type(qty) is not int or not 1 <= qty <= MAX_QUANTITY:
        raise InputError(f"{where}: quantity must be a whole number 1-{MAX_QUANTITY} (got {str(qty)[:20]!r})")
    try:
        line = PricedLine.model_validate(p, context={"currency": currency})
    except ValidationError as exc:
        raise InputError(f"{where}: {validation_message(exc)}") from None
    if line.unit_price is not None and line.currency != currency:
        raise InputError(f"{where} is priced in {line.currency}, the build in {currency}")
    return line if line.currency == currency else line.model_copy(update={"currency": currency})


def first_plan(data: Any, where: str = "the build") -> Any:
    """The first plan of a recommendation, or the object itself when it is one plan with a 'parts' list."""
    if isinstance(data, dict) and isinstance(data.get("plans"), list):
        if not data["plans"]:
            raise InputError(f"{where}: the recommendation holds no plan (nothing fitted the request)")
        data = data["plans"][0]
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        raise InputError(f"{where}: expected `planner recommend --json` output or one plan with a 'parts' list")
    return data


def read_plan_view(data: Any, where: str = "the build", error: type[InputError] = InputError) -> PlanView:
    """The typed plan of JSON data (recommend output, one plan, a share export): every problem is one `error`
    line that names `where`, the part and the field."""
    try:
        return PlanView.model_validate(first_plan(data, where))
    except ValidationError as exc:
        raise error(f"{where}: {validation_message(exc)}") from None
    except InputError as exc:
        text = str(exc)
        raise error(text if text.startswith(where) else f"{where}: {text}") from None
