"""Where files live: the shipped data (package `planner.data`, read with importlib.resources) and the user's state."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from planner.settings import current


def _shipped_root() -> Path:
    # data/ is installed as the package planner.data (pyproject maps it); a wheel unpacks it to disk, so the
    # traversable is a real directory and CSVs can be opened by path.
    return Path(str(files("planner.data")))


SHIPPED_DATA_DIR = _shipped_root()


def user_data_dir() -> Path:
    """The user's own state (price history, fetched FX rates): $PLANNER_HOME, else the platform's data dir."""
    home = current().home
    if home is not None:
        return home
    import platformdirs

    return Path(platformdirs.user_data_dir("planner"))


def user_cache_dir() -> Path:
    """Caches that may be deleted at any time (HTTP cache): $PLANNER_HOME/cache, else the platform's cache dir."""
    home = current().home
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("planner"))
