"""Dominance pruning: drop a part when another of its category is no worse on every attribute a rule or
the objective reads, and no dearer. Directions come from the recorded constraints themselves."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import numpy as np

from planner.solver.encoder import RecordingEncoder


BLOCK = 256  # candidates tested against the front at once (issue 11: 3.5-4.5x faster than one at a time)
FRONT_CHUNK = 1024  # front rows per comparison, to bound memory at BLOCK x FRONT_CHUNK x columns


def pareto_dominated(vecs: np.ndarray, order: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Which rows some other row is no worse than in every column (lower is better). Rows are visited in
    lexicographic `order`, so a dominating row always comes first; ties keep the first. Dominance is transitive,
    so comparing with every earlier row of the block (kept or not) finds the same rows as comparing with the front."""
    n, d = vecs.shape
    dominated = np.zeros(n, dtype=bool)
    front = np.empty((0, d), dtype=vecs.dtype)
    for start in range(0, n, block):
        idx = order[start:start + block]
        blk = vecs[idx]
        dom = np.zeros(len(idx), dtype=bool)
        for f0 in range(0, len(front), FRONT_CHUNK):
            fr = front[f0:f0 + FRONT_CHUNK]
            dom |= np.all(fr[None, :, :] <= blk[:, None, :], axis=2).any(axis=1)
        earlier = np.tril(np.all(blk[None, :, :] <= blk[:, None, :], axis=2), k=-1)  # [i, k]: row k <= row i, k < i
        dom |= earlier.any(axis=1)
        dominated[idx] = dom
        front = np.concatenate([front, blk[~dom]])
    return dominated


def prune(
    rec: RecordingEncoder,
    extra_eq: dict[str, Callable[[Any], Hashable]],
    keep_ids: Iterable[str] = (),
) -> dict[str, list[Any]]:
    """Pareto-filter each category; parts in `keep_ids` (pinned, owned) always stay."""
    keep = set(keep_ids)
    out: dict[str, list[Any]] = {}
    for cat, parts in rec.cands.items():
        specs = [s for s in rec.values if s[0] == cat]
        eq = [rec.values[s] for s in specs if rec.model.direction(s) == 0]
        signed = [(rec.values[s], rec.model.direction(s)) for s in specs if rec.model.direction(s) != 0]
        key_extra = extra_eq.get(cat)
        groups: dict[tuple, list[int]] = {}
        for i, p in enumerate(parts):
            key = tuple(f(p) for f in eq) + ((key_extra(p),) if key_extra else ())
            groups.setdefault(key, []).append(i)
        kept: list[int] = []
        for members in groups.values():
            if len(members) == 1:
                kept.extend(members)
                continue
            # lower is better in every column: negate "higher is better" attributes
            vecs = np.array([[(-f(parts[i]) if d > 0 else f(parts[i])) for f, d in signed] for i in members],
                            dtype=np.int64).reshape(len(members), len(signed))
            order = np.lexsort(vecs.T[::-1]) if len(signed) else np.arange(len(members))
            dominated = pareto_dominated(vecs, order)
            kept.extend(members[j] for j in range(len(members))
                        if not dominated[j] or parts[members[j]].id in keep)
        out[cat] = [parts[i] for i in sorted(kept)]
    return out
