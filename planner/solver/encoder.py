"""Encoders the rules talk to: one builds the CP-SAT model, one records which attributes matter and how.

Both expose the same calls (`attr`, `has`, `power`, ...), so each rule's single `encode()` drives the
real model and the dominance pruning alike. The recording encoder works out from the constraints
themselves whether an attribute is better low, high, or must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

import numpy as np
from ortools.sat.python import cp_model

from planner.catalog.models import GpuChip
from planner.compat.power import REST_FLOOR_W, rest_linear_w, training_cpu_w
from planner.compat.rules.base import CASE_FANS, PERMISSIVE, cooler_fans, cooler_pumps, gpu_power_w

AttrFn = Callable[[Any], Optional[float]]


def _value(fn: AttrFn, part: Any, unknown: float) -> int:
    v = fn(part)
    if v is None:
        return int(unknown)
    return int(v) if not isinstance(v, bool) else int(v)


def _indicator(pred: Callable[[Any], Optional[bool]], part: Any, unknown: bool) -> int:
    v = pred(part)
    return int(unknown if v is None else bool(v))


# ---- recording ------------------------------------------------------------------------------

Spec = tuple[str, Hashable]  # (category, key)


class Term:
    """A symbolic linear expression: spec -> sign of its coefficient."""

    def __init__(self, signs: Optional[dict[Spec, set[int]]] = None):
        self.signs = signs or {}

    @staticmethod
    def of(x: Any) -> "Term":
        return x if isinstance(x, Term) else Term()

    def _merge(self, other: Any, flip: bool) -> "Term":
        out = {k: set(v) for k, v in self.signs.items()}
        for k, v in Term.of(other).signs.items():
            out.setdefault(k, set()).update({-s for s in v} if flip else v)
        return Term(out)

    def scaled(self, k: float) -> "Term":
        if k == 0:
            return Term()
        return Term({s: ({-x for x in v} if k < 0 else set(v)) for s, v in self.signs.items()})

    __add__ = __radd__ = lambda self, o: self._merge(o, False)  # noqa: E731
    __sub__ = lambda self, o: self._merge(o, True)  # noqa: E731
    __rsub__ = lambda self, o: self.scaled(-1)._merge(o, False)  # noqa: E731
    __mul__ = __rmul__ = lambda self, k: self.scaled(k)  # noqa: E731
    __neg__ = lambda self: self.scaled(-1)  # noqa: E731

    def __le__(self, o: Any) -> "Rel":
        return Rel(self - o, eq=False)

    def __ge__(self, o: Any) -> "Rel":
        return Rel(Term.of(o) - self, eq=False)

    def __eq__(self, o: Any) -> "Rel":  # type: ignore[override]
        return Rel(self - o, eq=True)

    __hash__ = None  # type: ignore[assignment]

    def Not(self) -> "Term":  # noqa: N802 - mirrors cp_model
        return self


@dataclass
class Rel:
    """A recorded constraint `expr <= 0` (or == 0)."""

    expr: Term
    eq: bool

    def OnlyEnforceIf(self, *lits: Any) -> "Rel":  # noqa: N802 - mirrors cp_model
        return self


@dataclass
class Recorder:
    """Collects, per (category, attribute), the directions in which constraints use it."""

    directions: dict[Spec, set[int]] = field(default_factory=dict)  # -1 low better, +1 high better, 0 equal
    fns: dict[Spec, tuple[Callable[[Any], int]]] = field(default_factory=dict)

    def note(self, rel: Rel) -> Rel:
        for spec, signs in rel.expr.signs.items():
            dirs = self.directions.setdefault(spec, set())
            if rel.eq:
                dirs.add(0)
            else:  # expr <= 0: a positive coefficient wants the value low
                dirs.update(-1 if s > 0 else 1 for s in signs)
        return rel

    def Add(self, rel: Any) -> Any:  # noqa: N802 - mirrors cp_model
        return self.note(rel) if isinstance(rel, Rel) else rel

    def direction(self, spec: Spec) -> int:
        d = self.directions.get(spec, {0})
        return next(iter(d)) if len(d) == 1 else 0


class BaseEncoder:
    """Shared state: gpu count, power limit, chips and candidate parts per category."""

    def __init__(self, candidates: dict[str, list[Any]], chips: dict[str, GpuChip], gpu_count: int,
                 power_fraction: float, workload: str = "transformer", precision: str = "amp",
                 model_params: Optional[float] = None, pinned: frozenset[str] = frozenset()):
        self.cands = candidates
        self.pinned = pinned
        self.workload, self.precision, self.model_params = workload, precision, model_params
        self.chips = chips
        self.gpu_count = gpu_count
        self.power_fraction = power_fraction
        self._power: Optional[dict[str, Any]] = None
        self._front: Any = None
        self.trusted: set[str] = set()  # parts whose unknown safety/fit data a strict rule let pass (pinned or trusted)

    def candidates(self, category: str) -> list[Any]:
        return self.cands[category]

    def strict(self, category: str, fn: AttrFn, fail: int, passing: int = PERMISSIVE) -> Any:
        """An attribute whose unknown value rules the part out (`fail`), unless the user pinned the part: for
        rules that decide safety or fit, unknown is not yes (docs/solver.md). A pinned part's unknown value is
        `passing`, the value that cannot refute the rule (as the checker reports it: unverified)."""
        def value(p: Any) -> Optional[float]:
            v = fn(p)
            if v is not None:
                return v
            if p.id in self.pinned:
                self.trusted.add(p.id)
                return passing
            return fail
        return self.attr(category, value)

    def power(self) -> dict[str, Any]:
        """Sustained draw terms (hardware-facts §1.7), built from the same per-part figures as the checker."""
        if self._power is None:
            gpu_w = self.gpu_count * self.attr("gpu", lambda g: gpu_power_w(g, self.chips, self.power_fraction))
            cpu_w = self.attr("cpu", lambda c: c.power_w)
            lin = rest_linear_w(self.attr("memory", lambda m: m.modules), 1,
                                CASE_FANS + self.attr("cooler", cooler_fans), self.attr("cooler", cooler_pumps))
            rest = self._floor(lin, REST_FLOOR_W)
            train = gpu_w + self.attr("cpu", lambda c: training_cpu_w(c.power_w)) + rest
            self._power = {"gpu_w": gpu_w, "cpu_w": cpu_w, "rest_w": rest, "sustained_w": gpu_w + cpu_w + rest,
                           "training_w": train}
        return self._power


_PLAIN = (int, float, str, bool, type(None))


def fn_key(fn: Any) -> Hashable:
    """What a column's function computes, as far as can be told without calling it: its code, its defaults and what
    it closes over (functions by their own key, plain values by value, anything else by identity). Two rules that
    read the same attribute the same way (the same lambda run twice) share one key, so the column is evaluated once."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ("id", id(fn))

    def part(v: Any) -> Hashable:
        if isinstance(v, _PLAIN):
            return (type(v).__name__, v)
        if callable(v) and hasattr(v, "__code__"):
            return fn_key(v)
        return ("id", id(v))
    cells = tuple(part(c.cell_contents) for c in (fn.__closure__ or ()))
    return (code, tuple(part(d) for d in (fn.__defaults__ or ())), cells)


