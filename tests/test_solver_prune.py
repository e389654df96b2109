"""Block-wise dominance pruning keeps exactly the rows the one-at-a-time front comparison keeps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.solver.prune import pareto_dominated


def one_at_a_time(vecs: np.ndarray, order: np.ndarray) -> np.ndarray:
    out = np.zeros(len(vecs), dtype=bool)
    front: list[np.ndarray] = []
    for j in order:
        if front and np.any(np.all(np.array(front) <= vecs[j], axis=1)):
            out[j] = True
        else:
            front.append(vecs[j])
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(n=st.integers(1, 600), d=st.integers(0, 4), span=st.integers(1, 5), block=st.integers(1, 300),
       seed=st.integers(0, 10**6))
def test_blocks_keep_the_same_rows(n, d, span, block, seed) -> None:
    vecs = np.random.default_rng(seed).integers(0, span, size=(n, d))
    order = np.lexsort(vecs.T[::-1]) if d else np.arange(n)
    assert (pareto_dominated(vecs, order, block=block) == one_at_a_time(vecs, order)).all()


def _recorded(tmp_path, n_parts: int = 600):
    from decimal import Decimal

    from planner.catalog.load import load_catalog
    from planner.catalog.synth import generate
    from planner.request import Request
    from planner.solver.currency import to_eur
    from planner.solver.model import build_candidates, record

    cat = load_catalog(generate(tmp_path / "synth", n_parts, seed=3))
    req = Request(budget=Decimal(7000), currency="EUR", gpu_count=1)
    cands = build_candidates(cat, req, to_eur)
    return record(cands, req, cat)


def test_fast_columns_equal_the_per_part_values(tmp_path) -> None:
    """Prune's batched column (one map over the parts) gives what each recorded value function gives per part."""
    rec = _recorded(tmp_path)
    assert rec.values
    for spec, fn in rec.values.items():
        parts = rec.cands[spec[0]]
        assert rec.column(spec, parts).tolist() == [fn(p) for p in parts], spec


def test_specs_sharing_a_key_compute_the_same_column(tmp_path) -> None:
    """A column is evaluated once per key: every spec with that key must give the same values."""
    rec = _recorded(tmp_path)
    by_key: dict = {}
    for spec, key in rec.keys.items():
        by_key.setdefault(key, []).append(spec)
    for specs in by_key.values():
        parts = rec.cands[specs[0][0]]
        first = [rec.values[specs[0]](p) for p in parts]
        for s in specs[1:]:
            assert [rec.values[s](p) for p in parts] == first, (specs[0], s)


def test_prune_keeps_the_same_parts_as_the_plain_filter(tmp_path) -> None:
    """The batched prune keeps exactly the parts a plain per-part Pareto filter keeps (same groups, same ties)."""
    from planner.solver.prune import prune

    rec = _recorded(tmp_path)
    got = prune(rec, {"gpu": lambda g: g.chip})
    for cat, parts in rec.cands.items():
        specs = [s for s in rec.values if s[0] == cat]
        eq = [s for s in specs if rec.model.direction(s) == 0]
        signed = [(s, rec.model.direction(s)) for s in specs if rec.model.direction(s) != 0]
        groups: dict = {}
        for i, p in enumerate(parts):
            key = tuple(rec.values[s](p) for s in eq) + ((p.chip,) if cat == "gpu" else ())
            groups.setdefault(key, []).append(i)
        kept = []
        for members in groups.values():
            vecs = np.array([[(-rec.values[s](parts[i]) if d > 0 else rec.values[s](parts[i])) for s, d in signed]
                             for i in members], dtype=np.int64).reshape(len(members), len(signed))
            order = np.lexsort(vecs.T[::-1]) if len(signed) else np.arange(len(members))
            dom = one_at_a_time(vecs, order)
            kept += [members[j] for j in range(len(members)) if not dom[j]]
        assert [p.id for p in got[cat]] == [parts[i].id for i in sorted(kept)], cat
