"""Prices tab: the price history of a part from the SQLite store, or how to start one."""

from __future__ import annotations

from typing import Any, Callable, Optional

import pandas as pd
import streamlit as st

from planner.errors import InputError, PlannerError
from planner.service import Catalog
from planner.vocab import TYPE_LABELS
from planner.textsafe import md_escape
from ui import services


def history_frame(part_id: str) -> Optional[pd.DataFrame]:
    """Observations of a part (None when there is no price database yet)."""
    from planner.service import my_prices

    try:
        _, observed = my_prices().history(part_id)
    except InputError:  # no price database yet (the part id is the catalog's own)
        return None
    frame = pd.DataFrame([o.to_json() for o in observed])
    if not frame.empty:
        frame["price"] = frame["price"].astype(float)
        frame["observed_at"] = pd.to_datetime(frame["observed_at"])
    return frame


def offers_frame(cat: Catalog, part_id: str) -> pd.DataFrame:
    """Every offer of the part with its one price record (kind, the date its number was observed, age); the one
    the plan uses first."""
    from planner.price_label import offer_label

    used = cat.offer_for(part_id)
    rows = [{"Used": "✓" if o is used else "", "Price": f"{o.currency} {o.price}", "Condition": o.condition,
             "Retailer": o.retailer, "Price record": offer_label(o).text(), "Note": o.note or "", "Link": o.url or ""}
            for o in cat.offers.get(part_id, [])]
    return pd.DataFrame(rows)


# The fetcher builder the refresh uses: None = the service's polite fetcher (tests swap in one over a local server).
make_fetcher: Optional[Callable[[Any], Any]] = None


def refresh_prices(cat: Catalog, on_page: Callable[[int, int, str], None]) -> Any:
    """Fetch the retailers' search pages, match and store prices: the service call `planner prices refresh` makes,
    with the same quarantine references (the catalog's shipped offers)."""
    from planner.service import refresh_prices as refresh

    return refresh(on_page=on_page, fetcher=make_fetcher)  # the shipped catalog (or $PLANNER_DATA_DIR)


def refresh_panel(cat: Catalog) -> None:
    if not st.button("Refresh prices from the shops", key="price_refresh",
                     help="Fetches each retailer's search pages politely (robots.txt, rate limits) and stores "
                          "dated prices; the plan uses the freshest trusted ones"):
        return
    bar = st.progress(0.0, text="Starting...")
    report = refresh_prices(cat, lambda i, n, url: bar.progress(i / max(n, 1), text=f"{i} of {n} pages: {url}"))
    bar.progress(1.0, text=f"Done: {report.pages} page(s) read")
    msg = (f"{report.stored} price(s) stored ({report.suspects} suspect), {len(report.unmatched)} listing(s) not "
           f"matched, {len(report.blocked)} blocked, {len(report.empty)} without any offer, "
           f"{len(report.errors)} page(s) failed")
    (st.success if report.stored else st.warning)(msg)
    for url, err in report.errors[:5]:
        st.caption(f"failed: {err}")
    for url, why in report.empty[:5]:
        st.caption(f"no offer read on {url}: {why}")


def _give_price(part_id: str, k: str = "price_give") -> None:
    """Form callback: store the price the user typed (kind 'yours'), or say in one line why not."""
    from datetime import date

    from planner.service import my_prices

    ss = st.session_state
    if callable(part_id):
        part_id = part_id()
    day = ss.get(f"{k}_date")
    try:
        o = my_prices().add(part_id, str(ss.get(f"{k}_amount") or ""), shop=ss.get(f"{k}_shop") or None,
                      url=(ss.get(f"{k}_url") or "").strip() or None,
                      day=day if isinstance(day, date) else None, force=bool(ss.get(f"{k}_force")))
    except PlannerError as exc:
        ss["price_give_msg"] = ("error", services.one_line(exc))
        return
    ss["price_give_msg"] = ("ok", f"Stored {o.price} {o.currency} at {o.retailer}, seen {o.observed_at.date()}, as "
                                  "yours: every plan uses it from now on.")


def _forget_price(part_id: str) -> None:
    from planner.service import my_prices

    try:
        _, n = my_prices().forget(part_id, kinds=("yours", "shared list"))
    except PlannerError as exc:
        st.session_state["price_give_msg"] = ("error", services.one_line(exc))
        return
    st.session_state["price_give_msg"] = ("ok", f"Forgot {n} price(s) you gave or kept from a shared list; the "
                                                "plan falls back to the catalog's and the shops' prices.")


def give_panel(cat: Catalog, part_id: str, k: str = "price_give", choose: Optional[list[str]] = None) -> None:
    """Give a price yourself (`planner prices add`): checked like a scraped one, used by every answer at once.
    `choose`: the parts to pick from inside the form (the Plan tab's inline form: the build's parts)."""
    st.markdown("**Give a price you found** (VAT included; checked against other shops and the catalog)")
    with st.form(k, clear_on_submit=False, border=True):
        if choose:
            st.selectbox("Part", choose, key=f"{k}_part", format_func=lambda i: cat.parts[i].name)
        c1, c2 = st.columns(2)
        c1.text_input("Price", key=f"{k}_amount", placeholder="2 349,00 € or 1999 USD")
        c2.text_input("Shop", key=f"{k}_shop", placeholder="LDLC")
        c1.text_input("Offer address (optional)", key=f"{k}_url", placeholder="https://...")
        c2.date_input("Seen on", key=f"{k}_date", value="today", max_value="today")
        st.checkbox("Store it even when it is far from other shops' prices", key=f"{k}_force")
        target = (lambda: st.session_state.get(f"{k}_part") or part_id) if choose else part_id
        st.form_submit_button("Use this price", on_click=_give_price, args=(target, k), type="primary")
    mine = [o for o in cat.offers.get(part_id, []) if o.source in ("yours", "shared list")]
    if mine:
        st.button("Forget the prices given for this part", key="price_forget", on_click=_forget_price, args=(part_id,))
    msg = st.session_state.pop("price_give_msg", None)
    if msg:
        (st.success if msg[0] == "ok" else st.error)(md_escape(msg[1]))


def render(cat: Catalog, view: Optional[dict[str, Any]]) -> None:
    st.subheader("Price history")
    refresh_panel(cat)
    ids = sorted(cat.parts, key=lambda i: (list(TYPE_LABELS).index(cat.parts[i].category), cat.parts[i].name))
    default = 0
    if view is not None:
        gpu = next((ln.part_id for ln in view["build"].lines if ln.category == "gpu"), None)
        default = ids.index(gpu) if gpu in ids else 0
    part_id = st.selectbox("Part", ids, index=default, key="price_part",
                           format_func=lambda i: f"{TYPE_LABELS[cat.parts[i].category]}: {cat.parts[i].name}")
    give_panel(cat, part_id)
    frame = history_frame(part_id)
    if frame is None or frame.empty:
        st.info(f"No price history yet for {cat.parts[part_id].name}. Run `planner prices refresh` to fetch "
                "today's prices from the retailers (each run adds a dated observation), then reload this page.")
    else:
        import altair as alt  # only when there is a history to draw

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
