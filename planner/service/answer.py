"""The typed answer to one request: what `describe()` returns and every front end reads; JSON only at the edge.

One `BuildSummary` is the headline of a build wherever a list of builds appears (each plan, the side-by-side
table, the GPU counts tried), with its sweep hours counted one way for the whole answer and labelled so: "runs
left" when the request says how many runs remain (--runs-left), else "all runs". `Answer.model_dump(mode="json")`
is `planner recommend --json`; the plans keep the keys plan files are read with (planner.plan_view).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, SerializationInfo, model_serializer

from planner.perf.sweep import Estimate, sweep_time
from planner.plan_view import GpuSummary, PlanView
from planner.request import Request

_FROZEN = ConfigDict(frozen=True, arbitrary_types_allowed=True)
Counted = Literal["all runs", "runs left"]


def counted(req: Request) -> Counted:
    """What every sweep figure of the answer counts: the runs still to do when the request says, else all runs."""
    return "runs left" if req.runs_left is not None and req.runs_left != req.runs else "all runs"


def runs_counted(req: Request) -> int:
    return req.runs_left or req.runs


class Money(BaseModel):
    model_config = _FROZEN

    amount: Decimal
    currency: str


class Hours(BaseModel):
    """An estimate in hours with the speed model's range: fast end (low), slow end (high)."""

    model_config = _FROZEN

    value: float
    low: float
    high: float

    @classmethod
    def of(cls, est: Estimate, digits: int = 2) -> "Hours":
        return cls(value=round(est.value, digits), low=round(est.low, digits), high=round(est.high, digits))

    @staticmethod
    def text(h: float) -> str:
        """One wording of hours for the CLI and every tab: '45 min', '5.2 h', '3.1 days'."""
        from planner.service.sweep_report import hours_text

        return hours_text(h)


class BuildPart(BaseModel):
    """One line of a build named beside its headline (the side-by-side table lists each build's parts)."""

    model_config = _FROZEN

    category: str
    id: str
    name: str
    quantity: int
    verified: bool


class BuildSummary(BaseModel):
    """A build's headline, the one shape of every list of builds: GPUs, total, power limit, speed basis, sweep
    hours (the planned sweep, planner.perf.planned_sweep: runs per GPU within VRAM, waves; `sweep_counts` says
    whether all runs or the runs left), one run's hours and sustained draw."""

    model_config = _FROZEN

    role: Optional[str] = None  # in the side-by-side table: recommended, best 1-GPU, your target, ...
    gpu: GpuSummary
    total: Money
    power_limit: float
    speedup: float  # one GPU's speed over a GTX 1080 Ti (the estimate)
    speedup_basis: str
    sweep_hours: float
    sweep_hours_low: float
    sweep_hours_high: float
    sweep_runs: int
    sweep_counts: Counted
    hours_per_run: float
    sustained_w: Optional[int] = None
    runs_sharing_each_gpu: Optional[dict[str, Any]] = None  # when several runs share each GPU in the sweep
    parts: Optional[list[BuildPart]] = None  # in the side-by-side table: the build's parts (verified or not)

    @property
    def label(self) -> str:
        """'2 x RTX 5090' or 'RTX 5090'."""
        return f"{self.gpu.count} x {self.gpu.name}" if self.gpu.count > 1 else self.gpu.name

    @property
    def key(self) -> tuple[str, int, float, str, str]:
        """What makes two summaries the same build: chip, count, power limit and total."""
        return (self.gpu.chip, self.gpu.count, self.power_limit, str(self.total.amount), self.total.currency)

    def sweep_text(self) -> str:
        """'sweep 4.9 h (all runs)', '2.4 h (4 runs left)'."""
        what = "all runs" if self.sweep_counts == "all runs" else f"{self.sweep_runs} runs left"
        return f"sweep {self.sweep_hours:.1f} h ({what})"


def sharing_of(plan: Any, req: Request, planned: Any = None) -> Optional[dict[str, Any]]:
    """How many runs share each GPU in a plan's planned sweep (`planned`, when already computed), when several do
    (their gain measured or estimated), with the same runs one per GPU and, for an estimated gain, with no gain."""
    from planner.perf.planned_sweep import plan_sweep

    planned = planned if planned is not None else plan_sweep(plan, req)
    if planned.sharing is None:
        return None
    alone = plan_sweep(plan, req, gain=1.0).sweep if planned.estimated_gain else None
    sp = plan.speed
    one = sweep_time(runs_counted(req), req.baseline_hours,
                     Estimate(sp.value, min(sp.low, sp.value), max(sp.high, sp.value), sp.basis), plan.gpu_count).wall
    return {**planned.sharing.to_json(), "wall_hours": planned.wall.to_json(2), "one_run_per_gpu_hours": one.to_json(2),
            **({"no_gain_hours": alone.wall.to_json(2)} if alone else {})}


