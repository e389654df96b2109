"""Open an uploaded log as a stream of text lines: detect the encoding, never load the whole file."""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from planner.errors import InputError
from planner.validation import Source, open_binary

SNIFF_BYTES = 64 * 1024
MAX_LINE_CHARS = 1_000_000  # longer lines come out in pieces (XML may be one line; CSV/text may not)
BLOCK_BYTES = 256 * 1024  # read and decode this much at once (always less than MAX_LINE_CHARS)
_BINARY_MAGIC = {
    b"ElfFile\x00": "a binary .evtx log; export it as text first (wevtutil qe System /f:xml, or Event Viewer "
    "'Save All Events As' CSV)",
    b"PK\x03\x04": "a ZIP archive; unzip it first",
    b"\x1f\x8b": "a gzip archive; decompress it first",
    b"%PDF": "a PDF document, not a log export",
}


@dataclass(frozen=True)
class TextStream:
    """An opened text source: its detected encoding, a display name and a line iterator."""

    name: str
    encoding: str
    lines: Iterator[str]


def _detect(head: bytes, name: str) -> str:
    """Codec name for the bytes at the start of a file (BOM first, then NUL-byte and UTF-8 checks)."""
    if not head:
        raise InputError(f"{name} is empty")
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise InputError(f"{name} is {what}")
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF32_LE) or head.startswith(codecs.BOM_UTF32_BE):
        return "utf-32"
    if head.startswith(codecs.BOM_UTF16_LE) or head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    sample = head[: len(head) - (len(head) % 2)]
    if len(sample) >= 4:
        even_nul = sample[0::2].count(0) / (len(sample) // 2)
        odd_nul = sample[1::2].count(0) / (len(sample) // 2)
        if odd_nul > 0.4 and even_nul < 0.05:
            return "utf-16-le"  # ASCII text in UTF-16 LE without a BOM
        if even_nul > 0.4 and odd_nul < 0.05:
            return "utf-16-be"
    if b"\x00" in head:
        raise InputError(f"{name} looks binary (NUL bytes), not a text export")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a multi-byte char cut at the sniff boundary
            return "cp1252"  # legacy Windows ANSI export (e.g. French Windows)
    return "utf-8"


class Partial(str):
    """A piece of a line longer than MAX_LINE_CHARS; the rest follows in the next piece(s)."""


def _byte_lines(raw: io.BufferedIOBase, encoding: str) -> Iterator[str]:
    """Decode line by line (exact line numbers in errors) for byte-oriented encodings; whole blocks of lines are
    decoded at once when they decode cleanly, which gives the same lines several times faster."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")  # carries a char split at a cut
    while True:
        chunk = raw.read(BLOCK_BYTES)
        if not chunk:
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail
            return
        if not chunk.endswith(b"\n"):
            start = chunk.rfind(b"\n") + 1  # the last line continues: read it as readline(MAX_LINE_CHARS) would
            chunk += raw.readline(MAX_LINE_CHARS - (len(chunk) - start))
        state = decoder.getstate()
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError:  # redo the block line by line from the same state, to stop at the bad line
            decoder.setstate(state)
            yield from _decode_each(chunk, decoder)
            continue
        pieces = text.split("\n")
        last = pieces.pop()
        yield from [piece + "\n" for piece in pieces]
        if last:  # a line cut at MAX_LINE_CHARS bytes, or the end of the file without a final newline
            cut = len(chunk) - (chunk.rfind(b"\n") + 1) == MAX_LINE_CHARS
            yield Partial(last) if cut else last


def _decode_each(chunk: bytes, decoder: codecs.IncrementalDecoder) -> Iterator[str]:
    pieces = chunk.split(b"\n")
    last = pieces.pop()
    for piece in pieces:
        text = decoder.decode(piece + b"\n")
        if text:
            yield text
    if last:
        text = decoder.decode(last)
        if text:
            yield Partial(text) if len(last) == MAX_LINE_CHARS else text


def _wide_lines(text: io.TextIOBase) -> Iterator[str]:
    while True:
        line = text.readline(MAX_LINE_CHARS)
        if not line:
            return
        yield Partial(line) if not line.endswith("\n") and len(line) == MAX_LINE_CHARS else line


def whole_lines(lines: Iterator[str], name: str) -> Iterator[str]:
    """For line-based formats (CSV, text, JSONL): refuse a line too long to be a log line."""
    for number, line in enumerate(lines, 1):
        if isinstance(line, Partial):
            raise InputError(f"{name}: line {number} is over {MAX_LINE_CHARS} characters; not a text log")
        yield line


def _checked_lines(lines: Iterator[str], name: str, encoding: str) -> Iterator[str]:
    number = 0
    try:
        for line in lines:
            number += 1
            if "\x00" in line:
                raise InputError(f"{name}: NUL byte on line {number}; wrong encoding or a binary file")
            yield line
    except UnicodeError as exc:  # a codec may raise the base class, which has no .reason
        why = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise InputError(f"{name}: not valid {encoding} text near line {number + 1} ({why})") from None


def as_source(path_or_text: Source) -> Source:
    """A str with a line break (or starting with '<') is log text; any other str is a path."""
    if isinstance(path_or_text, str):
        stripped = path_or_text.lstrip("\ufeff \t")
        if "\n" in path_or_text or stripped.startswith("<"):
            return path_or_text.encode("utf-8")
        if not stripped:
            raise InputError("no log given (empty text)")
    return path_or_text


@contextmanager
def open_text(source: Source) -> Iterator[TextStream]:
    """Open a path, bytes or binary file object as lines of text, streaming (bounded memory)."""
    with open_binary(source, "a log file") as (fh, name):
        buffered = fh if isinstance(fh, io.BufferedReader) else io.BufferedReader(_Raw(fh), SNIFF_BYTES)
        head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        encoding = _detect(head, name)
        if not encoding.startswith("utf-16") and not encoding.startswith("utf-32"):
            lines = _checked_lines(_byte_lines(buffered, encoding), name, encoding)
            yield TextStream(name=name, encoding=encoding, lines=lines)
            return
        text = io.TextIOWrapper(buffered, encoding=encoding, errors="strict", newline=None)
        try:
            yield TextStream(name=name, encoding=encoding, lines=_checked_lines(_wide_lines(text), name, encoding))
        finally:
            text.detach()


class _Raw(io.RawIOBase):
    """Adapter so any readable binary object can sit under a BufferedReader (for peek)."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._fh.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        return n
