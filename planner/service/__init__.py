"""Application layer: the one door front ends (the CLI, app.py, ui/) go through: the user's actions and their results.

The door is declared once, here: USE_CASES (what a user does), RESULTS (the types those actions return or take) and
SUPPORT (helpers and constants front ends still reach for: each is to move behind a use case or onto its result
type, so this table only shrinks). tests/test_architecture.py derives its allow-list from these three tables and
refuses any other planner name in the CLI or the UI. Names load lazily: importing the service costs nothing until a
name is used.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> (module, attribute)
USE_CASES: dict[str, tuple[str, Any]] = {
    "plan": ("planner.service.pipeline", "plan"),
    "recommend": ("planner.service.pipeline", "recommend"),
    "describe": ("planner.service.pipeline", "describe"),
    "check": ("planner.service.pipeline", "check"),
    "compare": ("planner.service.pipeline", "compare"),
    "priced_fixes": ("planner.service.fixes", "priced_fixes"),
    "costs_build": ("planner.service.pipeline", "costs_build"),
    "load_priced_catalog": ("planner.service.catalogs", "load_priced_catalog"),
    "priced_catalog": ("planner.service.catalogs", "priced_catalog"),
    "catalog_invariants": ("planner.catalog.invariants", "catalog_invariants"),
    "import_pcpp": ("planner.catalog.importers", "import_pcpp"),
    "generate_catalog": ("planner.catalog.synth", "generate"),
    "read_plan": ("planner.share.plan_file", "read_plan"),
    "read_training_log": ("planner.perf.calibration_log", "read_log"),
    "speed_model": ("planner.service.speed", "speed_model"),
    "verdict": ("planner.costs.verdict", "verdict"),
    "cloud_offers": ("planner.service.pipeline", "cloud_offers"),
    "import_build": ("planner.share", "import_build"),
    "purchase_from_plan": ("planner.share.plan_file", "purchase_from_plan"),
    "refresh_prices": ("planner.service.prices", "refresh_prices"),
    "extract_page": ("planner.service.prices", "extract_page"),
    "probe_shops": ("planner.service.prices", "probe_shops"),
    "my_prices": ("planner.service.prices", "my_prices"),
    "export_build": ("planner.service.share_html", "export_build"),
    "profile_store": ("planner.service.profile", "profile_store"),
    "measurements": ("planner.service.measured", "measurements"),
    "diagnose": ("planner.service.doctor", "diagnose"),
    "check_burnin": ("planner.doctor.burnin", "check_burnin"),
    "burnin_plan": ("planner.doctor.burnin_plan", "burnin_plan"),
}
RESULTS: dict[str, tuple[str, Any]] = {
    # the typed answer describe() returns (planner.service.answer): every front end reads it, JSON only at the edge
    **{n: ("planner.service.answer", n) for n in ("Answer", "BuildSummary", "PlannedBuild", "SideBySide",
                                                  "Trial", "TriedOption", "AssumedModel", "SweepReport", "Hours")},
    "CheckReport": ("planner.compat.checker", "CheckReport"),
    "Catalog": ("planner.catalog.load", "Catalog"),
    "AnyPart": ("planner.catalog.models", "AnyPart"),
    "SharedBuild": ("planner.share", "SharedBuild"),
    "SharedState": ("planner.share", "SharedState"),
    "EventReport": ("planner.doctor.report", "EventReport"),
    "MetricsReport": ("planner.doctor.report", "MetricsReport"),
    "Signal": ("planner.doctor.signals", "Signal"),
    "GpuChip": ("planner.catalog.models", "GpuChip"),
    "PerfModel": ("planner.perf.model", "PerfModel"),
    "SpeedQueries": ("planner.service.speed", "SpeedQueries"),
    # what a costs comparison takes and returns (planner.costs.compare)
    "CostWorkload": ("planner.costs.compare", "Workload"),
    "CostParams": ("planner.costs.compare", "CostParams"),
    "ResaleCurve": ("planner.costs.compare", "ResaleCurve"),
    "Comparison": ("planner.costs.compare", "Comparison"),
    "BurninPlan": ("planner.doctor.burnin_plan", "BurninPlan"),
    "Watch": ("planner.doctor.watch", "Watch"),
    "WatchOptions": ("planner.doctor.watch", "WatchOptions"),
}
# what front ends still take that is neither an action nor a result (tests/test_architecture.py: SUPPORT_CEILING)
SUPPORT: dict[str, tuple[str, Any]] = {
    "catalog_key": ("planner.service.catalogs", "catalog_key"),
}
_EXPORTS = {**USE_CASES, **RESULTS, **SUPPORT}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'planner.service' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    return mod if attr is None else getattr(mod, attr)
