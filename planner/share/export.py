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
from planner.price_label import DATED_SOURCES
from planner.money import check_currency, format_money, quantize
from planner.textsafe import csv_cell, md_cell, safe_url
from planner.plan_view import (
    UNVERIFIED_MARK, UNVERIFIED_NOTE, PlanView, PricedLine, first_plan, read_plan_view, seen_dates,
)
from planner.request import Request
from planner.settings import MAX_GPUS
from planner.share.token import READ_SCHEMAS, SCHEMA, request_from_inputs, TYPE_LABELS, encode_token, permalink

# ---------------------------------------------------------------- a priced build list


SharedLine = PricedLine  # a shared build's line is a plan's priced line (planner.plan_view)


@dataclass(frozen=True)
class SharedBuild:
    lines: tuple[SharedLine, ...]
    currency: str = "EUR"
    inputs: Optional[Request] = None
    measurements: tuple[Any, ...] = ()  # the sender's measured speeds, carried by the token (planner calibrate)

    @classmethod
    def from_view(cls, view: PlanView, inputs: Optional[Request] = None) -> "SharedBuild":
        """A plan's lines as a build list in PCPartPicker's order."""
        return cls(_sorted(list(view.parts)), view.currency, inputs)

    @classmethod
    def from_json(cls, data: Any, inputs: Optional[Request] = None) -> "SharedBuild":
        """Our export, `planner recommend --json` or one plan (build_from_json)."""
        return build_from_json(data, inputs)

    @classmethod
    def from_catalog(cls, catalog: Catalog, parts: list[tuple[str, int]], **options: Any) -> "SharedBuild":
        """Catalog parts priced with today's offers (build_from_catalog: currency, inputs, owned, used)."""
        return build_from_catalog(catalog, parts, **options)

    @property
    def total(self) -> Decimal:
        return quantize(sum((ln.line_total for ln in self.lines), Decimal(0)))

    def parts(self) -> list[tuple[str, int]]:
        return [(ln.part_id, ln.quantity) for ln in self.lines]

    def price_dates(self) -> list[str]:
        return self.view().price_dates()

    def view(self) -> PlanView:
        return PlanView(currency=self.currency, parts=self.lines)

    def token(self) -> str:
        inputs = self.inputs or Request(currency=self.currency)
        gpu = next((ln for ln in self.lines if ln.category == "gpu"), None)
        if gpu is not None and gpu.quantity != inputs.gpu_count and 1 <= gpu.quantity <= MAX_GPUS:
            inputs = inputs.model_copy(update={"gpu_count": gpu.quantity})
        return encode_token(inputs, self.parts(), self.measurements)

    def permalink(self, base_url: str) -> str:
        """The address that opens this build (its token) on the planner at `base_url`."""
        return permalink(self.token(), base_url)

    def to_json(self, *, with_token: bool = True) -> dict[str, Any]:
        return {"schema": SCHEMA, "currency": self.currency,
                "inputs": None if self.inputs is None else self.inputs.model_dump(mode="json"),
                "parts": [ln.to_json() for ln in self.lines],
                "total": {"amount": str(self.total), "currency": self.currency},
                "price_dates": self.price_dates(), "token": self.token() if with_token else None}


def _sorted(lines: list[SharedLine]) -> tuple[SharedLine, ...]:
    order = {c: i for i, c in enumerate(TYPE_LABELS)}
    return tuple(sorted(lines, key=lambda ln: order.get(ln.category, 99)))


def build_from_json(data: Any, inputs: Optional[Request] = None) -> SharedBuild:
    """Our export (schema planner.build/2, or /1 from before the one Request), `planner recommend --json` (first
    plan) or one plan, read through the one PlanView (strict types, prices finite and not negative)."""
    if isinstance(data, dict) and "schema" in data and data["schema"] not in READ_SCHEMAS:
        raise ShareError(f"unknown build schema {str(data['schema'])[:40]!r}; this planner reads {SCHEMA!r}")
    version = "v1" if isinstance(data, dict) and data.get("schema") == READ_SCHEMAS[0] else "v2"
    view = read_plan_view(data, "the build", ShareError)
    plan = first_plan(data, "the build")
    if inputs is None and plan.get("inputs") is not None:
        if not isinstance(plan["inputs"], dict):
            raise ShareError("the build's 'inputs' must be an object")
        inputs = request_from_inputs(plan["inputs"], version)
    return SharedBuild.from_view(view, inputs)


