"""The Streamlit page driven headless with AppTest: plan, why-not, permalink, import, check, doctor."""

from __future__ import annotations

import re

import pandas as pd

from planner.catalog.load import load_catalog
from planner.perf.model import load_perf_model
from planner.request import Request
from planner.service.sweep_report import params_text
from planner.share import encode_token

from helpers_app import REPO, _isolated, open_tab, run  # noqa: F401  (_isolated: autouse fixture)

DOCTOR_LOG = REPO / "tests" / "data" / "doctor" / "user-system.csv"


def open_inputs(at):
    """Switch on the sidebar's 'Parts and makers' and 'Constraints and preferences' (drawn when opened)."""
    at.toggle(key="in_parts_open").set_value(True)
    at.toggle(key="in_more_open").set_value(True)
    return run(at)


def headline(at) -> str:
    return next(s.value for s in at.subheader if s.value.startswith(("Recommended", "Build restored", "Imported")))


def md_tables(node) -> list[pd.DataFrame]:
    """The Markdown tables under `node` (the page draws its tables as Markdown), cells unescaped."""
    out = []
    for m in node.markdown:
        lines = m.value.split("\n")
        if len(lines) < 2 or not lines[0].startswith("| ") or not lines[1].startswith("|---"):
            continue
        cells = [[re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
        out.append(pd.DataFrame(cells[2:], columns=cells[0]))
    return out


def build_frame(at) -> pd.DataFrame:
    """The build table of the Plan tab (the first table with a Part and a Key spec column)."""
    return next(f for f in md_tables(at.tabs[0]) if {"Part", "Key spec"} <= set(f.columns))


def plan_parts(at) -> list[str]:
    """Part names of the build table on the Plan tab."""
    return list(build_frame(at)["Part"])


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_changing_the_budget_changes_the_plan() -> None:
    at = run()
    assert headline(at).startswith("Recommended") and not errors(at)
    first, first_parts = headline(at), plan_parts(at)
    assert len(first_parts) == 8
    assumed = params_text(load_perf_model().typical_params("transformer"))  # the class's typical size (data-driven)
    assert any(m.label.startswith(f"Speed vs a GTX 1080 Ti, {assumed} model") for m in at.metric)  # the size it assumed
    assert any("typical size assumed" in c.value for c in at.tabs[0].caption)
    assert any("On this card: limited by" in c.value for c in at.tabs[0].caption)  # issue 39 item 4: the limit, said
    assert any(m.value.startswith("**Speed and sweep time by option**") for m in at.tabs[0].markdown)
    assert at.tabs[0].get("vega_lite_chart")  # the Plan chart
    at.text_input(key="in_budget").input("2000")
    run(at)
    assert headline(at) != first and plan_parts(at) != first_parts
    total = headline(at).rsplit("EUR", 1)[1]
    assert float(total.replace(" ", "").replace("\u00a0", "")) <= 2000


def test_budgets_as_people_type_them_and_an_invalid_one_removes_the_plan() -> None:
    at = run()
    at.text_input(key="in_budget").input("3 500 €")
    run(at)
    assert not errors(at) and float(headline(at).rsplit("EUR", 1)[1].replace(" ", "").replace("\u00a0", "")) <= 3500
    at.text_input(key="in_budget").input("7.000")
    run(at)
    assert any("ambiguous" in e and "7000" in e for e in errors(at))
    assert not [s for s in at.subheader if s.value.startswith("Recommended")]  # the old plan is gone
    assert not md_tables(at)  # no build table once the budget is invalid
    at.text_input(key="in_budget").input("7k")
    run(at)
    assert not errors(at) and headline(at).startswith("Recommended")


def test_an_impossible_request_shows_why_not() -> None:
    at = open_inputs(run())
    at.number_input(key="in_min_vram").set_value(1000.0)
    run(at)
    assert any("No build fits" in e for e in errors(at))
    text = " ".join(m.value for m in at.tabs[0].markdown)
    assert "Requirements that collide" in text and "VRAM" in text
    assert at.query_params["b"].startswith("v2.")  # the link still records the request


def test_permalink_round_trips_inputs_and_parts() -> None:
    at = run()
    at.text_input(key="in_budget").input("3500")
    at.number_input(key="in_runs").set_value(12)
    at.selectbox(key="in_precision").set_value("fp32")
    at.number_input(key="in_model_m").set_value(15.0)
    run(at)
    token, parts, title = at.query_params["b"], plan_parts(at), headline(at)
    assert token.startswith("v2.")

    opened = run(b=token)  # a fresh session opening the link
    assert opened.text_input(key="in_budget").value == "3500"
    assert opened.number_input(key="in_runs").value == 12
    assert opened.selectbox(key="in_precision").value == "fp32"
    assert opened.number_input(key="in_model_m").value == 15.0
    assert headline(opened).startswith("Build restored from a shared link")
    assert plan_parts(opened) == parts
    assert title.split(":", 1)[1].split(",")[0].strip() in headline(opened)
    assert opened.query_params["b"] == token  # nothing changed, same link

    opened.text_input(key="in_budget").input("2500")  # any change re-plans from scratch
    run(opened)
    assert headline(opened).startswith("Recommended") and opened.query_params["b"] != token


def test_runs_left_and_model_size_reach_the_sweep_and_the_headline() -> None:
    at = run()
    full = next(m for m in at.metric if m.label.startswith("Sweep"))
    at.number_input(key="in_runs_left").set_value(6)
    at.number_input(key="in_model_m").set_value(15.0)
    run(at)
    speed = next(m for m in at.metric if m.label.startswith("Speed vs a GTX 1080 Ti"))
    assert speed.label.endswith("15 M model")
    sweep = next(m for m in at.metric if m.label.startswith("Sweep"))
    assert sweep.label == "Sweep: 6 of 8 runs left" and sweep.value != full.value
    assert any("if started now" in c.value and "done " in c.value for c in at.tabs[0].caption)


def test_owned_parts_left_out_say_why_and_a_warning_can_be_accepted() -> None:
    at = run()
    assert not [m for m in at.sidebar.multiselect if m.key == "in_owned"]  # the part lists wait until opened
    open_inputs(at)
    at.multiselect(key="in_owned").set_value(["cpu-amd-ryzen5-5600g", "mb-msi-mpg-x570-gaming-edge-wifi",
                                              "mem-gskill-ripjaws-v-ddr4-4x16-3200-cl16"])
    run(at)
    why = [w.value for w in at.tabs[0].warning if "(owned) not used" in w.value]
    assert len(why) == 3
    at.toggle(key="in_parts_open").set_value(False)  # closed again: the owned parts still count
    run(at)
    assert "3 owned" in at.toggle(key="in_parts_open").label
    assert len([w for w in at.tabs[0].warning if "(owned) not used" in w.value]) == 3
    assert why and "Ryzen 5 5600G" in why[0] and "Warnings I accept" in why[0] and "enough CPU cores" in why[0]
    at.multiselect(key="in_accept").set_value(["cpu_cores_per_gpu"])
    at.selectbox(key="in_gpus").set_value(1)  # two GPUs need an x8/x8 board the old AM4 box lacks
    at.radio(key="in_goal").set_value("minimum")  # expert would still buy build quality before reusing the parts
    run(at)
    assert "AMD Ryzen 5 5600G" in plan_parts(at)
    assert any(w.value.startswith("! Worth a look: enough CPU cores") for w in at.tabs[0].warning)  # plain words


def test_tables_show_used_price_kinds_and_the_plans_own_psu() -> None:
    at = run()
    frame = build_frame(at)
    assert {"Condition", "Price kind", "Price date"} <= set(frame.columns)
    assert not frame[[c for c in ("Age", "Link", "Price date") if c in frame]].isin(["None", "nan"]).any().any()
    if "Age" in frame:  # an estimate is aged from the data it rests on; undated research has no age
        assert frame["Age"].astype(str).str.strip().astype(bool).any()
    for _, row in frame.iterrows():
        if row["Price kind"] in ("estimate", "your research (undated)"):
            assert not row["Price date"][:1].isdigit()  # "based on 2025-07-23 data", never a fresh-looking date
            if row["Price date"].startswith("entered") or row["Price kind"] != "estimate":
                assert row.get("Age", "") == ""
            assert "@" not in row["Price"]  # "EUR 330.00", not "@ market estimate"
    psu_name = frame.set_index("Type").loc["Power Supply", "Part"]
    psu = next(m for m in at.metric if m.label.startswith("PSU"))
    assert psu.label == "PSU in this build"
    assert any(psu_name in c.value and "needs at least" in c.value for c in at.tabs[0].caption)
    assert psu.value.split()[0] in psu_name.replace("W", " W").split() or psu.value.split()[0] in psu_name
    alts = [t for t in md_tables(at.tabs[0]) if "Condition" in t.columns and "Key spec" not in t.columns]
    assert alts, "the alternatives' tables show the condition too"


def test_a_shop_price_in_the_build_brings_the_age_and_link_columns(monkeypatch, tmp_path) -> None:
    from decimal import Decimal

    from planner.prices.store import NewObservation, PriceStore

    before = build_frame(run()).set_index("Type").loc["CPU"]
    cpu = next(p for p in load_catalog().by_category("cpu") if p.name == before["Part"])
    listed = Decimal(before["Price"].split()[1].replace(",", ""))  # the plan's own estimate, e.g. "EUR 288.00"
    shop = listed + Decimal("41.95")  # a shop above the market estimate: what one can buy at beats the guess
    db = tmp_path / "prices.sqlite"
    PriceStore(db).record([NewObservation(cpu.id, "LDLC", shop, "EUR", in_stock=True, category="cpu",
                                          url="https://www.ldlc.com/fiche/PB00000001.html",
                                          reference=listed)], "LDLC")
    monkeypatch.setenv("PLANNER_PRICE_DB", str(db))
    row = build_frame(run()).set_index("Type").loc["CPU"]
    assert row["Price kind"] == "scraped" and row["Price"] == f"EUR {shop:.2f} @ LDLC"
    assert row["Age"].endswith(" d") and "ldlc.com" in row["Link"]


def test_four_gpus_name_the_missing_board_and_chip_makers_are_offered() -> None:
    at = open_inputs(run())
    at.selectbox(key="in_gpus").set_value(4)
    at.multiselect(key="in_brands").set_value(["ASUS", "ASRock Rack"])  # the 4-GPU boards: WRX90 (ASUS), ROMED8-2T
    run(at)
    assert any("No build fits" in e for e in errors(at))
    text = " ".join(m.value for m in at.tabs[0].markdown)
    assert "What the catalog lacks" in text and "known to host 4 GPUs" in text
    at.selectbox(key="in_gpus").set_value(1)
    at.multiselect(key="in_brands").set_value(["NVIDIA"])
    run(at)
    assert any("maker on the box" in c.value for c in at.tabs[0].caption)
    assert at.multiselect(key="in_chip_makers").options == ["NVIDIA", "AMD", "Intel"]


def test_model_size_sets_a_vram_floor() -> None:
    at = run()
    at.number_input(key="in_model_m").set_value(2000.0)  # 2 B parameters: ~37 GiB before activations
    run(at)
    caption = next(c.value for c in at.tabs[0].caption if "VRAM floor" in c.value)
    floor = float(caption.split("VRAM floor ")[1].split(" GB")[0])
    assert floor >= 30
    if any("No build fits" in e for e in errors(at)):
        return
    gpu_spec = build_frame(at).set_index("Type").loc["Video Card", "Key spec"]
    assert float(gpu_spec.split(" GB")[0]) >= floor


def test_a_damaged_link_shows_a_clear_error_not_a_traceback() -> None:
    token = encode_token(Request(), [("gpu-nvidia-rtx5090-fe", 1)])
    at = run(b=token[:-6])
    assert any("could not be opened" in e and "truncated" in e for e in errors(at))
    assert headline(at).startswith("Recommended")  # the page still plans with the defaults
    at = run(b=encode_token(Request(), [("gpu-that-does-not-exist", 1)]))
    assert any("gpu-that-does-not-exist" in e for e in errors(at))


def test_out_of_range_link_values_are_clamped_not_a_crash() -> None:
    inputs = Request(budget="50", baseline_hours=0.01, excluded_brands=("NoSuchBrand",), runs=10_000)
    at = run(b=encode_token(inputs, []))
    assert at.text_input(key="in_budget").value == "50"  # shown as sent; the solver says what it buys
    assert at.number_input(key="in_hours").value == 0.1
    assert at.session_state["in_brands"] == [] and not at.toggle(key="in_parts_open").value  # nothing left to show
    # a Request (e.g. a CLI link) asks for no alternatives: the page keeps its own 2, and nothing else differs
    assert at.session_state["in_alts"] == 2 and not at.toggle(key="in_more_open").value
    assert at.toggle(key="in_more_open").label == "Constraints and preferences (defaults)"
    at = run(b=encode_token(Request(alternatives=4, gpu_count=2), []))  # a page's link that asks for some keeps them
    assert at.session_state["in_alts"] == 4 and at.toggle(key="in_more_open").value
    assert at.toggle(key="in_more_open").label == "Constraints and preferences (2 changed)"


def test_importing_the_markdown_list_gives_the_same_parts() -> None:
    at = run()
    parts = plan_parts(at)
    md = next(c.value for c in open_tab(at, "Share").code if c.value.startswith("Type|Item|Price"))

    other = run()
    other.text_input(key="in_budget").input("2500")
    run(other)
    assert plan_parts(other) != parts
    open_tab(other, "Share")
    other.text_area(key="import_text").input(md)
    other.button(key="import_btn").click()
    run(other)
    assert any("Imported 8 part(s) from markdown" in s.value for s in other.success)
    open_tab(other, "Plan")
    assert headline(other).startswith("Imported build")
    assert sorted(plan_parts(other)) == sorted(parts)

    open_tab(other, "Share")
    assert other.text_area(key="import_text").value == md  # kept while the Plan tab was open
    other.text_area(key="import_text").input("nothing useful here\nat all")
    other.button(key="import_btn").click()
    run(other)
    assert any(e.startswith("Import failed:") for e in errors(other))


def test_check_tab_flags_an_incompatible_pick() -> None:
    cat = load_catalog()
    cpu = cat.by_category("cpu")[0]
    other_socket = next(p for p in cat.by_category("motherboard") if p.socket != cpu.socket)
    at = open_tab(run(), "Check my build")
    at.selectbox(key="chk_cpu").set_value(cpu.id)
    at.selectbox(key="chk_motherboard").set_value(other_socket.id)
    run(at)
    check = at.tabs[2]
    assert any(e.value.startswith("Not compatible") for e in check.error)
    assert any("✗" in e.value and "socket" in e.value.lower() for e in check.error)

    open_tab(at, "Plan")  # the Check tab is not drawn meanwhile: its picks must survive
    assert not at.tabs[2].children
    open_tab(at, "Check my build")
    assert at.selectbox(key="chk_cpu").value == cpu.id
    assert at.selectbox(key="chk_motherboard").value == other_socket.id
    at.button(key="chk_open").click()
    run(at)  # "Show this build in the Plan tab" goes there
    assert at.session_state["tab"] == "Plan"
    assert any(h.value.startswith("Build from the checker") for h in at.tabs[0].subheader)


def test_doctor_tab_reads_an_uploaded_event_log() -> None:
    at = open_tab(run(), "Doctor")
    at.file_uploader(key="doc_events_file").upload("user-system.csv", DOCTOR_LOG.read_bytes(), "text/csv")
    run(at)
    doctor = at.tabs[5]
    assert not doctor.error
    assert any("incident(s) on the timeline" in m.value for m in doctor.markdown)
    titles = [e.label for e in doctor.expander]
    assert titles and any("driver" in t.lower() for t in titles)
    assert any("Runbook" in m.value for m in doctor.markdown)

    open_tab(at, "Plan")  # Streamlit forgets an uploader that is not drawn; the Doctor keeps the file aside
    doctor = open_tab(at, "Doctor").tabs[5]
    assert any("Using user-system.csv" in c.value for c in doctor.caption)
    assert any("incident(s) on the timeline" in m.value for m in doctor.markdown)
    at.button(key="doc_events_file_forget").click()
    doctor = run(at).tabs[5]
    assert not any("incident(s) on the timeline" in m.value for m in doctor.markdown)


def test_doctor_tab_rejects_garbage_with_one_line() -> None:
    at = open_tab(run(), "Doctor")
    at.text_area(key="doc_events_text").input("this is not an event log\nnor this")
    run(at)
    assert at.tabs[5].error and "\n" not in at.tabs[5].error[0].value


def test_cloud_tab_charts_rent_vs_buy_when_opened() -> None:
    at = run()
    assert not any("Time and cost to finish" in m.value for m in at.markdown)  # not computed while hidden
    at.session_state["tab"] = "Cloud vs buy"
    run(at)
    cloud = at.tabs[1]
    assert not cloud.error
    assert any("Time and cost to finish the sweep" in m.value for m in cloud.markdown)
    assert any(m.value.startswith("**Buying** finishes in") for m in cloud.markdown)
    table = cloud.table[0].value
    assert table.iloc[0, 0].startswith("Buy: ") and any(v.startswith("Rent: ") for v in table.iloc[:, 0])
    sentence = next(m.value for m in [*cloud.info, *cloud.success] if m.value.startswith(("Rent:", "Buy:")))
    assert "sweeps like this a month" in sentence or "never" in sentence
    picked = cloud.multiselect[0].value
    assert any("A100" in n for n in picked) and any("H100" in n for n in picked)
    assert not any("GH200" in n for n in picked)
    assert cloud.get("vega_lite_chart")
    evens = cloud.table[1].value
    assert list(evens.columns[:3]) == ["vs", "sweeps / month", "runs / month"]


def test_prices_and_share_tabs() -> None:
    at = run()
    assert not at.tabs[3].children and not at.tabs[4].children  # only the open tab is drawn
    prices = open_tab(at, "Prices").tabs[3]
    assert any("No price history yet" in i.value and "planner prices refresh" in i.value for i in prices.info)
    share = open_tab(at, "Share").tabs[4]
    labels = [b.label for b in share.get("download_button")]
    assert labels == ["Download HTML (one file)", "Download Markdown", "Download CSV", "Download JSON"]
    # no public address configured: no localhost link, the token itself (it opens the build in any planner)
    assert not any("localhost" in c.value for c in share.code)
    assert any("No public address" in w.value for w in share.warning)
    assert any(c.value.strip() == at.query_params["b"] for c in share.code)


def test_doctor_tab_reads_training_metrics() -> None:
    rows = ["step,loss,tokens_per_s"] + [f"{i},{3.0 - i * 0.01:.3f},{1000 if i < 60 else 400}" for i in range(100)]
    at = open_tab(run(), "Doctor")
    at.file_uploader(key="doc_metrics_file").upload("metrics.csv", "\n".join(rows).encode(), "text/csv")
    run(at)
    doctor = at.tabs[5]
    assert not doctor.error
    findings = doctor.dataframe[0].value
    assert any("throughput" in str(k).lower() for k in findings["Finding"])
