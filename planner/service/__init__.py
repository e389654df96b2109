"""Application layer: the one request and the pipeline (plan, check, compare) every front end calls."""
