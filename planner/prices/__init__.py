"""Live prices: polite fetching, extraction from retailer pages, matching to parts, SQLite price history.

Names load lazily: a plan reads the price history (planner.prices.store) without importing the HTML extractor
(extruct, lxml, BeautifulSoup: about half a second), which only `prices extract/refresh/probe` need.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"extract": "planner.prices.extract", "ExtractResult": "planner.prices.result",
            "ExtractedOffer": "planner.prices.result"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'planner.prices' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
