"""Page inputs <-> widget state: read the sidebar into the one Request, write a shared build's Request back."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, MutableMapping, Optional

from planner.service import Catalog
from planner.errors import PlannerError, ShareError
from planner.request import Request
from planner.settings import (CHIP_MAKERS, DEFAULT_BASELINE_HOURS, DEFAULT_RUNS, MAX_ALTERNATIVES, MAX_GPUS, POWER_FRACTION_MAX,
                              POWER_FRACTION_MIN, UI_ALTERNATIVES)

CURRENCIES = ("EUR", "USD", "GBP", "CHF", "SEK", "PLN", "CAD", "JPY")
# widget key -> default value (0 in a number widget means "no constraint")
DEFAULTS: dict[str, Any] = {
    "in_budget": "7000",  # typed as people write it: 7k, 7 000 €, 7000 EUR (planner.money.read_amount)
    "in_currency": "EUR",
    "in_mode": "best",
    "in_goal": "expert",
    "in_hours": DEFAULT_BASELINE_HOURS,
    "in_runs": DEFAULT_RUNS,
    "in_runs_left": 0,  # 0 = all runs still to do
    "in_precision": "amp",
    "in_workload": "transformer",
    "in_model_m": 0.0,
    "in_min_vram": 0.0,
    "in_deadline": 0.0,
    "in_owned": [],
    "in_pinned": [],
    "in_excluded": [],
    "in_brands": [],
    "in_chip_makers": [],
    "in_cooler": "any",
    "in_max_wall": 0,
    "in_gpus": 0,  # 0: the planner decides 1..MAX_GPUS
    "in_power": round(POWER_FRACTION_MAX * 100),
    "in_allow_limit": False,  # size the PSU for an 80/70 % GPU power limit (the user keeps it set)
    "in_used": "none",
    "in_accept": [],  # warning rule names the solver may break
    "in_alts": UI_ALTERNATIVES,
    "in_parts_open": False,  # the part lists and maker filters are drawn when opened
    "in_more_open": False,  # constraints and preferences likewise
    "profile_run_vram": None,  # (model params, GiB per run) from the stored profile
}

# Sidebar inputs drawn only when their switch is on (in_parts_open, in_more_open); the switch names what is set.
PART_LISTS = {"in_owned": "owned", "in_pinned": "required", "in_excluded": "left out", "in_brands": "board makers out",
              "in_chip_makers": "chip makers out"}
MORE = ("in_min_vram", "in_deadline", "in_cooler", "in_used", "in_gpus", "in_max_wall", "in_power", "in_allow_limit",
        "in_alts", "in_accept")


def chosen_parts(ss: MutableMapping[str, Any]) -> dict[str, int]:
    """How many entries each part list and maker filter holds (the 'Parts and makers' switch says so)."""
    return {k: len(ss.get(k) or []) for k in PART_LISTS}


def changed_settings(ss: MutableMapping[str, Any]) -> list[str]:
    """The constraints and preferences set away from the page's defaults."""
    return [k for k in MORE if ss.get(k, DEFAULTS[k]) != DEFAULTS[k]]


def ensure_defaults(ss: MutableMapping[str, Any]) -> None:
    """The widgets' first values: the user's stored workload profile (planner profile) where it has one, else the
    defaults; `profile_note` says which (the sidebar shows it)."""
    if "profile_note" not in ss:
        start_from_profile(ss)
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = list(value) if isinstance(value, list) else value


PROFILE_KEYS = {"model_params": "in_model_m", "workload": "in_workload", "precision": "in_precision",
                "runs": "in_runs", "baseline_hours": "in_hours", "owned": "in_owned"}


