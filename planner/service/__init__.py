"""Application layer: the one door front ends (app.py, ui/) go through: the request pipeline and each concern's entry points.

Names load lazily, so importing the service costs nothing until a name is used. tests/test_architecture.py checks
that ui/ and app.py import only this package and the kernel (errors, money, request, textsafe, ...).
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> (module, attribute); attribute None = the module itself
_EXPORTS: dict[str, tuple[str, Any]] = {
    # the pipeline and the catalog as front ends use it
    "plan": ("planner.service.pipeline", "plan"),
    "recommend": ("planner.service.pipeline", "recommend"),
    "Planned": ("planner.service.pipeline", "Planned"),
    # the typed answer describe() returns (planner.service.answer): every front end reads it, JSON only at the edge
    **{n: ("planner.service.answer", n) for n in ("Answer", "BuildSummary", "PlannedBuild", "SideBySide",
                                                  "Trial", "TriedOption")},
    "CheckReport": ("planner.compat.checker", "CheckReport"),
    "planned_sharing": ("planner.perf.planned_sweep", "sharing"),  # runs per GPU within VRAM, as recommend plans
    "costs_build": ("planner.service.pipeline", "costs_build"),
    "speed_functions": ("planner.service.pipeline", "speed_functions"),
    "cloud_offers": ("planner.service.pipeline", "cloud_offers"),
    "read_plan": ("planner.share.plan_file", "read_plan"),
    "build_from_plan": ("planner.share.plan_file", "build_from_plan"),
    # the speed model, memory fit and the user's own measurements (planner calibrate)
    "calibration": ("planner.perf.calibration", None),
    "read_training_log": ("planner.perf.calibration_log", "read_log"),
    "load_perf_model": ("planner.perf.model", "load_perf_model"),
    "PerfModel": ("planner.perf.model", "PerfModel"),
    "RANGE_NOTE": ("planner.perf.model", "RANGE_NOTE"),
    "REFERENCE_CHIP": ("planner.perf.model", "REFERENCE_CHIP"),
    "executed_precision": ("planner.perf.model", "executed_precision"),
    "speed_limit": ("planner.perf.limits", "limit_of"),
    "ModelShape": ("planner.perf.memfit", "ModelShape"),
    "assume_typical": ("planner.perf.memfit", "assume_typical"),
    "TYPICAL_BATCH": ("planner.perf.memfit", "TYPICAL_BATCH"),
    "TYPICAL_SEQ": ("planner.perf.memfit", "TYPICAL_SEQ"),
    "estimate_memory": ("planner.perf.memfit", "estimate_memory"),
    "GpuChip": ("planner.catalog.models", "GpuChip"),
    "gpu_chip": ("planner.share.plan_file", "gpu_chip"),
    "estimated_wall_power_w": ("planner.perf.sweep", "estimated_wall_power_w"),
    "plan_concurrency": ("planner.perf.concurrency", "plan_concurrency"),
    "wall_power_w": ("planner.costs.compare", "wall_power_w"),
    # the catalog as the catalog commands show, check, import and generate it
    "load_catalog": ("planner.catalog.load", "load_catalog"),
    "cached_catalog": ("planner.catalog.load", "cached_catalog"),
    "price_age_days": ("planner.catalog.load", "price_age_days"),
    "catalog_invariants": ("planner.catalog.invariants", "catalog_invariants"),
    "import_pcpp": ("planner.catalog.importers", "import_pcpp"),
    "generate_catalog": ("planner.catalog.synth", "generate"),
    "describe": ("planner.service.pipeline", "describe"),
    "check": ("planner.service.pipeline", "check"),
    "priced_fixes": ("planner.service.fixes", "priced_fixes"),  # the cheapest one-part swap per finding
    "compare": ("planner.service.pipeline", "compare"),
    "load_priced_catalog": ("planner.service.catalogs", "load_priced_catalog"),
    "Catalog": ("planner.catalog.load", "Catalog"),
    "AnyPart": ("planner.catalog.models", "AnyPart"),
    "default_data_dir": ("planner.catalog.load", "default_data_dir"),
    "rule_summary": ("planner.service.owned", "rule_summary"),
    "unused_sentence": ("planner.service.owned", "unused_sentence"),
    "warning_rules": ("planner.service.owned", "warning_rules"),
    "sweep_report": ("planner.service.sweep_report", None),
    "profile": ("planner.service.profile", None),  # the user's workload profile (planner profile)
    # speed and costs
    "gpu_speed": ("planner.perf.speed", "gpu_speed"),
    "calibration_fingerprint": ("planner.perf.calibration", "fingerprint"),
    "Estimate": ("planner.perf.sweep", "Estimate"),
    "sweep_time": ("planner.perf.sweep", "sweep_time"),
    "costs_model": ("planner.costs.compare", None),
    "verdict": ("planner.costs.verdict", "verdict"),
    "cheapest_rent": ("planner.costs.verdict", "cheapest_rent"),
    "CONSIDERED_FAMILIES": ("planner.costs.verdict", "CONSIDERED_FAMILIES"),
    # sharing
    **{n: ("planner.share", n) for n in ("DEFAULT_BASE_URL", "TYPE_LABELS", "SharedBuild", "build_from_catalog", "build_from_json",
                                           "import_build", "permalink", "to_csv", "to_json_text", "to_markdown",
                                           "decode_token", "encode_token")},
    # prices: the actions, not the store, fetcher or registry behind them
    "price_db_path": ("planner.prices.store", "default_path"),
    "refresh_prices": ("planner.service.prices", "refresh_prices"),
    "price_history": ("planner.service.prices", "price_history"),
    "polite_fetcher": ("planner.service.prices", "polite_fetcher"),
    "extract_page": ("planner.service.prices", "extract_page"),
    "probe_shops": ("planner.service.prices", "probe_shops"),
    "part_history": ("planner.service.prices", "part_history"),
    "confirm_price": ("planner.service.prices", "confirm_price"),
    "add_price": ("planner.service.prices", "add_price"),
    "forget_prices": ("planner.service.prices", "forget_prices"),
    "keep_list_prices": ("planner.service.prices", "keep_list_prices"),
    "read_given_price": ("planner.prices.given", "read_given_price"),
    "given_prices": ("planner.service.prices", "given_prices"),
    "list_total": ("planner.share.list_prices", "list_total"),
    "build_html": ("planner.service.share_html", "build_html"),
    "my_measurements": ("planner.service.shared_speeds", "my_measurements"),
    "use_shared_measurements": ("planner.service.shared_speeds", "use_shared_measurements"),
    "measurements_sentence": ("planner.service.shared_speeds", "measurements_sentence"),
    "html_details": ("planner.share.html_export", "details_for"),
    "to_html": ("planner.share.html_export", "to_html"),
    "public_url": ("planner.settings", "public_url"),
    "given_prices_sentence": ("planner.service.prices", "given_prices_sentence"),
    # doctor
    "diagnose_events": ("planner.doctor.diagnose", "diagnose_events"),
    "diagnose_metrics": ("planner.doctor.diagnose", "diagnose_metrics"),
    "busy_windows_from_metrics": ("planner.doctor.diagnose", "busy_windows_from_metrics"),
    "metrics_windows": ("planner.doctor.diagnose", "metrics_windows"),
    "series_windows": ("planner.doctor.diagnose", "series_windows"),
    "metrics_report": ("planner.doctor.engine", "metrics_report"),
    "events_markdown": ("planner.doctor.markdown", "events_markdown"),
    "metrics_markdown": ("planner.doctor.markdown", "metrics_markdown"),
    "stamp_text": ("planner.doctor.markdown", "stamp_text"),
    "as_source": ("planner.doctor.diagnose", "as_source"),
    "Signal": ("planner.doctor.signals", "Signal"),
    "read_smi": ("planner.doctor.smi", "read_smi"),
    "Watch": ("planner.doctor.watch", "Watch"),
    "WatchOptions": ("planner.doctor.watch", "WatchOptions"),
    "DEFAULT_TEMP_LIMIT_C": ("planner.doctor.metrics", "DEFAULT_TEMP_LIMIT_C"),
    "EventReport": ("planner.doctor.report", "EventReport"),
    "MetricsReport": ("planner.doctor.report", "MetricsReport"),
    "read_metrics": ("planner.doctor.metrics_io", "read_metrics"),
    "parse_window": ("planner.doctor.timestamps", "parse_window"),
    # burn-in: the plan for a build and the verdict on its logs
    "check_burnin": ("planner.doctor.burnin", "check_burnin"),
    "burnin_plan": ("planner.doctor.burnin_plan", "burnin_plan"),
    "burnin_plan_text": ("planner.doctor.burnin_plan", "plan_text"),
    "burnin_pointer": ("planner.doctor.burnin_plan", "pointer"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'planner.service' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    return mod if attr is None else getattr(mod, attr)
