"""Importers that turn third-party part datasets into catalog directories in our own format."""

from planner.catalog.importers.pcpp import ImportReport, import_pcpp

__all__ = ["ImportReport", "import_pcpp"]
