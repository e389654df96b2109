"""A priced build list and its Markdown, CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Optional

from planner.catalog.load import Catalog
from planner.errors import ShareError
from planner.catalog.models import CATEGORIES
from planner.price_label import DATED_SOURCES, price_label
from planner.money import check_currency, format_money, parse_amount, quantize
from planner.textsafe import csv_cell, md_cell, safe_url
from planner.validation import not_future
from planner.share.plan_file import first_plan
from planner.request import Request
from planner.share.token import MAX_LINES, READ_SCHEMAS, SCHEMA, request_from_inputs, TYPE_LABELS, encode_token

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
    condition: Optional[str] = None  # new / used / refurbished, as the offer says

    @property
    def used(self) -> bool:
        return self.condition in ("used", "refurbished")

    @property
    def line_total(self) -> Decimal:
        return Decimal(0) if self.owned or self.unit_price is None else self.unit_price * self.quantity

    def to_json(self, currency: str) -> dict[str, Any]:
        price = None if self.unit_price is None else {"amount": str(quantize(self.unit_price)), "currency": currency}
        return {"category": self.category, "id": self.part_id, "name": self.name, "quantity": self.quantity,
                "price": price, "retailer": self.retailer, "url": self.url, "price_observed_on": self.observed_on,
                "price_source": "owned" if self.owned else self.price_source, "owned": self.owned,
                "condition": self.condition}


@dataclass(frozen=True)
class SharedBuild:
    lines: tuple[SharedLine, ...]
    currency: str = "EUR"
    inputs: Optional[Request] = None

    @property
    def total(self) -> Decimal:
        return quantize(sum((ln.line_total for ln in self.lines), Decimal(0)))

    def parts(self) -> list[tuple[str, int]]:
        return [(ln.part_id, ln.quantity) for ln in self.lines]

    def price_dates(self) -> list[str]:
        return sorted({ln.observed_on for ln in self.lines if ln.observed_on and not ln.owned})

    def token(self) -> str:
        inputs = self.inputs or Request(currency=self.currency)
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


MAX_TEXT = 300  # characters in a name, retailer, URL or source of a shared line
CONDITIONS = ("new", "used", "refurbished")


def _text(p: dict[str, Any], key: str, where: str, *, required: bool = False) -> Optional[str]:
    """A string field of a shared line: a string (at most MAX_TEXT characters) or absent/null."""
    v = p.get(key)
    if v is None or (v == "" and not required):
        if required:
            raise ShareError(f"{where} needs a '{key}'")
        return None
    if not isinstance(v, str):
        raise ShareError(f"{where}: '{key}' must be text, not {type(v).__name__}")
    if len(v) > MAX_TEXT:
        raise ShareError(f"{where}: '{key}' is {len(v)} characters long (limit {MAX_TEXT})")
    return v


def _line(i: int, p: Any, currency: str) -> SharedLine:
    """One shared line with strict types: every field has one type, prices are finite and not negative."""
    if not isinstance(p, dict):
        raise ShareError(f"part #{i + 1} is not an object")
    pid = _text(p, "id", f"part #{i + 1}", required=True)
    category = _text(p, "category", f"part #{i + 1}", required=True)
    where = f"part {pid[:40]!r}"  # type: ignore[index]
    if category not in CATEGORIES:
        raise ShareError(f"part #{i + 1} has unknown category {str(category)[:30]!r}")
    price = p.get("price")
    if price is not None and not isinstance(price, dict):
        raise ShareError(f"{where}: 'price' must be an object with 'amount' and 'currency'")
    amount = None
    if price and price.get("amount") is not None:
        amount = parse_amount(price["amount"], f"price of {pid[:40]}")  # type: ignore[index]
    price_currency = _text(price or {}, "currency", where)
    if price_currency and check_currency(price_currency) != currency:
        raise ShareError(f"{where} is priced in {price_currency}, the build in {currency}")
    qty = p.get("quantity", 1)
    if type(qty) is not int or not 1 <= qty <= 8:
        raise ShareError(f"{where}: quantity must be a whole number 1-8 (got {str(qty)[:20]!r})")
    observed = _text(p, "price_observed_on", where) or _text(price or {}, "observed_on", where)
    if observed is not None:
        try:
            not_future(date.fromisoformat(observed), "price date")
        except ValueError as exc:
            raise ShareError(f"{where}: 'price_observed_on' {observed[:20]!r} is not a past ISO date ({exc})") from None
    condition = _text(p, "condition", where)
    if condition is not None and condition not in CONDITIONS:
        raise ShareError(f"{where}: condition must be one of {', '.join(CONDITIONS)}")
    owned = p.get("owned", False)
    if owned is not None and not isinstance(owned, bool):
        raise ShareError(f"{where}: 'owned' must be true or false")
    return SharedLine(
        category=category, part_id=pid, name=_text(p, "name", where) or pid, quantity=qty,  # type: ignore[arg-type]
        unit_price=amount, retailer=_text(p, "retailer", where), url=_text(p, "url", where),
        observed_on=observed, price_source=_text(p, "price_source", where) or _text(price or {}, "source", where),
        owned=bool(owned), condition=condition)


def build_from_json(data: Any, inputs: Optional[Request] = None) -> SharedBuild:
    """Our export (schema planner.build/2, or /1 from before the one Request), `planner recommend --json` (first
    plan) or one plan."""
    if isinstance(data, dict) and "schema" in data and data["schema"] not in READ_SCHEMAS:
        raise ShareError(f"unknown build schema {str(data['schema'])[:40]!r}; this planner reads {SCHEMA!r}")
    version = "v1" if isinstance(data, dict) and data.get("schema") == READ_SCHEMAS[0] else "v2"
    data = first_plan(data, "the build", ShareError)
    total = data.get("total")
    if total is not None and not isinstance(total, dict):
        raise ShareError("the build's 'total' must be an object with 'amount' and 'currency'")
    declared = (total or {}).get("currency") or data.get("currency") or "EUR"
    if not isinstance(declared, str):
        raise ShareError("the build's currency must be an ISO code such as EUR")
    currency = check_currency(declared)
    if inputs is None and data.get("inputs") is not None:
        if not isinstance(data["inputs"], dict):
            raise ShareError("the build's 'inputs' must be an object")
        inputs = request_from_inputs(data["inputs"], version)
    if len(data["parts"]) > MAX_LINES:
        raise ShareError(f"a shared build holds at most {MAX_LINES} parts")
    lines = [_line(i, p, currency) for i, p in enumerate(data["parts"])]
    return SharedBuild(_sorted(lines), currency, inputs)


def build_from_catalog(catalog: Catalog, parts: list[tuple[str, int]], *, currency: str = "EUR",
                       inputs: Optional[Request] = None, owned: tuple[str, ...] = (),
                       used: str = "gpu") -> SharedBuild:
    """Price catalog parts with today's offers, converted to `currency`."""
    from planner.catalog.load import used_allowed
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
            price_source=offer.source if offer else None, owned=part.id in owned,
            condition=offer.condition if offer else None))
    return SharedBuild(_sorted(lines), check_currency(currency), inputs)


