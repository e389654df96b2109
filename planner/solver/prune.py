"""Dominance pruning: drop a part when another of its category is no worse on every attribute a rule or
the objective reads, and no dearer. Directions come from the recorded constraints themselves."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import numpy as np

from planner.solver.encoder import RecordingEncoder


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
            front = np.empty_like(vecs)
            size = 0
            for j in order:
                v = vecs[j]
                if size and np.any(np.all(front[:size] <= v, axis=1)):
                    if parts[members[j]].id in keep:
                        kept.append(members[j])
                    continue
                front[size] = v
                size += 1
                kept.append(members[j])
        out[cat] = [parts[i] for i in sorted(kept)]
    return out
