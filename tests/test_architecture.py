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
KERNEL_ORDER = ["errors", "atomicfile", "textsafe", "validation", "settings", "money", "vocab", "resources", "fx", "price_label",
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


# The service's names come from its one declaration (planner/service/__init__.py: USE_CASES, RESULTS, SUPPORT), not
# from a list restated here. A new name is a decision made there (and in docs/architecture.md); SUPPORT (helpers and
# constants still re-exported) may only shrink: each of its names is to move behind a use case or onto a result type.
import planner.service as _service  # noqa: E402 - the declaration the allow-list derives from

DOOR = {**_service.USE_CASES, **_service.RESULTS, **_service.SUPPORT}
SERVICE_NAMES = frozenset(DOOR)
SUPPORT_CEILING = 1  # issue 35: 72 lower-module names were re-exported; lower this as names move behind use cases
ROOT_MAY_IMPORT = {"__version__"}  # `from planner import ...` in a front end: the version, or a kernel module


def test_the_door_is_declared_once() -> None:
    tables = [set(_service.USE_CASES), set(_service.RESULTS), set(_service.SUPPORT)]
    assert sum(map(len, tables)) == len(SERVICE_NAMES), "a name is declared in two tables"
    assert set(_service.__all__) == SERVICE_NAMES
    for name in SERVICE_NAMES:
        getattr(_service, name)  # each resolves
    assert len(_service.SUPPORT) <= SUPPORT_CEILING, "SUPPORT only shrinks: put the helper behind a use case"


def test_the_door_names_functions_and_types_not_modules() -> None:
    """No whole module goes through the door, and no door name is also a planner.service submodule's (importing
    `planner.service.calibrate` would make `planner.service.calibrate` the module, not the use case)."""
    whole = [n for n, (_, attr) in DOOR.items() if attr is None]
    assert not whole, f"whole modules in the door: {whole}"
    submodules = {p.stem for p in (PLANNER / "service").glob("*.py")}
    assert not SERVICE_NAMES & submodules, sorted(SERVICE_NAMES & submodules)


def test_use_cases_are_callables_and_results_are_types() -> None:
    import inspect
    import typing

    assert all(callable(getattr(_service, n)) and not inspect.isclass(getattr(_service, n)) for n in _service.USE_CASES)
    not_types = [n for n in _service.RESULTS
                 if not inspect.isclass(getattr(_service, n)) and typing.get_origin(getattr(_service, n)) is None]
    assert not not_types, f"RESULTS holds types (or unions of them): {not_types}"


def _front_end_service_names() -> set[str]:
    used = set()
    for path in [*FRONT, *sorted((PLANNER / "cli").glob("*.py")), PLANNER / "__init__.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "planner.service":
                used |= {a.name for a in node.names}
    text = (PLANNER / "__init__.py").read_text(encoding="utf-8")
    used |= {n for n in SERVICE_NAMES if f'"{n}": "planner.service"' in text}  # the package's own lazy table
    return used


def test_every_declared_name_is_used_by_a_front_end() -> None:
    """A name no front end imports is not part of the door: drop it from the declaration."""
    unused = SERVICE_NAMES - _front_end_service_names()
    assert not unused, f"declared but used by no front end: {sorted(unused)}"


def _root_imports(path: Path) -> list[str]:
    """`from planner import X` where X is neither a kernel module nor the version: the package's internals."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "planner":
            bad += [f"line {node.lineno}: from planner import {a.name}" for a in node.names
                    if a.name not in ROOT_MAY_IMPORT | set(KERNEL_ORDER)]
    return bad


@pytest.mark.parametrize("path", [*FRONT, *sorted((PLANNER / "cli").glob("*.py"))],
                         ids=[p.name for p in [*FRONT, *sorted((PLANNER / "cli").glob("*.py"))]])
def test_front_ends_take_nothing_from_the_package_root_but_the_version(path: Path) -> None:
    bad = _root_imports(path)
    assert not bad, f"{path.name}: go through planner.service: " + "; ".join(bad)


def test_the_root_import_check_refuses_an_internal(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from planner import __version__, settings\nfrom planner import recommend\n", encoding="utf-8")
    assert _root_imports(probe) == ["line 2: from planner import recommend"]


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
