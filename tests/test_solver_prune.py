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
