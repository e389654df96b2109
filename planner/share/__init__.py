"""Share a build: versioned permalink token, Markdown/CSV/JSON export, import of a pasted list (pure)."""

from __future__ import annotations

from planner.share.token import (  # noqa: F401
    DEFAULT_BASE_URL,
    MATCH_THRESHOLD,
    MAX_INFLATED_BYTES,
    MAX_LINES,
    MAX_TOKEN_CHARS,
    SCHEMA,
    SharedState,
    TOKEN_VERSION,
    TYPE_LABELS,
    decode_token,
    encode_token,
    permalink,
    token_from_text,
)
from planner.share.export import (  # noqa: F401
    CSV_COLUMNS,
    SharedBuild,
    SharedLine,
    build_from_catalog,
    build_from_json,
    to_csv,
    to_json_text,
    to_markdown,
)
from planner.share.importing import (  # noqa: F401
    ImportResult,
    Match,
    import_build,
    match_part,
    parse_markdown,
)

__all__ = [
    "CSV_COLUMNS",
    "DEFAULT_BASE_URL",
    "ImportResult",
    "MATCH_THRESHOLD",
    "MAX_INFLATED_BYTES",
    "MAX_LINES",
    "MAX_TOKEN_CHARS",
    "Match",
    "SCHEMA",
    "SharedBuild",
    "SharedLine",
    "SharedState",
    "TOKEN_VERSION",
    "TYPE_LABELS",
    "build_from_catalog",
    "build_from_json",
    "decode_token",
    "encode_token",
    "import_build",
    "match_part",
    "parse_markdown",
    "permalink",
    "to_csv",
    "to_json_text",
    "to_markdown",
    "token_from_text",
]
