"""Defaults and bounds a user can change, defined once: the CLI's options, the web UI's widgets, the Request and the solver read them here."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Optional, get_args

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
# A model given only by its size (`planner memfit --params`, the sweep's memory floor): a typical batch and sequence.
TYPICAL_BATCH, TYPICAL_SEQ = 8, 512
DEFAULT_MIN_STORAGE_GB = 2000  # 2 TB NVMe: datasets, checkpoints and a venv or two (docs/solver.md)

# The GPU temperature the doctor calls hot: GPU Boost's temperature target on Pascal, where clocks start to drop
# (docs/doctor.md §4.1). The burn-in warns from it; nvidia-smi readers count samples at or above it.
GPU_HOT_C = 83.0

# GPUs a log or a rented cluster may name (nvidia-smi logs, `planner sweep --count`, a burn-in plan): a sanity
# bound on what a file or flag says, not a build size. Rented GPUs: the most `planner costs` considers by default.
MAX_GPUS_SEEN = 64
# The most a workstation can draw, in W (a wall cap, --wall-power, --draw-w): beyond this a value is a typo, not a PC.
MAX_MACHINE_W = 100_000
DEFAULT_MAX_RENTED_GPUS = 8

# The planner's version, defined here once: pyproject reads it ([tool.setuptools.dynamic]), `planner --version` prints
# it and the HTTP clients (price pages, ECB rates) send it in their User-Agent.
VERSION = "0.1.0"
USER_AGENT = f"planner/{VERSION} (+https://github.com/planner; price research)"

# Where the people you share a build with open the planner (the deployed web UI, see README "Share with a friend"):
# $PLANNER_PUBLIC_URL (PLANNER_BASE_URL is read too, its older name). There is no default: a link to localhost opens
# nothing on a friend's machine, so without one a share says so and gives the token or a file instead.
PUBLIC_URL_ENV = ("PLANNER_PUBLIC_URL", "PLANNER_BASE_URL")
ENV_PREFIX = "PLANNER_"

if TYPE_CHECKING:  # the class is built on first use: `planner --version` loads no pydantic (tests/test_cli_lazy.py)
    from pathlib import Path

    class Settings:  # noqa: D101 - the shape of _settings_class()'s answer, for type checkers
        home: Optional[Path]
        data_dir: Optional[Path]
        fx_dir: Optional[Path]
        http_cache: Optional[Path]
        price_db: Optional[Path]
        public_url: Optional[str]


@lru_cache(maxsize=1)
def _settings_class() -> type:
    """The pydantic-settings model of every PLANNER_* variable (the class is cached; its values never are)."""
    from pathlib import Path

    from pydantic import AliasChoices, Field, field_validator
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class Settings(BaseSettings):
        """The user's PLANNER_* environment (see current(): read per call, so a monkeypatched PLANNER_HOME holds)."""

        model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore", frozen=True)

        home: Optional[Path] = None  # the user's state: price history, profile, calibration, FX copy, caches
        data_dir: Optional[Path] = None  # a catalog directory instead of the shipped data/
        fx_dir: Optional[Path] = None  # where `planner fx refresh` stores its copy (default: <home>/fx)
        http_cache: Optional[Path] = None  # the price fetcher's HTTP cache file (default: <cache>/http-cache.sqlite)
        price_db: Optional[Path] = None  # the price history (default: <home>/prices.sqlite)
        public_url: Optional[str] = Field(None, validation_alias=AliasChoices(*PUBLIC_URL_ENV))

        @field_validator("home", "data_dir", "fx_dir", "http_cache", "price_db", mode="before")
        @classmethod
        def _a_path(cls, v: object) -> object:
            if isinstance(v, str) and not v.strip():
                raise ValueError("is not a path")
            return v

        @field_validator("data_dir")
        @classmethod
        def _a_directory(cls, v: Optional[Path]) -> Optional[Path]:
            if v is not None and not v.is_dir():
                raise ValueError("is not a directory (a catalog folder with the CSV files of data/)")
            return v

        @field_validator("public_url")
        @classmethod
        def _an_address(cls, v: Optional[str]) -> Optional[str]:
            v = (v or "").strip()
            if v and not v.lower().startswith(("http://", "https://")):
                raise ValueError("must start with http:// or https://")
            return v or None

    return Settings


def current() -> "Settings":
    """The PLANNER_* environment as it is now, validated; a bad value is one InputError line naming the variable."""
    import os

    return _validated(tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX))))


@lru_cache(maxsize=8)
def _validated(snapshot: tuple[tuple[str, str], ...]) -> "Settings":
    """Settings for one snapshot of the PLANNER_* variables: a changed variable is a new key, so every call still sees
    the environment as it is (a failure is never cached); building the model costs about 1.6 ms, a lookup under 0.1 ms."""
    import os

    from pydantic import ValidationError

    try:
        return _settings_class()()
    except ValidationError as exc:
        from planner.errors import InputError

        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else ""
        names = [n for n in PUBLIC_URL_ENV if os.environ.get(n, "").strip()] if field in ("public_url", *PUBLIC_URL_ENV) \
            else [ENV_PREFIX + field.upper()]
        name = names[0] if names else field
        value = os.environ.get(name, "")
        why = str(err.get("msg", "is not valid")).removeprefix("Value error, ")
        raise InputError(f"{name}={value[:60]!r} {why}") from None


def __getattr__(name: str) -> Any:
    if name == "Settings":
        return _settings_class()
    raise AttributeError(f"module 'planner.settings' has no attribute {name!r}")


def public_url() -> "Optional[str]":
    """The configured public address of the web UI (http or https), or None when none is set."""
    return current().public_url


def is_local_address(url: "Optional[str]") -> bool:
    """An address only this computer can open (localhost, 127.x, ::1, 0.0.0.0)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url or "").hostname or "").lower()
    return host in ("", "localhost", "0.0.0.0", "::1") or host.startswith("127.") or host.endswith(".localhost")
