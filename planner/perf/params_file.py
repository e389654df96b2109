"""The schema of data/perf_params.json (written by `python -m planner.perf.fit --write`): checked before the speed
model reads it, so a hand edit or a truncated fit is one CatalogError line naming the field, not a traceback."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner import atomicfile
from planner.errors import CatalogError, validation_message

Number = Annotated[float, Field(allow_inf_nan=False, ge=-1e6, le=1e15)]
Share = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]
Positive = Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e15)]
REQUIRED = ("tensor_efficiency", "amp_memory_factor")  # PerfParams fields without a prior


class ParamsBlock(BaseModel):
    """The `params` block: workload shares, typical sizes, family offsets and every other fitted or prior number
    (extra keys, each a finite number); variant `average` keeps its members' numbers under `members`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    compute_share: dict[str, Share] = Field(default_factory=dict)  # variant `average`: in each member
    typical_params: dict[str, Positive] = Field(default_factory=dict)
    family_offsets: dict[str, tuple[Number, Number]] = Field(default_factory=dict)
    family_shares: dict[str, dict[str, Number]] = Field(default_factory=dict)  # variant `families`: per-family shares
    members: Optional[dict[str, dict[str, Any]]] = None

    @model_validator(mode="after")
    def _numbers(self) -> "ParamsBlock":
        for name, value in (self.model_extra or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number (got {str(value)[:40]!r})")
        if self.members is not None:
            if not self.members:
                raise ValueError("variant 'average' without members")
            shared = self.model_dump(exclude={"members"})
            for name, member in self.members.items():
                try:
                    ParamsBlock.model_validate({**shared, **member})
                except ValidationError as exc:
                    raise ValueError(f"member {name!r}: {validation_message(exc)}") from None
        else:
            if not self.compute_share:
                raise ValueError("compute_share is missing (re-create the file with the fit)")
            missing = [n for n in REQUIRED if n not in (self.model_extra or {})]
            if missing:
                raise ValueError(f"{missing[0]} is missing (re-create the file with the fit)")
        return self


class Range(BaseModel):
    model_config = ConfigDict(frozen=True)

    low: Positive
    high: Positive

    @model_validator(mode="before")
    @classmethod
    def _pair(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)) and len(data) == 2:
            return {"low": data[0], "high": data[1]}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> "Range":
        if not self.low <= self.high:
            raise ValueError(f"range [{self.low:g}, {self.high:g}] must have low <= high")
        return self


class TwoPoint(BaseModel):
    """The range of a re-anchored answer (python -m planner.perf.twopoint --write): measured/predicted band of
    re-anchored predictions on held-out sources, and the figures it was measured with."""

    model_config = ConfigDict(extra="allow", frozen=True)

    range: Range
    share: float = Field(gt=0, le=1)


class PerfParamsFile(BaseModel):
    """data/perf_params.json: `params`, `ranges` per error tier and precision group, and the fit's record (what it
    was fitted on, its errors) kept as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    params: ParamsBlock
    ranges: dict[str, dict[str, Range]] = Field(default_factory=dict)
    variant: Optional[str] = None
    fitted_on: Optional[str] = None
    size_widening_per_decade: float = Field(default=0.25, ge=0, le=10, allow_inf_nan=False)
    two_point: Optional[TwoPoint] = None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return (f"{where}: {err['msg'].removeprefix('Value error, ')}" if err["type"] == "value_error"
            else validation_message(exc))


def check_params_file(data: Any, path: Path | str) -> PerfParamsFile:
    """The validated file, or a CatalogError line naming the file and the field."""
    try:
        return PerfParamsFile.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(f"{path}: {_first_error(exc)}; re-create it with `python -m planner.perf.fit --write`"
                           ) from None


def write_params_file(doc: dict[str, Any], path: Path) -> Path:
    """Write what the fit made atomically (planner.atomicfile) once it passes the loader's check: a document the speed
    model would refuse (a NaN, a missing block), a crash or a full disk leaves the file in use as it was. A refusal is
    a CatalogError line, a file-system failure an InputError line."""
    try:
        PerfParamsFile.model_validate(doc)
        text = json.dumps(doc, indent=2, allow_nan=False) + "\n"  # a NaN in the fit's record is no JSON either
    except ValidationError as exc:
        raise CatalogError(f"the speed model would refuse this fit ({_first_error(exc)}); {path} left as it was"
                           ) from None
    except ValueError as exc:
        raise CatalogError(f"the fit is not plain JSON ({exc}); {path} left as it was") from None
    return atomicfile.write_bytes(path, text.encode("utf-8"), "the speed parameters",
                                  f"check {path.parent} is a writable directory with free space")
