"""Compatibility: the power model, the rules (check + encode, each defined once) and the checker."""