def summarize(plan: Any, req: Request, role: Optional[str] = None, *, parts: bool = False) -> BuildSummary:
    """The headline of a solver Plan under the request: its planned sweep over the runs the answer counts (the
    figure the solver ranked it on), with the runs sharing each GPU where they do; `parts` lists its parts."""
    from planner.perf.planned_sweep import plan_sweep

    planned = plan_sweep(plan, req)
    wall, per_run = planned.wall, planned.sweep.per_run
    sizing = plan.report.sizing
    lines = None
    if parts:
        lines = [BuildPart(category=ln.category, id=ln.part_id, name=ln.name, quantity=ln.quantity,
                           verified=ln.verified) for ln in plan.view().parts]
    return BuildSummary(
        role=role, gpu=GpuSummary(chip=plan.chip.id, name=plan.gpu_name, count=plan.gpu_count,
                                  vram_gb=float(plan.gpu.vram_gb)),
        total=Money(amount=plan.total, currency=plan.currency), power_limit=float(plan.power_fraction),
        speedup=round(float(plan.speed.value), 3), speedup_basis=plan.speed.basis, sweep_hours=round(wall.value, 2), sweep_hours_low=round(wall.low, 2),
        sweep_hours_high=round(wall.high, 2), sweep_runs=runs_counted(req), sweep_counts=counted(req),
        hours_per_run=round(per_run.value, 2), sustained_w=None if sizing is None else int(sizing.sustained_w),
        runs_sharing_each_gpu=sharing_of(plan, req, planned), parts=lines)


class AssumedModel(BaseModel):
    """Which model size the speed figures are for: the user's, or the workload's typical size (said so)."""

    model_config = _FROZEN

    params: float
    assumed: bool
    workload: str
    precision: str
    basis: str

    @classmethod
    def of(cls, workload: str, precision: str, model_params: Optional[float]) -> "AssumedModel":
        """The user's model size, or the workload class's typical size (said so)."""
        from planner.service.sweep_report import assumed_model

        return assumed_model(workload, precision, model_params)

    def params_text(self) -> str:
        """'15 M', '1.3 B'."""
        from planner.service.sweep_report import params_text

        return params_text(self.params)

    def phrase(self) -> str:
        """'a 15 M-parameter transformer (amp)', with ', typical size assumed' when the user gave none."""
        from planner.service.sweep_report import model_phrase

        return model_phrase(self)


class Finish(BaseModel):
    model_config = _FROZEN

    value: Optional[str] = None
    low: Optional[str] = None
    high: Optional[str] = None


class SweepReport(BaseModel):
    """A plan's sweep in the user's terms: runs counted, hours, rounds and the finish on the clock (or in days
    beyond a year), from `start`."""

    model_config = _FROZEN

    runs: int
    runs_left: int
    counts: Counted
    baseline_hours_per_run: float
    gpu_count: int
    rounds: int
    hours_per_run: Hours
    wall_hours: Hours
    start: str
    finish: Finish
    finish_days: Hours
    runs_sharing_each_gpu: Optional[dict[str, Any]] = None

    @classmethod
    def estimate(cls, speed: float, low: float, high: float, **options: Any) -> "SweepReport":
        """The sweep of a build the solver did not plan (a shared or hand-picked one, the user's own card):
        planner.service.sweep_report.sweep_report (runs, baseline_hours, gpu_count, runs_left, chip, ...)."""
        from planner.service.sweep_report import sweep_report

        return sweep_report(speed, low, high, **options)

    def finish_text(self, key: str = "value") -> str:
        """When the sweep ends: 'tomorrow 03:10' within a year, else 'in 412 days'."""
        from planner.service.sweep_report import finish_text

        return finish_text(self, key)

    def finish_sentence(self) -> str:
        """'6 of 8 runs left: about 5.2 h, done today 20:48 (19:12 to 22:50) if started now'."""
        from planner.service.sweep_report import finish_sentence

        return finish_sentence(self)

    def shared_sentence(self) -> Optional[str]:
        """What running several runs on each GPU gives (None when the sweep runs one per GPU)."""
        from planner.service.sweep_report import shared_sentence

        return shared_sentence(self.runs_sharing_each_gpu) if self.runs_sharing_each_gpu else None


