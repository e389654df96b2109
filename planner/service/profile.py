"""The user's workload profile (`planner profile`): their model and sweep, stored under PLANNER_HOME, used by default.

Every command that describes the user's work (recommend, speedup, sweep, costs, the web UI) starts from it; a flag
given on the command line wins over the stored value, and every answer says which it used: "profile: stored in
PATH (...)" or "default: ... assumed". Validated at the edge (pydantic), written atomically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner import atomicfile
from planner.errors import InputError
from planner.resources import user_data_dir
from planner.validation import load_json, read_text_capped
from planner.vocab import Precision, Workload

PROFILE_NAME = "profile.json"
PROFILE_WHAT = "the workload profile"


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
        raise atomicfile.invalid_error(path, exc, "profile", "planner profile clear") from None


def save_profile(profile: Profile, path: Optional[Path] = None) -> Path:
    """Write atomically under the profile's lock (planner.atomicfile): a crash leaves the old profile, a reader never
    sees half of one; a file-system error is one line."""
    path = path or profile_path()
    with atomicfile.locked(path, PROFILE_WHAT):
        return atomicfile.write_json(path, profile.model_dump(mode="json", exclude_none=True), PROFILE_WHAT)


def update_profile(change: Callable[[Optional[Profile]], Profile], path: Optional[Path] = None) -> Profile:
    """Read, change and write the profile under one lock (as the calibration store's update_store): two commands
    changing it at once both keep their change."""
    path = path or profile_path()
    with atomicfile.locked(path, PROFILE_WHAT):
        new = change(load_profile(path))
        atomicfile.write_json(path, new.model_dump(mode="json", exclude_none=True), PROFILE_WHAT)
    return new


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
        from planner.errors import validation_field, validation_message

        raise InputError(validation_message(exc, "profile"), field=validation_field(exc)) from None
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


# ---- filled from a training log -----------------------------------------------------------------------------------

LOG_FIELDS = ("model_params", "seq_len", "batch", "tokens_per_step", "run_vram_gb")


@dataclass
class LogOffer:
    """What a calibrated log says about the user's run, as profile fields, and what could not become one."""

    values: dict[str, Any]
    vram_source: Optional[str] = None
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """'124 M parameters, seq 1024, batch 12, 491 520 tokens per step, 9.9 GiB per run (peak memory)'."""
        v, bits = self.values, []
        if "model_params" in v:
            p = v["model_params"]
            bits.append(f"{p / 1e9:.3g} B parameters" if p >= 1e9 else f"{p / 1e6:.3g} M parameters")
        if "seq_len" in v:
            bits.append(f"seq {v['seq_len']}")
        if "batch" in v:
            bits.append(f"batch {v['batch']} per GPU")
        if "tokens_per_step" in v:
            bits.append(f"{v['tokens_per_step']:,} tokens per step".replace(",", " "))
        if "run_vram_gb" in v:
            bits.append(f"{v['run_vram_gb']:.1f} GiB per run (peak memory the log states)")
        return ", ".join(bits)


def offer_from_log(stated: dict[str, float], log_name: str, given: Optional[dict[str, Optional[float]]] = None
                   ) -> LogOffer:
    """Profile fields from the settings a training log states (`LogReading.stated`) and the figures given with it on
    the command line (`given`: tokens_per_step, seq_len, model_params; they win). A global batch or tokens per step
    over several processes is turned into one GPU's only when the log says how many processes ran."""
    s = {k: v for k, v in stated.items() if v}
    for k, v in (given or {}).items():
        if v:
            s[k] = float(v)
    values: dict[str, Any] = {}
    notes: list[str] = []
    procs = s.get("processes")
    if "model_params" in s:
        values["model_params"] = float(s["model_params"])
        if "trainable_params" in s and s["trainable_params"] < s["model_params"]:
            notes.append(f"only {s['trainable_params'] / 1e6:.3g} M of the parameters are trained (LoRA or frozen "
                         "layers): the model size is the whole model's, which sets the step's work")
    if "seq_len" in s:
        values["seq_len"] = int(round(s["seq_len"]))
    if "batch" in s:
        values["batch"] = int(round(s["batch"]))
    if "tokens_per_step" in s:
        tps = s["tokens_per_step"] / (procs or 1.0)
        values["tokens_per_step"] = int(round(tps))
        if procs and procs > 1:
            notes.append(f"tokens per step: the log's {s['tokens_per_step']:,.0f} over its {procs:g} processes")
    if "global_batch" in s and "batch" not in values:
        notes.append(f"the log's global batch of {s['global_batch']:g} samples is over all GPUs of that run: not "
                     "stored as your batch (set yours with `planner profile set --batch N`)")
    vram_source = None
    if "peak_mem_gib" in s and (procs or 1) == 1:
        values["run_vram_gb"] = round(float(s["peak_mem_gib"]), 2)
        vram_source = f"measured: peak memory stated in {Path(log_name).name}"
    return LogOffer(values, vram_source, notes)


def fill_from_log(current: Optional[Profile], offer: LogOffer, today: Optional[date] = None
                  ) -> tuple[Profile, dict[str, Any], dict[str, tuple[Any, Any]]]:
    """`current` with the fields it leaves unset filled from the log's offer: (profile, filled, kept), where kept
    maps each field the profile already had to (the profile's value, the log's value) when they differ. A stored
    value is never overwritten: `planner profile set` changes it."""
    filled, kept = {}, {}
    for k, v in offer.values.items():
        mine = getattr(current, k) if current is not None else None
        if current is None or mine is None or (k == "run_vram_gb"
                                               and (current.run_vram_source or "").startswith("estimate")):
            filled[k] = v
        elif mine != v:
            kept[k] = (mine, v)
    changes = dict(filled)
    if "run_vram_gb" in filled:
        changes["run_vram_source"] = offer.vram_source
    if "seq_len" in filled and "batch" in filled and "tokens_per_step" not in filled and (
            current is None or current.tokens_per_step is None):
        changes["tokens_per_step"] = filled["seq_len"] * filled["batch"]
        filled["tokens_per_step"] = changes["tokens_per_step"]
    prof = updated(current, changes, today) if changes else (current or Profile())
    return prof, filled, kept


def profile_from_log(stated: dict[str, float], log_name: str, save: bool,
                     given: Optional[dict[str, Optional[float]]] = None,
                     how_to_save: str = "`--save-profile`") -> tuple[str, dict[str, Any]]:
    """What `planner calibrate` and the web UI say and do with the settings a log states (and the figures given with
    it): offered, or with `save` filled into the profile's unset fields. (lines to add to the answer, JSON block)."""
    offer = offer_from_log(stated, log_name, given)
    block: dict[str, Any] = {"stated": offer.values, "notes": offer.notes, "saved": False}
    notes = "".join(f"\n  note: {n}" for n in offer.notes)
    if not offer.values:
        return ("\n  the log states no model size, sequence length, batch or tokens per step: your profile is unchanged "
                "(`planner profile set`)" if save else "") + notes, block
    if not save:
        return (f"\n  the log states: {offer.describe()}; {how_to_save} fills the unset fields of your profile "
                f"with them{notes}"), block
    path = profile_path()
    result: dict[str, Any] = {}  # what the locked update found: the profile, the fields filled and kept

    def fill(current: Optional[Profile]) -> Profile:
        result["prof"], result["filled"], result["kept"] = fill_from_log(current, offer)
        return result["prof"] if result["filled"] else (current or result["prof"])
    update_profile(fill)
    filled, kept = result["filled"], result["kept"]
    block.update(saved=bool(filled), filled=filled, kept={k: {"profile": a, "log": b} for k, (a, b) in kept.items()},
                 file=str(path))
    text = (f"\n  profile: filled {LogOffer(filled).describe()} from the log ({path})"
            if filled else f"\n  profile: nothing to fill, every field the log states is already set ({path})")
    text += "".join(f"\n  profile: kept your {k} = {a} (the log says {b}; `planner profile set` changes it)"
                    for k, (a, b) in kept.items())
    return text + notes, block


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


# ---- the user's actions (`planner profile set|show|clear`, the flags every command starts from) -------------------


def owned_ids(typed: Any) -> tuple[str, ...]:
    """The catalog ids of the parts a person says they own (ids or name fragments): an unknown or ambiguous one is
    one line naming it, never stored (a stored 'nan' would be taken as a part by every later answer)."""
    from planner.errors import UnknownPartError
    from planner.service.catalogs import load_priced_catalog

    catalog = load_priced_catalog()
    ids = []
    for query in typed:
        try:
            ids.append(catalog.find(str(query)).id)
        except UnknownPartError as exc:
            raise InputError(f"owned: {exc}", field="owned") from None
    return tuple(dict.fromkeys(ids))


def set_profile(changes: dict[str, Any], *, run_vram_log: Optional[Path] = None) -> tuple[Profile, Path]:
    """Change the given fields of the stored profile (None: keep the stored value); with `run_vram_log`, an nvidia-smi
    log of one run alone on its card, the VRAM per run is its peak memory.used (measured). The profile and its file."""
    if run_vram_log is not None:
        gib = peak_memory_gib(read_text_capped(run_vram_log, what="nvidia-smi log"), str(run_vram_log))
        changes = {**changes, "run_vram_gb": gib, "run_vram_source": f"measured: peak memory.used in {run_vram_log.name}"}
    if changes.get("owned"):  # each a catalog part, stored by id, as recommend and check resolve them
        changes = {**changes, "owned": owned_ids(changes["owned"])}
    return update_profile(lambda current: updated(current, changes)), profile_path()


def my_profile() -> tuple[Optional[Profile], Path]:
    """The stored profile (None: none stored) and its file."""
    return load_profile(), profile_path()


def forget_profile() -> tuple[bool, Path]:
    """Delete the stored profile (answers go back to the typical model): whether there was one, and its file."""
    path = profile_path()
    return clear_profile(path), path


class ProfileStore:
    """The stored profile as front ends use it (one use case): the values a command runs with, change, show, forget,
    and fill from a training log's stated settings."""

    def apply(self, **given: Any) -> Applied:
        return apply(**given)

    def change(self, changes: dict[str, Any], *, run_vram_log: Optional[Path] = None) -> tuple[Profile, Path]:
        return set_profile(changes, run_vram_log=run_vram_log)

    def mine(self) -> tuple[Optional[Profile], Path]:
        return my_profile()

    def forget(self) -> tuple[bool, Path]:
        return forget_profile()

    def from_log(self, stated: dict[str, float], log_name: str, save: bool,
                 given: Optional[dict[str, Optional[float]]] = None,
                 how_to_save: str = "`--save-profile`") -> tuple[str, dict[str, Any]]:
        return profile_from_log(stated, log_name, save, given, how_to_save)


def profile_store() -> ProfileStore:
    """The use case behind `planner profile`, the flags every command starts from and the UI's defaults."""
    return ProfileStore()
