"""Shipped data: specs, offers, chip table, calibration, cloud prices and FX snapshot (CSV/JSON/XML, package data)."""
