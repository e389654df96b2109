"""The user's workload profile (`planner profile`): their model and sweep, stored under PLANNER_HOME, used by default.

Every command that describes the user's work (recommend, speedup, sweep, costs, the web UI) starts from it; a flag
given on the command line wins over the stored value, and every answer says which it used: "profile: stored in
PATH (...)" or "default: ... assumed". Validated at the edge (pydantic), written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.errors import InputError
from planner.resources import user_data_dir
from planner.validation import load_json, read_text_capped
from planner.vocab import Precision, Workload

PROFILE_NAME = "profile.json"


class Profile(BaseModel):
    """What the user trains: model, step, precision, sweep, VRAM per run, owned parts. Every field optional."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model_params: Optional[float] = Field(default=None, gt=0, le=1e13)
    workload: Optional[Workload] = None
    precision: Optional[Precision] = None
    seq_len: Optional[int] = Field(default=None, ge=1, le=10_000_000)
    batch: Optional[int] = Field(default=None, ge=1, le=1_000_000)  # sequences (samples) per step, per GPU
    tokens_per_step: Optional[int] = Field(default=None, ge=1, le=10_000_000_000)
    runs: Optional[int] = Field(default=None, ge=1, le=10_000)
    hours_per_run: Optional[float] = Field(default=None, gt=0, le=100_000)  # on the GTX 1080 Ti
    run_vram_gb: Optional[float] = Field(default=None, gt=0, le=1024)
    run_vram_source: Optional[str] = Field(default=None, max_length=300)  # "measured: ..." or "estimate: ..."
    owned: tuple[str, ...] = Field(default=(), max_length=20)
    updated: Optional[date] = None

    def is_empty(self) -> bool:
        return not any(v not in (None, ()) for k, v in self.model_dump().items() if k not in ("updated",))

    def summary(self) -> str:
        """'15 M-parameter transformer (amp), seq 512 x batch 8, 8 runs x 7 h, 3.2 GiB per run (estimate)'."""
        bits = []
        if self.model_params is not None:
            p = self.model_params
            size = f"{p / 1e9:.3g} B" if p >= 1e9 else f"{p / 1e6:.3g} M"
            bits.append(f"{size}-parameter {self.workload or 'transformer'}" + (f" ({self.precision})" if self.precision else ""))
        elif self.workload or self.precision:
            bits.append(" ".join(x for x in (self.workload, f"({self.precision})" if self.precision else None) if x))
        if self.seq_len or self.batch:
            bits.append(" x ".join(x for x in (f"seq {self.seq_len}" if self.seq_len else None,
                                                f"batch {self.batch}" if self.batch else None) if x))
        if self.tokens_per_step:
            bits.append(f"{self.tokens_per_step:,} tokens per step".replace(",", " "))
        if self.runs or self.hours_per_run:
            bits.append(f"{self.runs or '?'} runs x {self.hours_per_run:g} h" if self.hours_per_run
                        else f"{self.runs} runs")
        if self.run_vram_gb:
            how = (self.run_vram_source or "given").split(":")[0]
            bits.append(f"{self.run_vram_gb:.1f} GiB per run ({how})")
        if self.owned:
            bits.append("owns " + ", ".join(self.owned))
        return ", ".join(bits) or "empty"


def profile_path() -> Path:
    return user_data_dir() / PROFILE_NAME


def load_profile(path: Optional[Path] = None) -> Optional[Profile]:
    """The stored profile, validated; None when there is none; a broken file is a one-line error with the fix."""
    path = path or profile_path()
    if not path.exists():
        return None
    try:
        return Profile.model_validate(load_json(read_text_capped(path, what="profile"), str(path)))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{path}: not a valid profile ({where}: {first['msg']}); fix it or run "
                         "`planner profile clear`") from None


