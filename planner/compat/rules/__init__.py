"""Compatibility rules, each defined once and used by both the checker and the CP-SAT solver."""

from __future__ import annotations

from planner.compat.rules import fit, multigpu, platform, power_rules, sustain
from planner.compat.rules.base import Build, Encoder, Rule, power_terms

ALL_RULES: list[Rule] = [*platform.RULES, *multigpu.RULES, *fit.RULES, *power_rules.RULES, *sustain.RULES]
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_NAME", "Build", "Encoder", "Rule", "power_terms"]
