"""The one Request: everything a user can ask (budget, goal, workload, sweep, GPUs, parts, policies), validated once.

The CLI builds it from its options, the web UI from its widgets, and a share token serialises it; the
service pipeline (planner.service) and the solver take it as it is.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from planner.errors import InputError, validation_field, validation_message
from planner.money import CurrencyCode, parse_decimal, read_budget_fields
from planner.vocab import Precision, Workload

from planner.settings import (MAX_MACHINE_W, DEFAULT_ALTERNATIVES, DEFAULT_BASELINE_HOURS, DEFAULT_MIN_STORAGE_GB, DEFAULT_RUNS,
                              MAX_ALTERNATIVES, MAX_GPUS, POWER_FRACTION_MAX, POWER_FRACTION_MIN)



class Request(BaseModel):
    """A validated request; every field a user can set. Build with `Request.parse(**raw)` at the edge."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    budget: Optional[Decimal] = None
    currency: CurrencyCode = "EUR"
    mode: Literal["best", "cheapest"] = "best"
    goal: Literal["expert", "minimum"] = "expert"  # expert: spend what is left on build quality; minimum: no
    min_vram_gb: Optional[float] = Field(default=None, ge=0, le=1024)
    min_ram_gb: Optional[int] = Field(default=None, ge=0, le=100_000)  # None: sized from the workload (ram_for_workload)
    min_storage_gb: int = Field(default=DEFAULT_MIN_STORAGE_GB, ge=0, le=10_000_000)
    require_nvme: bool = True
    owned: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    excluded_brands: tuple[str, ...] = ()  # board makers: the brand on the box (PNY, ASUS, NVIDIA for a Founders Edition)
    excluded_chip_makers: tuple[str, ...] = ()  # GPU chip makers; service.capacity.with_chip_makers_excluded applies it
    cooler_type: Optional[Literal["air", "aio"]] = None
    max_wall_w: Optional[int] = Field(default=None, gt=0, le=MAX_MACHINE_W)
    min_speedup: Optional[float] = Field(default=None, ge=0, le=10_000)
    deadline_hours: Optional[float] = Field(default=None, ge=1 / 60, le=1_000_000)  # a minute .. a century
    # which end of the sweep's range the solver holds to the deadline; the pipeline asks for the slow end first and
    # falls back to the estimate, saying so (planner.service.uncertainty.deadline_at_slow_end)
    deadline_at: Literal["estimate", "slow end"] = "estimate"
    runs: int = Field(default=DEFAULT_RUNS, ge=1, le=10_000)
    runs_left: Optional[int] = Field(default=None, ge=1, le=10_000)  # None: the whole sweep is still to run
    baseline_hours: float = Field(default=DEFAULT_BASELINE_HOURS, ge=1 / 3600, le=100_000)
    gpu_count: Optional[int] = Field(default=None, ge=1, le=MAX_GPUS)  # None: the solver decides 1..max_gpus
    max_gpus: int = Field(default=MAX_GPUS, ge=1, le=MAX_GPUS)
    power_fraction: float = Field(default=POWER_FRACTION_MAX, ge=POWER_FRACTION_MIN, le=POWER_FRACTION_MAX)
    suggest_power_limit: bool = True  # at stock power, also try 80 % and 70 % limits for several GPUs
    # ... but only when the user opts in: a limit set with nvidia-smi -pl resets at reboot, so PSU and transient
    # sizing hold at stock board power unless the user says they will keep a limit set (issue 26)
    allow_power_limit: bool = False
    workload: Workload = "transformer"
    precision: Precision = "amp"
    model_params: Optional[float] = Field(default=None, gt=0, le=1e13)  # None: the class's typical size
    run_vram_gb: Optional[float] = Field(default=None, gt=0, le=1024)  # one run's VRAM (nvidia-smi); None: memfit
    used: Literal["none", "gpu", "all"] = "none"  # which categories may take used offers (opt in: issue 26)
    avoid_warnings: bool = True
    # unknown is not yes: a part whose PSU-cable, connector or slot data is missing is left out; when only such parts
    # make a build (an imported catalog), the build comes back with what to verify as a checklist, unless strict
    strict: bool = False
    alternatives: int = Field(default=DEFAULT_ALTERNATIVES, ge=0, le=MAX_ALTERNATIVES)  # more plans, each around another GPU chip
    accepted_warnings: tuple[str, ...] = ()  # warning rule names the solver may break (e.g. cpu_cores_per_gpu)

    @model_validator(mode="before")
    @classmethod
    def _typed_budget(cls, data: object) -> object:
        return read_budget_fields(data)  # '7k', '7 000 €', '$7,500'; the text's currency fills an unset one

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, v: object) -> object:
        if v is None:
            return None
        d = parse_decimal(v, "budget")
        if d <= 0:
            raise InputError(f"budget must be positive, got {v}")
        if d > Decimal("10000000"):
            raise InputError(f"budget {v} is not plausible for one workstation")
        return d

    @model_validator(mode="after")
    def _mode(self) -> "Request":
        both = [p for p in self.pinned if p in set(self.excluded)]
        if both:  # no build can hold and leave out a part: bad input, not "nothing fits"
            raise InputError(f"{both[0]} is both pinned and excluded; drop one of --pin and --exclude for it")
        if self.runs_left is not None and self.runs_left > self.runs:
            raise InputError(f"runs left ({self.runs_left}) cannot exceed the runs in the sweep ({self.runs})")
        for name in ("min_vram_gb", "min_speedup", "deadline_hours", "baseline_hours"):
            v = getattr(self, name)
            if v is not None and not math.isfinite(v):
                raise InputError(f"{name.replace('_', ' ')} must be a finite number")
        return self

    @classmethod
    def parse(cls, **raw: Any) -> "Request":
        """Validate raw user values; any error becomes one InputError line."""
        from pydantic import ValidationError

        try:
            return cls(**raw)
        except ValidationError as exc:
            cause = exc.errors()[0].get("ctx", {}).get("error")
            if isinstance(cause, InputError):
                raise cause from None
            raise InputError(validation_message(exc, "request"), field=validation_field(exc)) from None

    def check_plannable(self) -> None:
        """A request the solver can answer: best mode needs a budget (a shared build's inputs may have none)."""
        if self.mode == "best" and self.budget is None:
            raise InputError("best mode needs a budget (e.g. --budget 7000), or use --mode cheapest")

    def accepts(self, warning: str) -> bool:
        """May the solver break this warning rule: the user accepted it, or gave the figure it estimates (--min-ram
        replaces the workload's RAM estimate)."""
        return warning in self.accepted_warnings or (warning == "ram_for_workload" and self.min_ram_gb is not None)

    def gpu_counts(self) -> list[int]:
        """The GPU counts the solver tries: the user's fixed count, else 1..max_gpus."""
        return [self.gpu_count] if self.gpu_count is not None else list(range(1, self.max_gpus + 1))

    def required_speedup(self, gpu_count: Optional[int] = None) -> Optional[float]:
        """Minimum per-GPU speedup vs the baseline implied by min_speedup and/or the sweep deadline."""
        need = self.min_speedup
        n = gpu_count or self.gpu_count or 1
        if self.deadline_hours is not None:
            rounds = math.ceil((self.runs_left or self.runs) / n)  # the deadline is for what is left
            by_deadline = rounds * self.baseline_hours / self.deadline_hours
            need = max(need or 0.0, by_deadline)
        return need
