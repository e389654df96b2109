"""Live prices: polite fetching, extraction from retailer pages, matching to parts, SQLite price history."""

from planner.prices.extract import extract
from planner.prices.result import ExtractedOffer, ExtractResult

__all__ = ["extract", "ExtractResult", "ExtractedOffer"]