# ---------------------------------------------------------------- exports


def _price_cell(ln: SharedLine, currency: str) -> str:
    if ln.owned:
        return "owned"
    if ln.unit_price is None:
        return "no price"
    bits = [format_money(ln.unit_price, currency) + (f" ({ln.condition})" if ln.used else "")]
    if ln.retailer:
        bits.append(f"@ {md_cell(ln.retailer)}")
    label = price_label(ln.price_source, ln.observed_on)
    meta = md_cell(f"{label.kind} {label.when}" if label.seen_on else ", ".join(x for x in (label.kind, label.when) if x))
    return " ".join(bits) + (f" ({meta})" if meta else "")


def to_markdown(build: SharedBuild, *, link: Optional[str] = None, today: Optional[date] = None) -> str:
    """PCPartPicker-shaped table: Type | Item | Price, one row per unit, a total row, price dates and sources."""
    cur = build.currency
    out = ["Type|Item|Price", ":----|:----|:----"]
    for ln in build.lines:
        name = md_cell(ln.name)
        item = f"[{name}]({ln.url})" if safe_url(ln.url) else name
        for _ in range(ln.quantity):
            out.append(f"**{TYPE_LABELS.get(ln.category, ln.category)}** | {item} | {_price_cell(ln, cur)}")
    dates = sorted({ln.observed_on for ln in build.lines if ln.price_source in DATED_SOURCES and ln.observed_on
                    and not ln.owned})
    when = (f"seen at shops {dates[0]}" if len(dates) == 1 else f"seen at shops {dates[0]} to {dates[-1]}"
            if dates else "none seen at a shop")
    kinds = sorted({price_label(ln.price_source, ln.observed_on).kind for ln in build.lines
                    if ln.price_source and not ln.owned})
    out.append(f" | *Prices in {cur}, {md_cell(when)}; kinds: {md_cell(', '.join(kinds)) or 'none'}* |")
    out.append(f" | **Total** | **{format_money(build.total, cur)}**")
    stamp = (today or date.today()).isoformat()
    safe_link = safe_url(link)
    out.append(f" | Generated by planner on {stamp}" + (f": [open this build]({safe_link})" if safe_link else "") + " |")
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("type", "category", "id", "name", "quantity", "unit_price", "line_total", "currency",
               "retailer", "url", "price_observed_on", "price_source", "owned", "condition", "price_kind",
               "price_date_means")


def to_csv(build: SharedBuild) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for ln in build.lines:
        label = price_label(ln.price_source, ln.observed_on, owned=ln.owned)
        w.writerow([TYPE_LABELS.get(ln.category, ln.category), ln.category, csv_cell(ln.part_id), csv_cell(ln.name),
                    ln.quantity, "" if ln.unit_price is None else str(quantize(ln.unit_price)),
                    str(quantize(ln.line_total)), build.currency, csv_cell(ln.retailer), csv_cell(ln.url),
                    csv_cell(ln.observed_on), "owned" if ln.owned else csv_cell(ln.price_source), str(ln.owned).lower(),
                    "" if ln.owned else csv_cell(ln.condition or "new"), csv_cell(label.kind),
                    csv_cell(f"seen at the shop on {label.when}" if label.seen_on else label.when)])
    w.writerow(["Total", "", "", "", "", "", str(build.total), build.currency] + [""] * (len(CSV_COLUMNS) - 8))
    return buf.getvalue()


def to_json_text(build: SharedBuild) -> str:
    return json.dumps(build.to_json(), ensure_ascii=False, indent=2) + "\n"
