"""Costs: cloud rental versus purchase, rental catalog, currency rates, electricity and resale."""