def start_from_profile(ss: MutableMapping[str, Any]) -> None:
    """Fill the workload inputs from the stored profile (through planner.service), once per session."""
    from planner.service import profile_store

    try:
        applied = profile_store().apply(model_params=None, workload=None, precision=None, runs=None, baseline_hours=None,
                                run_vram_gb=None, owned=())
    except PlannerError as exc:  # a broken profile file: say so, start from the defaults
        ss["profile_note"] = str(exc)
        return
    ss["profile_note"] = applied.note
    for field in applied.from_profile:
        if field in PROFILE_KEYS and PROFILE_KEYS[field] not in ss:
            value = applied.values[field]
            ss[PROFILE_KEYS[field]] = (float(value) / 1e6 if field == "model_params" else list(value)
                                       if field == "owned" else float(value) if field == "baseline_hours" else value)
    if applied.values.get("run_vram_gb") is not None and applied.values.get("model_params") is not None:
        ss["profile_run_vram"] = (float(applied.values["model_params"]), float(applied.values["run_vram_gb"]))


# Inputs that are not drawn on every run: the other tabs' (only the open tab is drawn) and the sidebar's part lists
# (drawn when opened). Streamlit drops the value of a widget a run did not draw; writing these back at the top of
# each run keeps them (buttons and file uploaders cannot be written: the Doctor keeps its uploaded files aside).
TAB_INPUTS = (*DEFAULTS, "cloud_sweeps", "cloud_all", "import_text", "share_base", "price_part", "price_give_amount",
              "price_give_shop", "price_give_url", "price_give_date", "price_give_force", "plan_give_part", "plan_give_amount",
              "plan_give_shop", "plan_give_url", "plan_give_date", "plan_give_force", "doc_events_text",
              "doc_tgp", "doc_cpu", "doc_psu", "doc_gpu", "doc_steps", "doc_busy")
TAB_INPUT_PREFIXES = ("chk_",)
NOT_WRITABLE = ("chk_open",)


def keep_inputs(ss: MutableMapping[str, Any]) -> None:
    for key in list(ss.keys()):
        if (key in TAB_INPUTS or key.startswith(TAB_INPUT_PREFIXES)) and key not in NOT_WRITABLE:
            ss[key] = ss[key]


def inputs_from_state(ss: MutableMapping[str, Any]) -> Request:
    """The widget values as the Request (ShareError one-liner when a value is out of range)."""
    g = lambda k: ss.get(k, DEFAULTS[k])  # noqa: E731
    opt = lambda v: None if not v else v  # noqa: E731 - 0 means "no constraint" in the widgets
    model_m = opt(float(g("in_model_m")))
    try:
        return _parse(g, opt, model_m)
    except ShareError:
        raise
    except PlannerError as exc:
        raise ShareError(str(exc)) from None


def _parse(g: Any, opt: Any, model_m: Optional[float]) -> Request:
    return Request.parse(
        budget=(str(g("in_budget")).strip() or None) if g("in_mode") == "best" else None, currency=g("in_currency"),
        mode=g("in_mode"), goal=g("in_goal"), workload=g("in_workload"), precision=g("in_precision"), runs=int(g("in_runs")),
        baseline_hours=float(g("in_hours")), model_params=model_m * 1e6 if model_m else None,
        runs_left=opt(int(g("in_runs_left"))),
        min_vram_gb=opt(float(g("in_min_vram"))),
        deadline_hours=opt(float(g("in_deadline"))), owned=tuple(g("in_owned")), pinned=tuple(g("in_pinned")),
        excluded=tuple(g("in_excluded")), excluded_brands=tuple(g("in_brands")),
        excluded_chip_makers=tuple(g("in_chip_makers")),
        cooler_type=None if g("in_cooler") == "any" else g("in_cooler"), max_wall_w=opt(int(g("in_max_wall"))),
        gpu_count=int(g("in_gpus")) or None, power_fraction=int(g("in_power")) / 100, used=g("in_used"),
        allow_power_limit=bool(g("in_allow_limit")),
        alternatives=int(g("in_alts")), accepted_warnings=tuple(g("in_accept")),
        run_vram_gb=_run_vram(g, model_m),
    )


def _run_vram(g: Any, model_m: Optional[float]) -> Optional[float]:
    """The profile's VRAM per run, while the model size is still the profile's (else memfit decides)."""
    try:
        params, gib = g("profile_run_vram")
    except (KeyError, TypeError, ValueError):
        return None
    return gib if model_m is not None and abs(model_m * 1e6 - params) <= 1e-6 * params else None


