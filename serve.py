"""Serve the web UI warmed up: `streamlit run serve.py` imports planner, loads the catalog and speed model and
plans the default request before the server takes its first visitor (app.py is the page itself)."""

from __future__ import annotations

import asyncio
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import streamlit as st

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # `ui` sits beside this file, as for app.py


def warm_up() -> str:
    """Fill the caches a first visit needs (the same cached calls the page makes); returns one summary line."""
    from ui import services
    from ui.state import DEFAULTS, inputs_from_state

    start = time.perf_counter()
    request = inputs_from_state(dict(DEFAULTS)).model_dump_json()
    services.describe(request, services.catalog_key())  # loads the catalog, solves and reports, as the Plan tab does
    return f"planner: warmed up in {time.perf_counter() - start:.1f} s (catalog, speed model, default plan)"


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    # A failed warm-up must not keep the page down: the first visit then does the work and shows any error itself.
    try:
        print(await asyncio.to_thread(warm_up), file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - logged in one line; the page reports problems to the user
        print(f"planner: warm-up skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    yield


app = st.App(str(HERE / "app.py"), lifespan=lifespan)
