"""planner: plan an ML training workstation — catalog, compatibility, CP-SAT builds, speed, costs, prices, sharing, doctor.

The public surface is small and loaded lazily (OR-Tools and pandas load only when used):

    from planner import load_catalog, check_parts, Request, recommend
    cat = load_catalog()
    rec = recommend(cat, Request(budget=7000))
"""

from __future__ import annotations

import importlib
from typing import Any

from planner.settings import VERSION as __version__  # defined once, in planner/settings.py

_EXPORTS = {
    "load_catalog": "planner.catalog.load",
    "Catalog": "planner.catalog.load",
    "check_parts": "planner.compat.checker",
    "CheckReport": "planner.compat.checker",
    "Request": "planner.request",
    "recommend": "planner.service",  # the service's door: names resolved, chip makers left out, as the CLI and UI
    "Recommendation": "planner.solver",
    "size_psu": "planner.compat.power",
    "Money": "planner.money",
    "PlannerError": "planner.errors",
    "InputError": "planner.errors",
    "CatalogError": "planner.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'planner' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
