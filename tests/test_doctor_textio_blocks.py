"""Block decoding in textio gives exactly the lines, pieces and errors of decoding one readline at a time."""

from __future__ import annotations

import codecs
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.doctor import textio


def _outcome(fn, *args) -> tuple[list[tuple[str, bool]], str]:
    got: list[tuple[str, bool]] = []
    try:
        for line in fn(*args):
            got.append(line if isinstance(line, tuple) else (str(line), isinstance(line, textio.Partial)))
    except UnicodeDecodeError as exc:
        return got, exc.reason
    return got, ""


def _reference(data: bytes, encoding: str, limit: int) -> tuple[list[tuple[str, bool]], str]:
    got: list[tuple[str, bool]] = []
    raw = io.BufferedReader(io.BytesIO(data))
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    try:
        while True:
            chunk = raw.readline(limit)
            if not chunk:
                tail = decoder.decode(b"", final=True)
                if tail:
                    got.append((tail, False))
                return got, ""
            text = decoder.decode(chunk)
            if text:
                got.append((text, not chunk.endswith(b"\n") and len(chunk) == limit))
    except UnicodeDecodeError as exc:
        return got, exc.reason


_PIECES = st.sampled_from([b"\n", b"\r\n", b"a", b"step,loss", b"\xc3\xa9", b"\xe2\x82\xac", b"\xc3", b"\x81",
                           b"\xef\xbb\xbf", b"\x00", b"0.5", b"x" * 13])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=60).map(b"".join), st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
       st.integers(4, 24), st.integers(1, 40))
def test_block_decoding_matches_line_decoding(data: bytes, encoding: str, limit: int, block: int) -> None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textio, "MAX_LINE_CHARS", limit)
        m.setattr(textio, "BLOCK_BYTES", min(block, limit - 1))
        fast = _outcome(textio._byte_lines, io.BufferedReader(io.BytesIO(data)), encoding)
    assert fast == _reference(data, encoding, limit)


def test_long_lines_come_out_in_the_same_pieces() -> None:
    data = b"short\n" + b"y" * 2_500_000 + b"\nend\n"
    fast = _outcome(textio._byte_lines, io.BufferedReader(io.BytesIO(data)), "utf-8")
    assert fast == _reference(data, "utf-8", textio.MAX_LINE_CHARS)
    assert [p for _, p in fast[0]] == [False, True, True, False, False]


def test_a_codec_error_without_a_reason_is_still_one_line() -> None:
    """Codecs raise the base UnicodeError too (utf-16/utf-32: 'stream does not start with BOM'), which has no
    .reason: the message was an AttributeError traceback instead of the file's one-line error."""
    def lines():
        yield "first\n"
        raise UnicodeError("UTF-16 stream does not start with BOM")

    with pytest.raises(textio.InputError, match=r"^x\.log: not valid utf-16 text near line 2 \(UTF-16 stream does not "
                                                r"start with BOM\)$"):
        list(textio._checked_lines(lines(), "x.log", "utf-16"))
