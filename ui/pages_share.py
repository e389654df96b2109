"""Share tab: permalink, Markdown/CSV/JSON downloads, and an import box for a pasted list, JSON or link."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import pandas as pd
import streamlit as st

from planner.service import Catalog
from planner.errors import PlannerError
from planner.request import Request
from planner.service import export_build, import_build
from planner.settings import is_local_address
from planner.textsafe import md_escape
from ui import services
from ui.state import apply_inputs, inputs_from_state


def _picks() -> dict[int, str]:
    """The parts chosen in the pickers under unmatched or generic lines (line -> part id)."""
    out = {}
    for key, value in st.session_state.items():
        if isinstance(key, str) and key.startswith("pick_line_") and value and value != _LEAVE:
            out[int(key.removeprefix("pick_line_"))] = value.split(" — ", 1)[0]
    return out


_LEAVE = "(leave as it is)"


def _do_import(cat: Catalog, with_picks: bool = False) -> None:
    """Button callback: runs before the page, so it may set the sidebar widgets."""
    ss = st.session_state
    text = ss.get("import_text", "")
    if not with_picks:
        for key in [k for k in ss.keys() if isinstance(k, str) and k.startswith("pick_line_")]:
            del ss[key]
    try:
        result = import_build(text, cat, currency=ss.get("in_currency"), picks=_picks() if with_picks else None)
    except PlannerError as exc:
        ss["import_msg"] = {"error": services.one_line(exc)}
        return
    except Exception as exc:  # noqa: BLE001 - never a traceback in the page
        ss["import_msg"] = {"error": f"the import failed unexpectedly ({type(exc).__name__}: {services.one_line(exc)})"}
        return
    ss["import_msg"] = {"kind": result.kind, "json": result.to_json()}
    ss.pop("import_keep", None)
    if result.parts():
        mine = inputs_from_state(ss)
        if result.from_sender and result.inputs is not None:  # a link or our JSON: the sender's settings
            apply_inputs(ss, result.inputs, cat)
        else:  # a plain list names parts only: the user's own inputs stay, the GPU count and owned parts follow it
            got = result.inputs or mine
            apply_inputs(ss, mine.model_copy(update={"gpu_count": got.gpu_count,
                                                     "owned": tuple(dict.fromkeys((*mine.owned, *got.owned)))}), cat)
        ss["shared"] = {"origin": "import", "parts": result.parts(), "inputs": inputs_from_state(ss)}


def _keep_list_prices() -> None:
    """Button callback: keep the imported list's prices (kind 'from the shared list') so every answer uses them."""
    from types import SimpleNamespace

    from planner.service import my_prices

    ss = st.session_state
    rows = (ss.get("import_msg") or {}).get("json", {}).get("list_prices") or []
    lines = [SimpleNamespace(part_id=r["id"], amount=r["price"]["amount"], currency=r["price"]["currency"],
                             shop=r["shop"], url=r["url"]) for r in rows]
    try:
        kept, refused = my_prices().keep_list(lines)
    except PlannerError as exc:
        ss["import_keep"] = {"error": services.one_line(exc)}
        return
    ss["import_keep"] = {"kept": len(kept), "refused": refused}


def list_prices_report(data: dict[str, Any]) -> None:
    """The list's own prices beside the catalog's, and the choice to plan with them."""
    rows = data.get("list_prices") or []
    if not rows:
        return
    money = lambda m: "—" if m is None else f"{m['currency']} {m['amount']}"  # noqa: E731
    st.markdown("**The list's prices against the catalog's**")
    st.table(pd.DataFrame([{"Part": r["name"], "List price": money(r["price"]), "Shop": r["shop"] or "—",
                            "Catalog price": money(r["catalog_price"]) + (f" ({r['catalog_kind']})" if r["catalog_kind"] else ""),
                            "Difference": money(r["difference"])} for r in rows]), hide_index=True)
    kept = st.session_state.get("import_keep")
    if kept and "error" not in kept:
        st.success(f"Planning with the list's prices: {kept['kept']} kept as 'from the shared list' (dated today). "
                   "Forget them per part on the Prices tab.")
        for why in kept["refused"]:
            st.warning(md_escape(f"Not kept: {why}"))
        return
    if kept and "error" in kept:
        st.error(md_escape(kept["error"]))
    st.caption("The plan uses the catalog's prices until you choose to plan with the list's.")
    st.button("Plan with the list's prices", key="import_keep_btn", on_click=_keep_list_prices)


