"""Rental catalog: every source row kept, validated, dated; newest observation wins; filters."""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from planner.costs.cloud import CLOUD_PRICES_PATH, COLUMNS, CloudOffer, filter_offers, latest_offers, load_cloud_offers
from planner.errors import CatalogError

HEADER = ",".join(COLUMNS)
GOOD = "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,4.29,USD,2026-09-25,somewhere,,on-demand"


def write(tmp_path: Path, *rows: str, header: str = HEADER) -> Path:
    path = tmp_path / "cloud.csv"
    path.write_text("\n".join(["# comment", header, *rows]) + "\n", encoding="utf-8")
    return path


def test_shipped_catalog_keeps_every_source_row(shared_dir):
    offers = load_cloud_offers(CLOUD_PRICES_PATH)  # the normalised file; the added rentals are tested in test_calibrate
    with (shared_dir / "facts" / "cloud-gpu-prices.csv").open(newline="", encoding="utf-8") as f:
        source = list(csv.DictReader(f))
    assert len(offers) == len(source)
    for o, row in zip(offers, source):
        assert o.price_per_gpu_hour == Decimal(row["price_per_gpu_hour"])
        assert o.currency == row["currency"]
        assert row["source"].split(" ")[0] in o.source  # the source travels with the row
        if o.observed_on is None:
            assert row["date_or_version"].startswith("undated")
            assert "commit" in (o.note or "")
        else:
            assert row["date_or_version"].startswith(o.observed_on.isoformat())


def test_shipped_chip_ids_exist_in_the_chip_table(repo_dir):
    table = repo_dir / "data" / "gpu_chips.csv"
    if not table.exists():
        pytest.skip("data/gpu_chips.csv not written yet")
    with table.open(newline="", encoding="utf-8") as f:
        ids = {r["id"] for r in csv.DictReader(line for line in f if not line.startswith("#"))}
    chips = {o.chip for o in load_cloud_offers() if o.chip}
    assert chips <= ids
    assert {"h100-sxm5-80gb", "a100-sxm4-80gb", "a100-sxm4-40gb"} <= chips


def test_bad_rows_name_file_row_and_field(tmp_path):
    cases = {
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,-4,USD,2026-09-25,src,": "price_per_gpu_hour",
        "Lambda,on-demand,H100 SXM,h999,80,1,4.29,USD,2026-09-25,src,": "chip",
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,4.29,XYZ,2026-09-25,src,": "currency",
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,4.29,USD,2026-13-45,src,": "observed_on",
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,0,4.29,USD,2026-09-25,src,": "gpus_per_instance",
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,4.29,USD,2026-09-25,,": "source",
        "Lambda,on-demand,H100 SXM,h100-sxm5-80gb,80,1,abc,USD,2026-09-25,src,": "price_per_gpu_hour",
    }
    for row, field in cases.items():
        path = write(tmp_path, GOOD, row)
        with pytest.raises(CatalogError) as err:
            load_cloud_offers(path)
        message = str(err.value)
        assert "cloud.csv" in message and "row 4" in message and repr(field) in message, message


def test_bad_header_and_extra_cells(tmp_path):
    with pytest.raises(CatalogError, match="missing required column 'source'"):
        load_cloud_offers(write(tmp_path, GOOD.replace(",somewhere,", ","), header=HEADER.replace(",source", "")))
    with pytest.raises(CatalogError, match="more cells"):
        load_cloud_offers(write(tmp_path, GOOD + ",extra"))
    with pytest.raises(CatalogError, match="cannot read"):
        load_cloud_offers(tmp_path / "missing.csv")


def test_latest_offer_wins_and_undated_or_spot_rows_stay_history():
    offers = load_cloud_offers()
    latest = latest_offers(offers)
    keys = [o.key for o in latest]
    assert len(keys) == len(set(keys))
    assert all(o.observed_on is not None and o.chip for o in latest)
    assert all(o.billing in {"on-demand", "marketplace", "serverless"} for o in latest)
    runpod_secure_h100 = [o for o in latest if o.provider == "RunPod" and o.offer == "Secure Cloud" and o.chip == "h100-sxm5-80gb"]
    assert [(o.price_per_gpu_hour, o.observed_on) for o in runpod_secure_h100] == [(Decimal("3.99"), date(2026, 11, 9))]
    vast = [o for o in latest if o.provider == "Vast.ai" and o.offer.startswith("marketplace median of verified 1x")]
    assert [o.price_per_gpu_hour for o in vast] == [Decimal("2.4024")]  # 2026-10-19 supersedes 2026-10-07
    with_spot = latest_offers(offers, billing={"on-demand", "spot", "commitment", "marketplace", "serverless"})
    assert {o.billing for o in with_spot} >= {"spot", "commitment"}


def test_billing_is_a_stated_column_not_a_guess(tmp_path):
    def make(offer: str, k: int = 1, billing: str = "on-demand") -> CloudOffer:
        return CloudOffer(provider="P", offer=offer, gpu_name="H100", chip="h100-sxm5-80gb", vram_gb=80,
                          gpus_per_instance=k, price_per_gpu_hour=Decimal("1"), currency="USD", source="s",
                          billing=billing)
    assert make("p5en.48xlarge spot us-east-1", billing="spot").billing == "spot"
    assert make("a spot-checked price").billing == "on-demand"  # the words of the offer no longer decide
    assert make("on-demand", 8).label == "P (on-demand, 8-GPU instance) H100"
    assert make("on-demand").date_text == "undated"
    for bad, needle in ((GOOD[: GOOD.rindex(",")] + ",weekly", "billing"), (GOOD[: GOOD.rindex(",")] + ",", "billing")):
        with pytest.raises(CatalogError, match=needle):
            load_cloud_offers(write(tmp_path, bad))
    with pytest.raises(CatalogError, match="billing"):  # a file of the old shape says which column it lacks
        load_cloud_offers(write(tmp_path, GOOD[: GOOD.rindex(",")], header=HEADER[: HEADER.rindex(",")]))


def test_shipped_billing_agrees_with_the_source_rows(shared_dir):
    """Every row states its billing; where the source's provider label names one, they agree."""
    offers = load_cloud_offers()
    with (shared_dir / "facts" / "cloud-gpu-prices.csv").open(newline="", encoding="utf-8") as f:
        source = list(csv.DictReader(f))
    words = {"spot": "spot", "serverless": "serverless", "commitment": "commitment", "marketplace": "marketplace",
             "on-demand": "on-demand"}
    checked = 0
    for o, row in zip(offers, source):
        said = [b for w, b in words.items() if w in row["provider"].lower()]
        if len(said) == 1:
            assert o.billing == said[0], (row["provider"], o.billing)
            checked += 1
    assert checked >= 20


def test_filters():
    latest = latest_offers(load_cloud_offers())
    picked = filter_offers(latest, providers=["lambda", "RUNPOD", "vast"], gpus=["h100", "A100"])
    assert picked and {o.provider for o in picked} == {"Lambda", "RunPod", "Vast.ai"}
    assert all("h100" in (o.chip or "") or "a100" in (o.chip or "") for o in picked)
    assert filter_offers(latest, providers=["nobody"]) == []
    assert filter_offers(latest) == latest