def save_profile(profile: Profile, path: Optional[Path] = None) -> Path:
    """Write atomically (a temporary file in the same directory, then rename): a crash leaves the old profile."""
    path = path or profile_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(profile.model_dump(mode="json", exclude_none=True), indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def clear_profile(path: Optional[Path] = None) -> bool:
    """Delete the stored profile; whether there was one."""
    path = path or profile_path()
    if not path.exists():
        return False
    path.unlink()
    return True


def updated(current: Optional[Profile], changes: dict[str, Any], today: Optional[date] = None) -> Profile:
    """`current` with the given (non-None) fields changed, validated; a VRAM per run measured or given is kept unless
    replaced; with a model size, batch and sequence length and no VRAM per run, memfit estimates one."""
    base = current.model_dump() if current is not None else {}
    base.update({k: v for k, v in changes.items() if v is not None})
    base["updated"] = today or date.today()
    try:
        prof = Profile.model_validate(base)
    except ValidationError as exc:
        from planner.errors import validation_message

        raise InputError(validation_message(exc, "profile")) from None
    estimated = (prof.run_vram_source or "").startswith("estimate")
    if prof.model_params and prof.batch and prof.seq_len and (prof.run_vram_gb is None or estimated) \
            and "run_vram_gb" not in {k for k, v in changes.items() if v is not None}:
        from planner.perf.memfit import ModelShape, assume_typical, estimate_memory

        shape, _ = assume_typical(ModelShape(params=prof.model_params, precision=prof.precision or "amp",
                                             batch=prof.batch, seq_len=prof.seq_len))
        gib = estimate_memory(shape).total_gib
        prof = prof.model_copy(update={"run_vram_gb": round(gib, 2), "run_vram_source": (
            f"estimate: planner memfit for batch {prof.batch} x seq {prof.seq_len}, typical shape")})
    return prof


# ---- applying it -------------------------------------------------------------------------------------------------

DEFAULTS = {"workload": "transformer", "precision": "amp"}


@dataclass
class Applied:
    """The values a command runs with (flag, else profile, else default) and the sentence saying which it used."""

    values: dict[str, Any]
    note: str
    source: str  # "profile" | "default"
    from_profile: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "note": self.note, "from_profile": list(self.from_profile)}


def apply(**given: Any) -> Applied:
    """Fill each field the user left unset (None) from the stored profile, then the default. Fields: model_params,
    workload, precision, runs, baseline_hours, run_vram_gb, owned. `baseline_hours` left None means: the calibrated
    GTX 1080 Ti run, else the default (the caller resolves it)."""
    prof = load_profile()
    from_prof = {"model_params": "model_params", "workload": "workload", "precision": "precision", "runs": "runs",
                 "baseline_hours": "hours_per_run", "run_vram_gb": "run_vram_gb", "owned": "owned"}
    values, used = {}, []
    for key, value in given.items():
        if value is not None and value != () and value != []:
            values[key] = value
            continue
        stored = getattr(prof, from_prof[key]) if prof is not None else None
        if stored not in (None, ()):
            values[key] = stored
            used.append(key)
        else:
            values[key] = DEFAULTS.get(key, () if key == "owned" else None)
    if ("run_vram_gb" in used and "model_params" in given and given["model_params"] is not None and prof is not None
            and given["model_params"] != prof.model_params and (prof.run_vram_source or "").startswith("estimate")):
        values["run_vram_gb"] = None  # estimated for the stored model, not for the size given on the command line
        used.remove("run_vram_gb")
    if prof is not None and not prof.is_empty():
        note = f"profile: stored in {profile_path()} ({prof.summary()})"
        if not used:
            note += "; every value given on the command line instead"
        return Applied(values, note, "profile", used)
    return Applied(values, _default_note(values), "default")


def _default_note(values: dict[str, Any]) -> str:
    if values.get("model_params") is not None:
        return ("default: no stored profile (your model size from the command line); store your workload with "
                "`planner profile set`")
    from planner.perf.model import load_perf_model

    wl = values.get("workload") or "transformer"
    typical = float(load_perf_model().typical_params(wl))
    size = f"{typical / 1e9:.3g} B" if typical >= 1e9 else f"{typical / 1e6:.3g} M"
    return (f"default: typical {size} {wl} model assumed; store yours once with `planner profile set --model-params "
            "N ...` (or give --model-params)")


def peak_memory_gib(text: str, source: str) -> float:
    """One run's VRAM from an nvidia-smi log (`--query-gpu=timestamp,index,memory.used --format=csv -l 5`) of that
    run alone on its card: the peak of `memory.used` over the GPUs (MiB in the log, GiB returned)."""
    import csv
    import io
    import re

    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise InputError(f"{source}: empty nvidia-smi log")
    header = [h.strip().lower() for h in rows[0]]
    col = next((i for i, h in enumerate(header) if h.startswith("memory.used")), None)
    if col is None:
        raise InputError(f"{source}: no memory.used column; log it with nvidia-smi "
                         "--query-gpu=timestamp,index,memory.used --format=csv -l 5")
    unit_gib = "[gib]" in header[col]
    peak = 0.0
    for row in rows[1:]:
        if len(row) <= col:
            continue
        m = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(MiB|GiB)?", row[col])
        if m:
            v = float(m.group(1))
            gib = v if (m.group(2) == "GiB" or (m.group(2) is None and unit_gib)) else v / 1024
            peak = max(peak, gib)
    if peak <= 0:
        raise InputError(f"{source}: no memory.used reading above 0 in the log")
    return round(peak, 2)