class RecordingEncoder(BaseEncoder):
    """Runs rules without a model, to learn each attribute's direction for dominance pruning."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.model = Recorder()
        self.values: dict[Spec, Callable[[Any], int]] = {}
        self.keys: dict[Spec, Hashable] = {}  # specs with one key compute the same column (prune evaluates it once)
        self.raw: dict[Spec, tuple[str, Callable[[Any], Any], int]] = {}  # (kind, rule's function, unknown value)
        self._n = 0

    def _spec(self, category: str, fn: Callable[[Any], int], kind: str, raw: Callable[[Any], Any], unknown: int) -> Term:
        self._n += 1
        spec = (category, self._n)
        self.values[spec] = fn
        self.raw[spec] = (kind, raw, unknown)
        self.keys[spec] = (category, kind, fn_key(raw), unknown)
        return Term({spec: {1}})

    def column(self, spec: Spec, parts: list[Any]) -> np.ndarray:
        """values[spec] over `parts` as int64, without a wrapper call per part (prune's hot loop at 100k parts)."""
        kind, fn, unknown = self.raw[spec]
        got = list(map(fn, parts))
        if kind == "has":
            return np.array([unknown if v is None else bool(v) for v in got], dtype=np.int64).reshape(len(parts))
        return np.array([unknown if v is None else int(v) for v in got], dtype=np.int64).reshape(len(parts))

    def attr(self, category: str, fn: AttrFn, unknown: float = PERMISSIVE) -> Term:
        return self._spec(category, lambda p: _value(fn, p, unknown), "attr", fn, int(unknown))

    def has(self, category: str, pred: Callable[[Any], Optional[bool]], unknown: bool = True) -> Term:
        return self._spec(category, lambda p: _indicator(pred, p, unknown), "has", pred, int(bool(unknown)))

    def bool_var(self, name: str) -> Term:
        return Term()

    def model_bool(self, expr: Any) -> Term:
        # A literal derived from attributes gates constraints in unknown ways: its inputs must match.
        self.model.note(Rel(Term.of(expr), eq=True))
        return Term()

    def front_radiator(self) -> Term:
        return Term()

    def _floor(self, expr: Any, floor: int) -> Any:
        return expr


class ModelEncoder(BaseEncoder):
    """Builds the CP-SAT model: one literal per candidate part, exactly one per category."""

    def __init__(self, *args: Any, share: Optional["ModelEncoder"] = None, **kw: Any):
        super().__init__(*args, **kw)
        self.trust: Optional[cp_model.IntVar] = None  # set: a strict rule's unknown data passes when this literal holds
        self.unverifiable: set[str] = set()  # parts a strict rule refuses on unknown data unless `trust` holds
        if share is not None:  # another GPU count or power limit over the same model and part literals
            self.model, self.x = share.model, share.x
            self._cp = share._cp
            return
        self.model = cp_model.CpModel()
        self._cp = self.model  # the model itself (self.model may become a Gate while rules are encoded)
        self.x: dict[str, list[cp_model.IntVar]] = {
            cat: [self.model.NewBoolVar(f"{cat}[{p.id}]") for p in parts] for cat, parts in self.cands.items()
        }
        for cat, lits in self.x.items():
            self.model.AddExactlyOne(lits)

    def strict(self, category: str, fn: AttrFn, fail: int, passing: int = PERMISSIVE) -> Any:
        """With a `trust` literal, a part's unknown value is `fail` unless the literal holds, then `passing`: the
        strict attribute plus (passing - fail) x [an unknown part is chosen and trust is on], exact because one part
        per category is chosen. One model then answers both the strict request and its trusting relaxation; with
        trust off the correction is fixed at 0 by presolve, so a strict solve pays nothing for it."""
        if self.trust is None:
            return super().strict(category, fn, fail, passing)
        expr = super().strict(category, fn, fail, passing)
        unknown = [lit for p, lit in zip(self.cands[category], self.x[category])
                   if p.id not in self.pinned and fn(p) is None]
        if not unknown:
            return expr
        self.unverifiable.update(p.id for p in self.cands[category] if p.id not in self.pinned and fn(p) is None)
        trusted = self._cp.NewBoolVar(f"trusted unknown {category}")  # an unknown part chosen while trust is on
        picked = cp_model.LinearExpr.Sum(unknown)
        self._cp.Add(trusted <= picked)
        self._cp.AddImplication(trusted, self.trust)
        self._cp.Add(trusted >= picked + self.trust - 1)
        return expr + (passing - fail) * trusted

    def attr(self, category: str, fn: AttrFn, unknown: float = PERMISSIVE) -> Any:
        parts, lits = self.cands[category], self.x[category]
        coeffs = [_value(fn, p, unknown) for p in parts]
        return cp_model.LinearExpr.WeightedSum(lits, coeffs)

    def has(self, category: str, pred: Callable[[Any], Optional[bool]], unknown: bool = True) -> Any:
        parts, lits = self.cands[category], self.x[category]
        chosen = [lit for p, lit in zip(parts, lits) if _indicator(pred, p, unknown)]
        return cp_model.LinearExpr.Sum(chosen) if chosen else 0

    def bool_var(self, name: str) -> cp_model.IntVar:
        return self.model.NewBoolVar(name)

    def model_bool(self, expr: Any) -> Any:
        b = self.model.NewBoolVar("derived")
        self.model.Add(b == expr)
        return b

    def front_radiator(self) -> cp_model.IntVar:
        if self._front is None:
            self._front = self.model.NewBoolVar("radiator_at_front")
        return self._front

    def _floor(self, expr: Any, floor: int) -> Any:
        v = self.model.NewIntVar(floor, 10**6, "rest_of_platform_w")
        self.model.AddMaxEquality(v, [expr, floor])
        return v

    def chosen(self, solver: cp_model.CpSolver) -> dict[str, Any]:
        return {cat: next(p for p, lit in zip(self.cands[cat], lits) if solver.BooleanValue(lit))
                for cat, lits in self.x.items()}
