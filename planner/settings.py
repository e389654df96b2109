"""Defaults and bounds a user can change, defined once: the CLI's options, the web UI's widgets, the Request and the solver read them here."""

from __future__ import annotations

from typing import Literal, Mapping, Optional, get_args

# The solver: one time limit for every front end (the CLI's --time-limit default, the web UI, the service).
SOLVER_TIME_LIMIT_S = 10.0
SOLVER_WORKERS = 2  # CP-SAT search workers: the 2-core machine this is built and tested on

# GPUs in one build: a consumer or HEDT board hosts at most four double-slot cards on CPU lanes.
MAX_GPUS = 4
# Plans besides the best one, each around another GPU chip (the CLI's --alternatives, the UI's default).
DEFAULT_ALTERNATIVES = 0
UI_ALTERNATIVES = 2  # the web UI shows two by default: a person browsing compares; a script asks for what it needs
MAX_ALTERNATIVES = 10

# GPU power limit as a fraction of stock board power (nvidia-smi -pl): the range users may set, and the limits the
# solver also tries for several GPUs when the user opts in (hardware-facts §4.2: 70-80 % of stock power keeps most
# of the throughput).
POWER_FRACTION_MIN, POWER_FRACTION_MAX = 0.5, 1.0
SUGGESTED_POWER_LIMITS = (0.8, 0.7)

# GPU chip makers: the catalog's chip records, and the makers a user may leave out (--exclude-chip-maker; the UI).
ChipMaker = Literal["NVIDIA", "AMD", "Intel"]
CHIP_MAKERS: tuple[str, ...] = get_args(ChipMaker)

# The user story's sweep (../shared/facts/user-story.md): 8 seeds of about 7 h each on the GTX 1080 Ti. Every
# command and the UI start from it, so a plan, a sweep time and a rent-or-buy answer describe the same work.
DEFAULT_RUNS, DEFAULT_BASELINE_HOURS = 8, 7.0
DEFAULT_MIN_STORAGE_GB = 2000  # 2 TB NVMe: datasets, checkpoints and a venv or two (docs/solver.md)

# The GPU temperature the doctor calls hot: GPU Boost's temperature target on Pascal, where clocks start to drop
# (docs/doctor.md §4.1). The burn-in warns from it; nvidia-smi readers count samples at or above it.
GPU_HOT_C = 83.0

# Where the people you share a build with open the planner (the deployed web UI, see README "Share with a friend"):
# $PLANNER_PUBLIC_URL (PLANNER_BASE_URL is read too, its older name). There is no default: a link to localhost opens
# nothing on a friend's machine, so without one a share says so and gives the token or a file instead.
PUBLIC_URL_ENV = ("PLANNER_PUBLIC_URL", "PLANNER_BASE_URL")


def public_url(environ: "Optional[Mapping[str, str]]" = None) -> "Optional[str]":
    """The configured public address of the web UI (http or https), or None when none is set."""
    import os

    env = os.environ if environ is None else environ
    for name in PUBLIC_URL_ENV:
        value = (env.get(name) or "").strip()
        if value:
            if not value.lower().startswith(("http://", "https://")):
                from planner.errors import InputError

                raise InputError(f"{name}={value[:60]!r} must start with http:// or https://")
            return value
    return None


def is_local_address(url: "Optional[str]") -> bool:
    """An address only this computer can open (localhost, 127.x, ::1, 0.0.0.0)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url or "").hostname or "").lower()
    return host in ("", "localhost", "0.0.0.0", "::1") or host.startswith("127.") or host.endswith(".localhost")