# widget key -> (min, max) of the number widgets (ui.widgets); a shared value outside is clamped.
RANGES: dict[str, tuple[float, float]] = {
    "in_hours": (0.1, 10_000.0), "in_runs": (1, 10_000), "in_runs_left": (0, 10_000),
    "in_model_m": (0.0, 1_000_000.0), "in_min_vram": (0.0, 1024.0), "in_deadline": (0.0, 100_000.0),
    "in_max_wall": (0, 10_000), "in_gpus": (0, MAX_GPUS), "in_power": (round(POWER_FRACTION_MIN * 100), round(POWER_FRACTION_MAX * 100)), "in_alts": (0, MAX_ALTERNATIVES),
}


def apply_inputs(ss: MutableMapping[str, Any], inputs: Request, cat: Optional[Catalog] = None) -> None:
    """Put a shared build's inputs into the widgets (before the widgets are drawn, or from a callback).
    Values are clamped to the widgets' ranges; ids and brands the catalog lacks are dropped."""
    if cat is not None:
        brands = {p.brand for p in cat.parts.values()}
        known = lambda ids: tuple(i for i in ids if i in cat.parts)  # noqa: E731
        inputs = inputs.model_copy(update={
            "owned": known(inputs.owned), "pinned": known(inputs.pinned), "excluded": known(inputs.excluded),
            "excluded_brands": tuple(b for b in inputs.excluded_brands if b in brands)})
    ss["in_budget"] = budget_text(inputs.budget) if inputs.budget is not None else DEFAULTS["in_budget"]
    ss["in_currency"] = inputs.currency if inputs.currency in CURRENCIES else "EUR"
    ss["in_mode"] = inputs.mode
    ss["in_goal"] = inputs.goal
    ss["in_hours"] = float(inputs.baseline_hours)
    ss["in_runs"] = int(inputs.runs)
    ss["in_runs_left"] = int(inputs.runs_left or 0)
    ss["in_precision"] = inputs.precision
    ss["in_workload"] = inputs.workload
    ss["in_model_m"] = float(inputs.model_params / 1e6) if inputs.model_params else 0.0
    ss["in_min_vram"] = float(inputs.min_vram_gb or 0.0)
    ss["in_deadline"] = float(inputs.deadline_hours or 0.0)
    ss["in_owned"] = list(inputs.owned)
    ss["in_pinned"] = list(inputs.pinned)
    ss["in_excluded"] = list(inputs.excluded)
    ss["in_brands"] = list(inputs.excluded_brands)
    ss["in_chip_makers"] = [m for m in inputs.excluded_chip_makers if m in CHIP_MAKERS]
    ss["in_cooler"] = inputs.cooler_type or "any"
    ss["in_max_wall"] = int(inputs.max_wall_w or 0)
    ss["in_gpus"] = int(inputs.gpu_count or 0)
    ss["in_power"] = int(round(inputs.power_fraction * 100))
    ss["in_allow_limit"] = bool(inputs.allow_power_limit)
    ss["in_used"] = inputs.used
    # how many alternatives to show is the viewer's choice: a link asking none (a Request's default, e.g. one made
    # by the CLI) keeps the page's own setting
    ss["in_alts"] = int(inputs.alternatives) or int(ss.get("in_alts", DEFAULTS["in_alts"]))
    ss["in_accept"] = list(inputs.accepted_warnings)
    for key, (low, high) in RANGES.items():
        ss[key] = type(DEFAULTS[key])(min(max(ss[key], low), high))
    ss["in_parts_open"] = any(chosen_parts(ss).values())  # a shared build shows what it sets
    ss["in_more_open"] = bool(changed_settings(ss))  # after clamping: what the widgets will show


def budget_text(amount: Decimal) -> str:
    """7000.00 -> '7000', 7000.50 -> '7000.50': what the budget box shows for a shared amount."""
    return f"{amount:.0f}" if amount == amount.to_integral_value() else f"{amount:.2f}"


def same_inputs(a: Request, b: Request) -> bool:
    return a.model_dump(mode="json") == b.model_dump(mode="json")
