"""A priced build list and its Markdown, CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Optional

from planner.catalog.load import Catalog
from planner.errors import ShareError
from planner.catalog.models import CATEGORIES
from planner.price_label import DATED_SOURCES, price_label
from planner.money import check_currency, format_money, parse_decimal, quantize
from planner.service.plan_file import first_plan
from planner.share.token import MAX_LINES, SCHEMA, ShareInputs, TYPE_LABELS, encode_token

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
    data = first_plan(data, "the build", ShareError)
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
            price_source=p.get("price_source") or (price or {}).get("source"), owned=bool(p.get("owned")),
            condition=p.get("condition")))
    if len(lines) > MAX_LINES:
        raise ShareError(f"a shared build holds at most {MAX_LINES} parts")
    return SharedBuild(_sorted(lines), currency, inputs)


def build_from_catalog(catalog: Catalog, parts: list[tuple[str, int]], *, currency: str = "EUR",
                       inputs: Optional[ShareInputs] = None, owned: tuple[str, ...] = (),
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


def _md_escape(text: str) -> str:
    return re.sub(r"([|\[\]\\])", r"\\\1", text.replace("\n", " "))


def _price_cell(ln: SharedLine, currency: str) -> str:
    if ln.owned:
        return "owned"
    if ln.unit_price is None:
        return "no price"
    bits = [format_money(ln.unit_price, currency) + (f" ({ln.condition})" if ln.used else "")]
    if ln.retailer:
        bits.append(f"@ {_md_escape(ln.retailer)}")
    label = price_label(ln.price_source, ln.observed_on)
    meta = f"{label.kind} {label.when}" if label.seen_on else ", ".join(x for x in (label.kind, label.when) if x)
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
    dates = sorted({ln.observed_on for ln in build.lines if ln.price_source in DATED_SOURCES and ln.observed_on
                    and not ln.owned})
    when = (f"seen at shops {dates[0]}" if len(dates) == 1 else f"seen at shops {dates[0]} to {dates[-1]}"
            if dates else "none seen at a shop")
    kinds = sorted({price_label(ln.price_source, ln.observed_on).kind for ln in build.lines
                    if ln.price_source and not ln.owned})
    out.append(f" | *Prices in {cur}, {when}; kinds: {', '.join(kinds) or 'none'}* |")
    out.append(f" | **Total** | **{format_money(build.total, cur)}**")
    stamp = (today or date.today()).isoformat()
    out.append(f" | Generated by planner on {stamp}" + (f": [open this build]({link})" if link else "") + " |")
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
        w.writerow([TYPE_LABELS.get(ln.category, ln.category), ln.category, ln.part_id, ln.name, ln.quantity,
                    "" if ln.unit_price is None else str(quantize(ln.unit_price)), str(quantize(ln.line_total)),
                    build.currency, ln.retailer or "", ln.url or "", ln.observed_on or "",
                    "owned" if ln.owned else (ln.price_source or ""), str(ln.owned).lower(),
                    "" if ln.owned else (ln.condition or "new"), label.kind,
                    f"seen at the shop on {label.when}" if label.seen_on else label.when])
    w.writerow(["Total", "", "", "", "", "", str(build.total), build.currency] + [""] * (len(CSV_COLUMNS) - 8))
    return buf.getvalue()


def to_json_text(build: SharedBuild) -> str:
    return json.dumps(build.to_json(), ensure_ascii=False, indent=2) + "\n"
