"""Cloud GPU rental catalog: validated, dated rental prices per provider offer, mapped to chip ids."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from functools import lru_cache
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from planner.resources import SHIPPED_DATA_DIR
from planner.errors import CatalogError, CurrencyError
from planner.catalog.models import OptStr
from planner.money import check_currency

CLOUD_PRICES_PATH = SHIPPED_DATA_DIR / "cloud_prices.csv"  # normalised from ../shared (one row per source row)
ADDED_PRICES_PATH = SHIPPED_DATA_DIR / "cloud_prices_added.csv"  # consumer-card and EU rentals from dated pages
COLUMNS = (
    "provider", "offer", "gpu_name", "chip", "vram_gb", "gpus_per_instance", "price_per_gpu_hour",
    "currency", "observed_on", "source", "note", "billing",
)
class Billing(StrEnum):
    """How a rental price is sold (the `billing` column of data/cloud_prices.csv)."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    COMMITMENT = "commitment"
    MARKETPLACE = "marketplace"
    SERVERLESS = "serverless"


# Offers a one-off sweep can actually use: no spot interruptions, no multi-year commitments.
DEFAULT_BILLING: frozenset[str] = frozenset({Billing.ON_DEMAND, Billing.MARKETPLACE, Billing.SERVERLESS})


@lru_cache(maxsize=1)
def _known_chips() -> frozenset[str]:
    from planner.catalog.load import load_chips
    return frozenset(load_chips())


class CloudOffer(BaseModel):
    """One rental price: provider, offer, GPU, price per GPU-hour, currency, date and source."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    provider: str = Field(min_length=1)
    offer: str = Field(min_length=1)
    gpu_name: str = Field(min_length=1)
    chip: OptStr = None
    vram_gb: float = Field(gt=0)
    gpus_per_instance: int = Field(ge=1, le=64)
    price_per_gpu_hour: Decimal = Field(gt=0)
    currency: str
    observed_on: Optional[date] = None
    source: str = Field(min_length=1)
    note: OptStr = None
    billing: Billing  # how the price is sold, stated per row (it used to be guessed from the offer's words)

    @field_validator("chip")
    @classmethod
    def _chip(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in _known_chips():
            raise ValueError(f"unknown chip id {v!r} (ids are in data/gpu_chips.csv)")
        return v

    @field_validator("currency")
    @classmethod
    def _currency(cls, v: str) -> str:
        try:
            return check_currency(v)
        except CurrencyError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("observed_on", mode="before")
    @classmethod
    def _date(cls, v: object) -> object:
        return None if isinstance(v, str) and v.strip() == "" else v

    @field_validator("price_per_gpu_hour")
    @classmethod
    def _finite(cls, v: Decimal) -> Decimal:
        if not v.is_finite():
            raise ValueError("price must be a finite number")
        return v

    @property
    def key(self) -> tuple[str, str, Optional[str], int]:
        """Same provider, offer, chip and instance size = the same product observed on different days."""
        return (self.provider, self.offer, self.chip, self.gpus_per_instance)

    @property
    def label(self) -> str:
        size = "" if self.gpus_per_instance == 1 else f", {self.gpus_per_instance}-GPU instance"
        return f"{self.provider} ({self.offer}{size}) {self.gpu_name}"

    @property
    def date_text(self) -> str:
        return self.observed_on.isoformat() if self.observed_on else "undated"


def load_cloud_offers(path: Optional[Path] = None) -> list[CloudOffer]:
    """Every row of the rental catalog (default: the normalised file and the added consumer-card and EU rentals); a
    bad row raises CatalogError naming file, row and field."""
    from planner.catalog.load import load_records  # the one CSV reader of the project

    files = [Path(path)] if path is not None else [CLOUD_PRICES_PATH, ADDED_PRICES_PATH]
    offers = [o for file in files for o in load_records(file, CloudOffer)]
    if not offers:
        raise CatalogError(f"{files[0]}: no rental offers")
    return offers


def latest_offers(
    offers: Iterable[CloudOffer], *, billing: Iterable[str] = DEFAULT_BILLING
) -> list[CloudOffer]:
    """The newest dated observation of each product that has a chip; undated rows are history only."""
    allowed = set(billing)
    newest: dict[tuple, CloudOffer] = {}
    for o in offers:
        if o.chip is None or o.observed_on is None or o.billing not in allowed:
            continue
        seen = newest.get(o.key)
        if seen is None or o.observed_on > seen.observed_on:  # type: ignore[operator]
            newest[o.key] = o
    return sorted(newest.values(), key=lambda o: (o.provider, o.chip or "", o.offer, o.gpus_per_instance))


def filter_offers(
    offers: Iterable[CloudOffer], *, providers: Sequence[str] = (), gpus: Sequence[str] = ()
) -> list[CloudOffer]:
    """Keep offers whose provider contains one of `providers` and whose chip id or GPU name contains
    one of `gpus` (case-insensitive substrings; an empty list keeps everything)."""
    provs = [p.strip().lower() for p in providers if p.strip()]
    names = [g.strip().lower() for g in gpus if g.strip()]
    out = []
    for o in offers:
        if provs and not any(p in o.provider.lower() for p in provs):
            continue
        hay = f"{o.chip or ''} {o.gpu_name}".lower()
        if names and not any(g in hay for g in names):
            continue
        out.append(o)
    return out