def import_report(cat: Optional[Catalog] = None) -> None:
    msg = st.session_state.get("import_msg")
    if not msg:
        return
    if "error" in msg:
        st.error(f"Import failed: {md_escape(msg['error'])}")
        return
    data = msg["json"]
    if data["matched"]:
        verdict = data["check"]["verdict"] if data.get("check") else None
        said = {None: "", "compatible": "; compatible", "partial": "; a partial list, see the Plan tab",
                "unconfirmed": "; cannot confirm (a deciding fact is unknown), see the Plan tab"}
        st.success(f"Imported {len(data['matched'])} part(s) from {msg['kind']}"
                   + said.get(verdict, "; NOT compatible, see the Plan tab") + ". The Plan tab shows the imported build.")
        st.table(pd.DataFrame([{"Line": m.get("line"), "Type": m["category"], "Part": m["name"], "Qty": m["quantity"],
                                "Matched from": m["from"], "How": m["how"],
                                "Sure": "" if m.get("confidence") is None else f"{m['confidence']:.0%}",
                                "Note": m.get("note", "")} for m in data["matched"]]),
                 hide_index=True)
    else:
        st.error("No part of the list matched the catalog.")
    check = data.get("check") or {}
    for f in check.get("problems", []):
        st.error(md_escape(f"{f['rule']}: {f['message']}"))
    for f in check.get("warnings", []):
        st.warning(md_escape(f"{f['rule']}: {f['message']}"))
    power = check.get("power") or {}
    if power.get("recommended_psu_w"):
        st.caption(md_escape(f"Power: sustained {power['sustained_w']} W, transients to {power['transient_w']} W, "
                             f"PSU of at least {power['recommended_psu_w']} W recommended"))
    list_prices_report(data)
    for m in data["unmatched"]:
        st.warning(f"Not matched (line {m.get('line')}, {md_escape(m['category'] or '?')}): {md_escape(m['text'])} — "
                   f"{md_escape(m['reason'])}")
    pickable = [m for m in data["unmatched"] if m.get("candidates") and m.get("line") is not None]
    if pickable:
        st.markdown("**Pick a part for the lines that did not match** (then re-import):")
        for m in pickable:
            options = [_LEAVE] + [f"{c['id']} — {c['name']}" for c in m["candidates"]]
            st.selectbox(md_escape(f"line {m['line']}: {m['text']}"), options, key=f"pick_line_{m['line']}")
        if cat is not None:
            st.button("Re-import with my picks", key="import_pick_btn", on_click=_do_import, args=(cat, True))
    for n in data["notes"]:
        st.caption(md_escape(n))


def html_page(view: dict[str, Any], inputs: Request, link: Optional[str], token: str) -> str:
    """The self-contained HTML page of the build on show, with its verdicts, speed and sweep."""
    from planner.service import export_build

    details = dict(speed=view.get("speed"), gpus=int(view.get("gpus") or 1), inputs=inputs,
                   problems=view.get("problems") or [], warnings=view.get("warnings") or [],
                   unverified=view.get("unverified") or [])
    return export_build(view["build"], "html", link=link, token=token, details=details)


def render(cat: Catalog, inputs: Request, view: Optional[dict[str, Any]]) -> None:
    st.subheader("Share this build")
    if view is not None:
        build = view["build"]
        base = st.text_input("Public address of this planner, for links", value=services.app_url(), key="share_base",
                             placeholder="https://your-planner.streamlit.app/",
                             help="Where the people you share with open the planner (README: Share with a friend). "
                                  "Default: the env var PLANNER_PUBLIC_URL, else this page's address when it is not "
                                  "localhost.").strip()
        if base and not base.startswith(("http://", "https://")):
            st.error(md_escape(f"The link address must start with http:// or https:// (got {base[:200]!r}); "
                               "no link until it does"))
            base = ""
        mine = replace(build, measurements=services.my_measurements())  # the link carries your measured speeds
        token = mine.token()
        link = mine.permalink(base) if base else None
        if link:
            st.markdown("**Permalink**: opening it restores these inputs and this exact build.")
            st.code(link, language=None, wrap_lines=True)
            if is_local_address(base):
                st.warning("This address opens only on this computer: a friend needs the deployed planner's "
                           "address (README: Share with a friend). The HTML file below works anywhere.")
        else:
            st.warning("No public address of the planner is set, so there is no link (a localhost link opens "
                       "nothing on a friend's machine). Send the HTML file below, or this token, which opens the "
                       "build in any planner's Share tab:")
            st.code(token, language=None, wrap_lines=True)
        md = export_build(build, "md", link=link, token=None if link else token)
        html = html_page(view, inputs, link, token)
        c1, c2, c3, c4 = st.columns(4)
        c1.download_button("Download HTML (one file)", html, file_name="build.html", mime="text/html", key="dl_html",
                           help="Parts, dated prices with shop links, verdicts, speed and sweep in one page that "
                                "opens offline and prints")
        c2.download_button("Download Markdown", md, file_name="build.md", mime="text/markdown", key="dl_md")
        c3.download_button("Download CSV", export_build(build, "csv"), file_name="build.csv", mime="text/csv", key="dl_csv")
        c4.download_button("Download JSON", export_build(build, "json"), file_name="build.json", mime="application/json", key="dl_json")
        with st.expander("Markdown to paste in a forum post"):
            st.code(md, language="markdown")
    else:
        st.info("Nothing to share yet: no build on the Plan tab.")
    st.markdown("---")
    st.markdown("**Import a build**: paste a list as posted (a Markdown or HTML table, PCPartPicker's text, Markdown "
                "or BBCode export, bullets, `Part: name` lines), our JSON, or a link/token.")
    st.text_area("Build to import", key="import_text", height=160, label_visibility="collapsed",
                 placeholder="Type|Item|Price\n:----|:----|:----\n**CPU** | [AMD Ryzen 9 9950X ...](https://...) | $549.99")
    st.button("Import", key="import_btn", on_click=_do_import, args=(cat,), type="primary")
    import_report(cat)
