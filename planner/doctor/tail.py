"""Follow a growing text file by byte offset: new complete lines only, bounded memory, restart after rotation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from planner.errors import InputError

MAX_LINE_BYTES = 1_000_000  # a longer "line" is not a log line; it is skipped, not buffered
MAX_READ_BYTES = 1024 * 1024  # per read: a backlog is taken in chunks, so memory stays flat
HEAD_BYTES = 64  # first bytes remembered to notice a file truncated and written again before the next look


@dataclass
class Tail:
    """Where we are in one file: inode and offset survive a restart (the watch's state file)."""

    path: str
    offset: int = 0
    inode: int = 0
    partial: bytes = b""  # the start of a line not finished yet (bounded by MAX_LINE_BYTES)
    skipped_long: int = 0
    skipping: bool = False  # inside an over-long line: drop bytes until its end
    rotated: int = 0
    head: str = ""  # hex of the file's first bytes: a file rewritten in place (copytruncate) starts differently
    lines: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # reader-specific state (e.g. the CSV header)
    _more: bool = False  # the last read stopped before the end of the file

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "offset": self.offset, "inode": self.inode, "partial": self.partial.hex(),
                "head": self.head,
                "skipping": self.skipping, "lines": self.lines, "extra": self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any], path: str) -> "Tail":
        tail = cls(path=path)
        if data.get("path") == path:
            tail.offset = int(data.get("offset", 0))
            tail.inode = int(data.get("inode", 0))
            tail.partial = bytes.fromhex(str(data.get("partial", "")))[:MAX_LINE_BYTES]
            tail.skipping = bool(data.get("skipping", False))
            tail.head = str(data.get("head", ""))[:2 * HEAD_BYTES]
            tail.lines = int(data.get("lines", 0))
            tail.extra = dict(data.get("extra") or {})
        return tail

    def chunks(self) -> Iterator[list[str]]:
        """All new complete lines, one bounded chunk at a time, until the end of the file as it is now."""
        while True:
            lines = self.read()
            if not lines and not self._more:
                return
            yield lines

    def read(self) -> list[str]:
        """New complete lines in the next chunk (decoded UTF-8, undecodable bytes replaced)."""
        self._more = False
        path = Path(self.path)
        try:
            st = path.stat()
        except FileNotFoundError:
            return []  # not created yet, or being rotated: try again at the next poll
        if not path.is_file():
            raise InputError(f"{self.path} is not a regular file; the watch follows files a logger appends to")
        with path.open("rb") as fh:
            if self.offset and self.head:
                first = fh.read(len(self.head) // 2).hex()
                if first != self.head[:len(first)]:
                    self._restart()  # copytruncate: the same inode, new bytes from its start, perhaps past offset
            if (self.inode and st.st_ino != self.inode) or st.st_size < self.offset:
                self._restart()  # rotated (a new file under the name) or truncated
            self.inode = st.st_ino
            if st.st_size == self.offset:
                return []
            fh.seek(self.offset)
            chunk = fh.read(min(st.st_size - self.offset, MAX_READ_BYTES))
        if self.offset < HEAD_BYTES and len(self.head) < 2 * HEAD_BYTES:
            self.head = (bytes.fromhex(self.head) + chunk)[:HEAD_BYTES].hex()
        self.offset += len(chunk)
        self._more = self.offset < st.st_size
        return self._split(chunk)

    def _restart(self) -> None:
        """Follow the file from its start again, as `tail -F` does; readers keep what they know (the header)."""
        self.offset, self.partial, self.skipping, self.head = 0, b"", False, ""
        self.rotated += 1

    def _split(self, chunk: bytes) -> list[str]:
        last = chunk.rfind(b"\n")
        whole = self.partial + chunk[:last] if last >= 0 else b""
        if not self.skipping and last >= 0 and (len(whole) <= MAX_LINE_BYTES or max(
                map(len, whole.split(b"\n"))) <= MAX_LINE_BYTES):
            # the common case: every complete line is short, so the whole block decodes at once
            text = whole.decode("utf-8", errors="replace")
            out: list[str] = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
            self.partial = chunk[last + 1:]
            if len(self.partial) > MAX_LINE_BYTES:
                self.partial, self.skipping = b"", True
                self.skipped_long += 1
            self.lines += len(out)
            return out
        out = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            piece = chunk[start:end]
            if self.skipping:
                self.skipping = False
            else:
                line = self.partial + piece
                if len(line) <= MAX_LINE_BYTES:
                    out.append(line.decode("utf-8", errors="replace").rstrip("\r"))
                else:
                    self.skipped_long += 1
            self.partial = b""
            start = end + 1
        rest = chunk[start:]
        if not self.skipping:
            self.partial += rest
            if len(self.partial) > MAX_LINE_BYTES:
                self.partial, self.skipping = b"", True
                self.skipped_long += 1
        self.lines += len(out)
        return out