def build_from_catalog(catalog: Catalog, parts: list[tuple[str, int]], *, currency: str = "EUR",
                       inputs: Optional[Request] = None, owned: tuple[str, ...] = (),
                       used: str = "gpu") -> SharedBuild:
    """Price catalog parts with today's offers, converted to `currency`."""
    from planner.catalog.load import used_allowed

    currency = check_currency(currency)
    lines = []
    for pid, qty in parts:
        part = catalog.get(pid)
        offer = catalog.offer_for(pid, allow_used=used_allowed(used, part.category))
        lines.append(PricedLine.priced(part, qty, offer, currency, owned=part.id in owned,
                                       verified=catalog.verified(pid),
                                       unverified_what=catalog.unverified_what(pid)))  # owned: its value shown
    return SharedBuild(_sorted(lines), currency, inputs)


# ---------------------------------------------------------------- exports


def _price_cell(ln: SharedLine, currency: str, today: Optional[date] = None) -> str:
    if ln.owned:
        return "owned"
    if ln.unit_price is None:
        return "no price"
    bits = [format_money(ln.unit_price, currency) + (f" ({ln.condition})" if ln.used else "")]
    if ln.retailer:
        bits.append(f"@ {md_cell(ln.retailer)}")
    meta = md_cell(ln.label.text(today))
    return " ".join(bits) + (f" ({meta})" if meta else "")


def to_markdown(build: SharedBuild, *, link: Optional[str] = None, today: Optional[date] = None,
                token: Optional[str] = None) -> str:
    """PCPartPicker-shaped table: Type | Item | Price, one row per unit, a total row, price dates and sources."""
    cur = build.currency
    out = ["Type|Item|Price", ":----|:----|:----"]
    for ln in build.lines:
        name = md_cell(ln.name)
        item = f"[{name}]({ln.url})" if safe_url(ln.url) else name
        if ln.unverified:
            item += f" *{UNVERIFIED_MARK}*"
        for _ in range(ln.quantity):
            out.append(f"**{TYPE_LABELS.get(ln.category, ln.category)}** | {item} | {_price_cell(ln, cur, today)}")
    dates = seen_dates(ln for ln in build.lines if ln.price_source in DATED_SOURCES and not ln.owned)
    when = (f"seen at shops {dates[0]}" if len(dates) == 1 else f"seen at shops {dates[0]} to {dates[-1]}"
            if dates else "none seen at a shop")
    kinds = sorted({ln.label.kind for ln in build.lines
                    if ln.price_source and not ln.owned})
    out.append(f" | *Prices in {cur}, {md_cell(when)}; kinds: {md_cell(', '.join(kinds)) or 'none'}* |")
    out.append(f" | **Total** | **{format_money(build.total, cur)}**")
    if any(ln.unverified for ln in build.lines):
        out.append(f" | *{UNVERIFIED_MARK}: {md_cell(UNVERIFIED_NOTE)}* |")
        for ln in build.lines:  # each unverified row with the fact still to check (data/verified_rows.csv)
            if ln.unverified and ln.unverified_what:
                out.append(f" | *{md_cell(ln.name)}: still to check: {md_cell(ln.unverified_what)}* |")
    stamp = (today or date.today()).isoformat()
    safe_link = safe_url(link)
    out.append(f" | Generated by planner on {stamp}" + (f": [open this build]({safe_link})" if safe_link else "") + " |")
    if not safe_link and token:  # no public planner to link to: the token opens the build in any planner
        out.append(f" | Build token (paste it into planner's Share tab): `{md_cell(token)}` |")
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("type", "category", "id", "name", "quantity", "unit_price", "line_total", "currency",
               "retailer", "url", "price_observed_on", "price_source", "owned", "condition", "price_kind",
               "price_date_means", "price_seen_on", "price_age_days")


def to_csv(build: SharedBuild) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for ln in build.lines:
        label = ln.label
        w.writerow([TYPE_LABELS.get(ln.category, ln.category), ln.category, csv_cell(ln.part_id), csv_cell(ln.name),
                    ln.quantity, "" if ln.unit_price is None else str(quantize(ln.unit_price)),
                    str(quantize(ln.line_total)), build.currency, csv_cell(ln.retailer), csv_cell(ln.url),
                    csv_cell(ln.observed_text), "owned" if ln.owned else csv_cell(ln.price_source), str(ln.owned).lower(),
                    "" if ln.owned else csv_cell(ln.condition or "new"), csv_cell(label.kind),
                    csv_cell(label.text()), label.seen_on or "", "" if label.age_days() is None else label.age_days()])
    w.writerow(["Total", "", "", "", "", "", str(build.total), build.currency] + [""] * (len(CSV_COLUMNS) - 8))
    return buf.getvalue()


def to_json_text(build: SharedBuild) -> str:
    return json.dumps(build.to_json(), ensure_ascii=False, indent=2) + "\n"
