"""The doctor on real logs pasted in public issues (tests/data/real/manifest.json): each is read in its own format and
judged as the thread established; no failure is ever called healthy; no traceback for any file (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.doctor.catalogue import lookup
from planner.service import diagnose

diagnose_events, read_smi = diagnose().events, diagnose().smi  # the door: one use case, a method per log kind

REAL = Path(__file__).parent / "data" / "real"
MANIFEST = json.loads((REAL / "manifest.json").read_text(encoding="utf-8"))["fixtures"]
EVENTS = [f for f in MANIFEST if not f["file"].startswith("smi/")]
SMI = [f for f in MANIFEST if f["file"].startswith("smi/")]
runner = CliRunner()


def test_at_least_30_real_logs_each_with_provenance_and_every_file_listed():
    assert len(MANIFEST) >= 30
    listed = {f["file"] for f in MANIFEST}
    on_disk = {str(p.relative_to(REAL)) for kind in ("kernel", "windows", "smi") for p in (REAL / kind).rglob("*")
               if p.is_file() and p.name != "manifest.json"}  # training/ and lists/ belong to other readers
    assert on_disk == listed
    for f in MANIFEST:
        assert f["repo"].count("/") == 1 and f["url"].startswith("https://github.com/") and f["truth"] and f["ref"]


@pytest.mark.parametrize("fx", EVENTS, ids=[f["file"] for f in EVENTS])
def test_event_logs_are_read_in_their_format_and_judged_as_the_thread_did(fx):
    report = diagnose_events(REAL / fx["file"])
    assert report.format == fx["format"]
    kinds = {lookup(ev.source, ev.id).kind for inc in report.incidents for ev in inc.events}
    assert set(fx["expect_kinds"]) <= kinds, kinds
    if fx.get("healthy"):  # nothing to find: the answer still says what the file could and could not show
        assert not report.incidents and any(n.startswith("nothing found; this file could show") for n in report.notes)
        return
    assert report.incidents, "a log of a failure was called healthy"
    assert any(n.startswith("what it could show") for n in report.notes)
    if "device" in fx:
        assert any(fx["device"] in ev.summary for inc in report.incidents for ev in inc.events)
    if fx.get("no_gpu_hypothesis"):
        # AER on a chipset or laptop root port with no GPU behind it is not evidence against the GPU
        assert "GPU hardware" not in {h.name for h in report.hypotheses}


@pytest.mark.parametrize("fx", SMI, ids=[f["file"] for f in SMI])
def test_nvidia_smi_pastes_are_read_and_never_called_healthy_beyond_what_they_show(fx):
    found = read_smi(REAL / fx["file"])
    kinds = {f.kind for f in found}
    problems = [f for f in found if f.severity == "problem"]
    assert set(fx["expect_kinds"]) <= kinds
    assert found[-1].kind == "coverage" and ("cannot" in found[-1].message or "no Xid" in found[-1].message)
    if fx.get("healthy"):
        assert not problems
    else:
        assert problems or "fitted" in fx, "a failure was called healthy"
    if "gpus" in fx:
        count = next(f for f in found if f.kind == "gpu_count")
        assert f"lists {fx['gpus']} GPU" in count.message
    if "fitted" in fx:
        with_build = {f.kind for f in read_smi(REAL / fx["file"], expected_gpus=fx["fitted"])}
        assert set(fx["with_fitted"]) <= with_build


@pytest.mark.parametrize("fx", MANIFEST, ids=[f["file"] for f in MANIFEST])
def test_cli_reads_every_real_file_without_a_traceback(fx):
    command = "smi" if fx["file"].startswith("smi/") else "events"
    result = runner.invoke(app, ["doctor", command, str(REAL / fx["file"])])
    assert result.exit_code == 0, result.output
    assert result.exception is None and "Traceback" not in result.output
    if command == "events" and not fx.get("healthy"):
        assert "No GPU, power or crash events found" not in result.output
