"""What a request cost the solver: CP-SAT models built, copies made for the why-not, solves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Counts:
    """Counters one request's engine keeps. `models_built`: times the rules were encoded into a CP-SAT model (1 per
    request, 2 only when a catalog with no compatible combination is explained rule by rule); `copies`: protobuf
    copies of that model (no re-encoding) a why-not solves its cores on, one per option explained; `solves`: CP-SAT
    solves, the why-not's cores and relaxations included."""

    models_built: int = 0
    copies: int = 0
    solves: int = 0

    def add(self, stats: dict[str, Any]) -> None:
        """Count a nested request's work (a note's question that needed a request of its own) as this one's."""
        self.models_built += int(stats.get("models_built", 0))
        self.copies += int(stats.get("model_copies", 0))
        self.solves += int(stats.get("solves", 0))

    def to_stats(self) -> dict[str, int]:
        return {"models_built": self.models_built, "model_copies": self.copies, "solves": self.solves}