class PlannedBuild(BaseModel):
    """One plan of the answer: its typed view (parts, prices, speed, power, findings, notes), its sweep and its
    headline. JSON: the plan's own keys (plan files read them), plus `sweep` and `summary`."""

    model_config = _FROZEN

    view: PlanView
    sweep: SweepReport
    summary: BuildSummary

    def headline(self) -> str:
        """'2 x RTX 5090 build, EUR 9 000.00, 2.9x a GTX 1080 Ti per GPU (5.8x sweep throughput)'."""
        from planner.money import format_money

        v, n = self.view, self.summary.gpu.count
        speed = f"{v.speed.value:.1f}x a GTX 1080 Ti"  # type: ignore[union-attr]
        if n > 1:
            speed += f" per GPU ({v.speed.value * n:.1f}x sweep throughput)"  # type: ignore[union-attr]
        return f"{self.summary.label} build, {format_money(v.total, v.currency)}, {speed}"

    @property
    def psu_needed_w(self) -> Optional[float]:
        """The rating the build needs (ATX 3.x sizing, never below the GPU vendor's figure)."""
        b = (self.view.power.breakdown if self.view.power else None) or {}
        need = max(b.get("required_atx3_w") or 0, b.get("vendor_floor_w") or 0)
        return need or (self.view.power.recommended_psu_w if self.view.power else None)

    @model_serializer(mode="plain")
    def _flat(self, info: SerializationInfo) -> dict[str, Any]:
        mode = "json" if info.mode_is_json() else "python"
        return {**self.view.to_json(), "sweep": self.sweep.model_dump(mode=mode),
                "summary": self.summary.model_dump(mode=mode)}


class SideBySide(BaseModel):
    """Builds whose sweep ranges overlap the recommendation's, and what would decide between them."""

    model_config = _FROZEN

    builds: list[BuildSummary]
    too_close_to_call: bool
    what_would_decide: list[str]
    target_missing: Optional[str] = None


class Trial(BaseModel):
    """Try before you buy: the cheapest dated rental of a candidate card (or its nearest), the cost of a 30-minute
    measurement, the steps, and the answer's builds it would measure (`builds`, the same summaries as the plans')."""

    model_config = _FROZEN

    gpu: str
    rent: str
    exact_card: bool
    nearest_because: Optional[str] = None
    provider: str
    offer: str
    gpus_per_instance: int
    price_per_gpu_hour: Money
    price_observed_on: str
    price_source: str
    price_note: Optional[str] = None
    minutes: int
    cost: Money
    steps: list[str]
    sentence: str
    for_gpus: list[str]
    builds: list[BuildSummary] = []


class TriedOption(BaseModel):
    """One GPU count and power limit the solver tried: its status and, when it found one, its best build."""

    model_config = _FROZEN

    gpus: int
    power_limit: float
    status: str
    build: Optional[BuildSummary] = None


class SolveStats(BaseModel):
    model_config = _FROZEN

    candidates: Optional[int] = None
    after_pruning: Optional[int] = None
    runs: Optional[int] = None
    baseline_hours: Optional[float] = None
    models_built: Optional[int] = None
    solves: Optional[int] = None
    unverified_only: bool = False
    by_gpu_count: list[TriedOption] = []


class WhyNotAnswer(BaseModel):
    model_config = _FROZEN

    conflicts: list[str]
    suggestions: list[str]
    catalog_gaps: Optional[list[str]] = None


class OwnedNotUsed(BaseModel):
    """An owned part the plan leaves out: why, and the warnings that, once accepted, would let the solver keep it."""

    model_config = _FROZEN

    id: str
    name: str
    reason: str
    accept: list[str] = []

    def sentence(self, flag: Optional[str] = "--accept-warning") -> str:
        """'AMD Ryzen 5 5600G (owned) not used: ...; to keep it, accept --accept-warning cpu_cores_per_gpu'; with
        `flag=None` the warnings are named in plain words (the UI's 'Warnings I accept')."""
        from planner.service.owned import rule_summary

        text = f"{self.name} (owned) not used: {self.reason}"
        if self.accept:
            how = (" ".join(f"{flag} {r}" for r in self.accept) if flag
                   else ", ".join(repr(rule_summary(r)) for r in self.accept))
            text += f"; to keep it, accept {how}"
        return text


class Answer(BaseModel):
    """Everything one request's answer says, typed: the request (names resolved), the model size assumed, the
    plans, the side-by-side table, try-before-you-buy rentals, why nothing fits, owned parts left out, and the
    solve's statistics. Readers use the fields; `model_dump(mode="json")` is the JSON."""

    model_config = _FROZEN

    status: str
    request: Request
    model: AssumedModel
    notes: list[str]
    plans: list[PlannedBuild]
    side_by_side: Optional[SideBySide] = None
    try_before_you_buy: list[Trial] = []
    why_not: Optional[WhyNotAnswer] = None
    owned_not_used: list[OwnedNotUsed] = []
    solve_seconds: float
    stats: SolveStats
    profile: Optional[dict[str, Any]] = None  # which workload the answer describes (planner.service.profile)
    given_prices: list[dict[str, Any]] = []  # parts priced on a figure a person gave

    def builds(self) -> list[BuildSummary]:
        """Every build summary the answer shows, in every list (plans, side by side, GPU counts tried, rentals)."""
        out = [p.summary for p in self.plans]
        out += list(self.side_by_side.builds) if self.side_by_side else []
        out += [t.build for t in self.stats.by_gpu_count if t.build is not None]
        out += [b for t in self.try_before_you_buy for b in t.builds]
        return out

    @property
    def views(self) -> list[PlanView]:
        return [p.view for p in self.plans]
