"""Part catalog: typed records, loading and validation of data/, invariants, importers, synthetic catalogs."""
