"""The layers of docs/architecture.md hold: each package imports only from packages below it (arrows point one way)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLANNER = Path(__file__).resolve().parents[1] / "planner"
# Lowest first. A module may import from its own package and from any package of a lower level.
LEVELS = {
    "kernel": 0,  # errors, money, vocab, resources, fx, request: the vocabulary everything speaks
    "catalog": 1,
    "perf": 2,
    "compat": 3,
    "costs": 4, "doctor": 4,
    "solver": 5, "prices": 5,
    "share": 6,
    "service": 7,
    "cli": 8,
}
KERNEL_ORDER = ["errors", "textsafe", "validation", "money", "vocab", "resources", "fx", "price_label", "settings",
                "request", "plan_view"]  # kernel modules import only earlier ones


def _package(path: Path) -> str:
    rel = path.relative_to(PLANNER).parts
    if rel == ("__main__.py",):
        return "cli"  # `python -m planner` is the CLI's other door
    return rel[0] if len(rel) > 1 else "kernel"


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "planner":
            names = [f"planner.{a.name}" for a in node.names] if node.module == "planner" else [node.module]
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "planner"]
    return out


def _target(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] in ("__version__", "data"):
        return None
    return parts[1] if (PLANNER / parts[1]).is_dir() else "kernel"


MODULES = sorted(p for p in PLANNER.rglob("*.py"))


def test_every_package_has_a_level() -> None:
    packages = {p.name for p in PLANNER.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages - {"data"} <= set(LEVELS), f"add the new package to LEVELS and docs/architecture.md: {packages}"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PLANNER)) for p in MODULES])
def test_imports_point_down(path: Path) -> None:
    own = _package(path)
    bad = []
    for line, module in _imports(path):
        target = _target(module)
        if target is None or target == own and own != "kernel":
            continue
        if own == "kernel" and target == "kernel":
            me, them = path.stem, module.split(".")[1]
            if me in KERNEL_ORDER and them in KERNEL_ORDER and KERNEL_ORDER.index(them) >= KERNEL_ORDER.index(me):
                bad.append(f"line {line}: {module} (kernel modules import only earlier kernel modules)")
            continue
        if LEVELS[target] >= LEVELS[own]:
            bad.append(f"line {line}: {module} ({target} is not below {own})")
    assert not bad, f"{path.relative_to(PLANNER)}: " + "; ".join(bad)


def test_nothing_under_planner_imports_streamlit() -> None:
    offenders = [str(p.relative_to(PLANNER)) for p in MODULES
                 if any(n.split(".")[0] == "streamlit" for _, n in
                        [(0, a.name) for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                         if isinstance(node, ast.Import) for a in node.names]
                        + [(0, node.module or "") for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                           if isinstance(node, ast.ImportFrom)])]
    assert not offenders


FRONT = [Path(__file__).resolve().parents[1] / "app.py", *sorted((Path(__file__).resolve().parents[1] / "ui").glob("*.py"))]
FRONT_MAY_IMPORT = {"service", "kernel"}  # front ends call the service; kernel types (Request, errors) are shared


@pytest.mark.parametrize("path", FRONT, ids=[p.name for p in FRONT])
def test_front_ends_call_the_service_only(path: Path) -> None:
    bad = [f"line {line}: {module}" for line, module in _imports(path)
           if _target(module) is not None and _target(module) not in FRONT_MAY_IMPORT]
    assert not bad, f"{path.name} reaches past the service: " + "; ".join(bad)


# The service's names: one entry per user action or result type front ends use. A new name is a decision (add it
# here and to docs/architecture.md), not a shortcut around the pipeline: the store, the fetcher, the registry and the
# solver stay behind it.
SERVICE_NAMES = {
    "plan", "recommend", "describe", "check", "compare", "load_priced_catalog", "Catalog", "AnyPart", "default_data_dir",
    "rule_summary", "unused_sentence", "warning_rules", "sweep_report", "profile", "gpu_speed", "Estimate", "sweep_time",
    "costs_model", "verdict", "cheapest_rent", "CONSIDERED_FAMILIES",
    "TYPE_LABELS", "SharedBuild", "build_from_catalog", "build_from_json", "import_build", "permalink", "to_csv",
    "to_json_text", "to_markdown", "decode_token", "encode_token",
    "price_db_path", "refresh_prices", "price_history", "polite_fetcher", "extract_page", "probe_shops",
    "part_history", "confirm_price", "add_price", "forget_prices", "keep_list_prices", "read_given_price",
    "given_prices", "given_prices_sentence", "list_total", "build_html", "html_details",
    "to_html", "public_url", "my_measurements", "use_shared_measurements", "measurements_sentence",
    "DEFAULT_BASE_URL",
    "Planned", "planned_sharing", "Answer", "BuildSummary", "PlannedBuild", "SideBySide", "Trial", "TriedOption", "CheckReport",
    "costs_build", "speed_functions", "cloud_offers", "read_plan", "build_from_plan",
    "load_catalog", "cached_catalog", "price_age_days", "catalog_invariants", "import_pcpp", "generate_catalog",
    "calibration", "read_training_log", "load_perf_model", "PerfModel", "RANGE_NOTE", "REFERENCE_CHIP",
    "executed_precision", "speed_limit", "ModelShape", "assume_typical", "TYPICAL_BATCH", "TYPICAL_SEQ", "estimate_memory", "GpuChip", "gpu_chip", "estimated_wall_power_w",
    "plan_concurrency", "wall_power_w", "calibration_fingerprint",
    "diagnose_events", "diagnose_metrics", "busy_windows_from_metrics", "events_markdown", "read_metrics",
    "parse_window", "metrics_windows", "series_windows", "metrics_report", "metrics_markdown", "stamp_text",
    "as_source", "Signal", "read_smi", "Watch", "WatchOptions", "DEFAULT_TEMP_LIMIT_C", "EventReport", "MetricsReport",
    "check_burnin", "burnin_plan", "burnin_plan_text", "burnin_pointer", "priced_fixes",
}


def test_the_service_exports_exactly_the_allowed_names() -> None:
    import planner.service as service

    assert set(service.__all__) == SERVICE_NAMES
    for name in SERVICE_NAMES:
        getattr(service, name)  # each resolves


@pytest.mark.parametrize("path", FRONT, ids=[p.name for p in FRONT])
def test_front_ends_use_only_the_allowed_service_names(path: Path) -> None:
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("planner.service"):
            if node.module != "planner.service":
                bad.append(f"line {node.lineno}: {node.module} (import from planner.service itself)")
            bad += [f"line {node.lineno}: {a.name}" for a in node.names if a.name not in SERVICE_NAMES]
    assert not bad, f"{path.name}: " + "; ".join(bad)


CLI = sorted((PLANNER / "cli").glob("*.py"))
KERNEL_MODULES = set(KERNEL_ORDER)


@pytest.mark.parametrize("path", CLI, ids=[p.name for p in CLI])
def test_the_cli_calls_the_service_only(path: Path) -> None:
    """The CLI's door is the web UI's: planner.service (its allowed names), the kernel and the CLI's own modules."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "planner":
            parts = node.module.split(".")
            if node.module == "planner.service":
                bad += [f"line {node.lineno}: {a.name}" for a in node.names if a.name not in SERVICE_NAMES]
            elif node.module == "planner" or len(parts) == 2 and parts[1] in KERNEL_MODULES | {"cli"}:
                continue
            elif parts[1] != "cli":
                bad.append(f"line {node.lineno}: {node.module}")
    assert not bad, f"cli/{path.name} reaches past the service: " + "; ".join(bad)
