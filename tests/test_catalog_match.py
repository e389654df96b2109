"""The one part matcher: exact id or name wins, a unique fragment resolves, typos get "did you mean", never a guess."""

from __future__ import annotations

import pytest

from planner.catalog.match import coverage, resolve
from planner.errors import UnknownPartError


@pytest.mark.parametrize("query, want", [
    ("Ryzen 9 9950X", "cpu-amd-ryzen9-9950x"),          # exact name beats the 9950X3D that also contains it
    ("AMD Ryzen 9 9950X", "cpu-amd-ryzen9-9950x"),      # brand + name
    ("Meshify 2", "case-fractal-meshify-2"),            # exact name beats "Meshify 2 Compact"
    ("  fractal design   MESHIFY 2 ", "case-fractal-meshify-2"),
    ("9950x3d", "cpu-amd-ryzen9-9950x3d"),              # a unique fragment
    ("cpu-amd-ryzen9-9950x", "cpu-amd-ryzen9-9950x"),   # an id
])
def test_exact_and_unique_names_resolve(cat, query: str, want: str) -> None:
    assert cat.find(query).id == want


@pytest.mark.parametrize("typo, suggested", [
    ("Rysen 9 9950X", "cpu-amd-ryzen9-9950x"),
    ("Meshfy 2", "case-fractal-meshify-2"),
    ("RTX 5090 Astrall", "gpu-asus-rog-astral-rtx5090-oc"),
])
def test_a_typo_is_never_taken_but_suggested(cat, typo: str, suggested: str) -> None:
    with pytest.raises(UnknownPartError) as exc:
        cat.find(typo)
    msg = str(exc.value)
    assert msg.startswith(f"no part matches {typo!r}; did you mean ") and suggested in msg
    assert msg.index(suggested) == msg.index("did you mean ") + len("did you mean ")  # offered first


def test_nothing_alike_gets_no_silly_suggestion(cat) -> None:
    with pytest.raises(UnknownPartError, match="no part matches 'rtx 9999'; try `planner catalog list`"):
        cat.find("rtx 9999")


def test_ambiguous_fragment_lists_the_choices(cat) -> None:
    with pytest.raises(UnknownPartError, match="ambiguous") as exc:
        cat.find("Ryzen 9 9950")
    assert "cpu-amd-ryzen9-9950x " in str(exc.value) and "cpu-amd-ryzen9-9950x3d" in str(exc.value)


def test_category_limits_the_pool(cat) -> None:
    with pytest.raises(UnknownPartError):
        resolve("Meshify 2", cat.by_category("cpu"), "cpu")


def test_coverage_rules_out_variants_and_missing_numbers(cat) -> None:
    ti = next(p for p in cat.by_category("gpu") if "5070 Ti" in p.name)
    assert coverage(f"{ti.brand} {ti.name}", ti) == pytest.approx(1.0)
    assert coverage(f"{ti.brand} {ti.name}".replace(" Ti", ""), ti) == 0.0  # a 5070 is not a 5070 Ti
