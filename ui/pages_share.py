"""Share tab: permalink, Markdown/CSV/JSON downloads, and an import box for a pasted list, JSON or link."""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd
import streamlit as st

from planner.service import Catalog
from planner.errors import PlannerError
from planner.request import Request
from planner.service import import_build, permalink, to_csv, to_json_text, to_markdown
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
    if result.parts():
        apply_inputs(ss, result.inputs or inputs_from_state(ss), cat)
        ss["shared"] = {"origin": "import", "parts": result.parts(), "inputs": inputs_from_state(ss)}


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


def render(cat: Catalog, inputs: Request, view: Optional[dict[str, Any]]) -> None:
    st.subheader("Share this build")
    if view is not None:
        build = view["build"]
        base = st.text_input("Address of this planner, for links", value=services.app_url(), key="share_base",
                             help="Where the people you share with open the planner. Default: the env var "
                                  "PLANNER_BASE_URL, else this page's address.").strip()
        if not base.startswith(("http://", "https://")):
            st.error(md_escape(f"The link address must start with http:// or https:// (got {base[:200]!r}); "
                               f"using {services.app_url()}"))
            base = services.app_url()
        link = permalink(build.token(), base)
        st.markdown("**Permalink** (also in the address bar): opening it restores these inputs and this exact build.")
        st.code(link, language=None, wrap_lines=True)
        md = to_markdown(build, link=link)
        c1, c2, c3 = st.columns(3)
        c1.download_button("Download Markdown", md, file_name="build.md", mime="text/markdown", key="dl_md")
        c2.download_button("Download CSV", to_csv(build), file_name="build.csv", mime="text/csv", key="dl_csv")
        c3.download_button("Download JSON", to_json_text(build), file_name="build.json", mime="application/json", key="dl_json")
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
