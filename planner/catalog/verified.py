"""The verified-rows register (data/verified_rows.csv): which catalog rows a person re-read against a dated source.

One row per part id: the facts checked, the source read (an address), the date it was read and the verdict.
A plan marks every part whose row is not in the register, or whose verdict is not a pass, as "unverified";
a catalog directory without a register has no verdicts (None), so nothing is marked there.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal, Optional  # noqa: F401

from pydantic import Field, field_validator, model_validator

from planner.catalog.models import OptStr, Record
from planner.validation import not_future

REGISTER_FILE = "verified_rows.csv"
# confirmed: the row matched the source; corrected: the row was changed to match it;
# unconfirmed: the source was read but did not settle every fact listed (the row stays marked unverified and names,
# in `unsettled`, the fact still to check)
VERDICTS = ("confirmed", "corrected", "unconfirmed")
PASSING = ("confirmed", "corrected")


class VerifiedRow(Record):
    """One register row: part id, the facts checked, the source address, the day it was read, the verdict."""

    part_id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    facts: str = Field(min_length=1)
    source_url: str = Field(min_length=1, pattern=r"^https?://\S+( ; https?://\S+)*$")
    read_on: date
    verdict: Literal["confirmed", "corrected", "unconfirmed"]
    # what the source left open (an unconfirmed row must say it): the plan prints it beside the "unverified" mark
    unsettled: OptStr = None
    notes: OptStr = None

    @field_validator("read_on")
    @classmethod
    def _past(cls, v: date) -> date:
        return not_future(v, "read_on")

    @model_validator(mode="after")
    def _unconfirmed_says_what(self) -> "VerifiedRow":
        if self.verdict == "unconfirmed" and not self.unsettled:
            raise ValueError(f"{self.part_id}: an unconfirmed row names the fact still to check (unsettled)")
        return self

    @property
    def passes(self) -> bool:
        return self.verdict in PASSING

    def missing(self) -> Optional[str]:
        """What a plan should say is still to check on this row (None when the row passed)."""
        return None if self.passes else self.unsettled

    def sources(self) -> list[str]:
        """Every address in source_url (several separated by ' ; ')."""
        return [s.strip() for s in self.source_url.split(" ; ") if s.strip()]


def load_register(data_dir: Path) -> Optional[dict[str, VerifiedRow]]:
    """The register of a catalog directory by part id; None when the directory has none."""
    from planner.catalog.load import keyed_records

    path = Path(data_dir) / REGISTER_FILE
    if not path.exists():
        return None
    return keyed_records(path, VerifiedRow, "part_id", "part")


NOT_READ = "no dated maker's page or review read yet"


def unverified_what(register: Optional[dict[str, VerifiedRow]], part_id: str) -> Optional[str]:
    """The fact still to check before ordering a part: None when its row passed or there is no register; the
    register row's `unsettled` when it was read without settling it; NOT_READ when the row was never read."""
    if register is None:
        return None
    row = register.get(part_id)
    return NOT_READ if row is None else row.missing()
