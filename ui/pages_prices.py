"""Prices tab: the price history of a part from the SQLite store, or how to start one."""

from __future__ import annotations

from typing import Any, Optional

import altair as alt
import pandas as pd
import streamlit as st

from planner.catalog.load import Catalog
from planner.share import TYPE_LABELS


def history_frame(part_id: str) -> Optional[pd.DataFrame]:
    """Observations of a part (None when there is no price database yet)."""
    try:
        from planner.prices.store import PriceStore, default_path
    except ImportError:
        return None
    path = default_path()
    if not path.exists():
        return None
    store = PriceStore(path)
    try:
        rows = [o.to_json() for o in store.history(part_id)]
    finally:
        store.close()
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["price"] = frame["price"].astype(float)
        frame["observed_at"] = pd.to_datetime(frame["observed_at"])
    return frame


def offers_frame(cat: Catalog, part_id: str) -> pd.DataFrame:
    return pd.DataFrame([{"Price": f"{o.currency} {o.price}", "Condition": o.condition, "Retailer": o.retailer,
                          "Observed on": o.observed_on.isoformat(), "Source": o.source, "Note": o.note or "",
                          "Link": o.url} for o in cat.offers.get(part_id, [])])


def render(cat: Catalog, view: Optional[dict[str, Any]]) -> None:
    st.subheader("Price history")
    ids = sorted(cat.parts, key=lambda i: (list(TYPE_LABELS).index(cat.parts[i].category), cat.parts[i].name))
    default = 0
    if view is not None:
        gpu = next((ln.part_id for ln in view["build"].lines if ln.category == "gpu"), None)
        default = ids.index(gpu) if gpu in ids else 0
    part_id = st.selectbox("Part", ids, index=default, key="price_part",
                           format_func=lambda i: f"{TYPE_LABELS[cat.parts[i].category]}: {cat.parts[i].name}")
    frame = history_frame(part_id)
    if frame is None or frame.empty:
        st.info(f"No price history yet for {cat.parts[part_id].name}. Run `planner prices refresh` to fetch "
                "today's prices from the retailers (each run adds a dated observation), then reload this page.")
    else:
        trusted = frame[frame["status"] == "trusted"]
        chart = alt.Chart(frame).mark_line(point=True).encode(
            x=alt.X("observed_at:T", title="observed (UTC)"),
            y=alt.Y("price:Q", title="price", scale=alt.Scale(zero=False)),
            color=alt.Color("retailer:N"),
            strokeDash=alt.StrokeDash("status:N", title="status"),
            tooltip=["retailer", "price", "currency", "observed_at", "status", "reason", "route"],
        ).properties(height=320)
        st.altair_chart(chart, width="stretch")
        st.caption(f"{len(frame)} observations, {len(trusted)} trusted; suspect prices (sudden jumps, wrong "
                   "currency) are kept but not used until confirmed.")
        st.dataframe(frame[["observed_at", "retailer", "price", "currency", "in_stock", "status", "route", "url"]],
                     hide_index=True)
    st.markdown("**Offers the planner uses for this part**")
    offers = offers_frame(cat, part_id)
    if offers.empty:
        st.caption("none: this part has no price, so the solver cannot pick it")
    else:
        st.table(offers, hide_index=True)
