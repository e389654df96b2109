"""Stream records out of System-log exports: Windows CSV, wevtutil XML, Format-List text; Linux kernel logs."""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Union

from lxml import etree

from planner.doctor.textio import whole_lines
from planner.doctor.timestamps import DateOrder, LocalStamp, parse_local, parse_utc
from planner.errors import InputError

LogFormat = Literal["csv", "xml", "format-list", "details-text", "message-text", "journal-short", "journal-iso",
                    "journal-full", "journal-json", "dmesg", "dmesg-T", "dmesg-H", "kernel-lines"]
Stamp = Union[datetime, LocalStamp]
RawStamp = Union[datetime, str]  # str: a locale date-time, parsed only if the event is kept
SNIFF_LINES = 50
FORMATS_READ = ("read: Windows Event Viewer CSV, wevtutil /f:xml or /f:text, Get-WinEvent | Format-List, Event Viewer "
                "'Copy details as text' or the General tab's message; Linux journalctl -k (short, short-iso, "
                "short-full, json), syslog/kern.log, dmesg (raw, -T, -H/--reltime) or grep'd kernel lines")
_FL_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*:(?: (.*)|)$")
_FL_TIME_KEYS = ("timecreated", "timegenerated", "timewritten")
_FL_SOURCE_KEYS = ("providername", "source", "provider")
_FL_ID_KEYS = ("id", "eventid", "instanceid")
_FL_KNOWN = set(_FL_TIME_KEYS + _FL_SOURCE_KEYS + _FL_ID_KEYS + ("message", "leveldisplayname", "entrytype", "index"))
_XML_VIEW = re.compile(r"^\s*- <")  # Event Viewer's XML view, copied: "- <Event ...>", "- <System>"
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
PURGE_CHARS = 1 << 20  # XML characters fed between two purges of finished non-event elements


def _purge(node: etree._Element) -> None:
    """Drop finished elements along the open path from the root: at each level every child but the last (the one
    still open, or one finished element) goes; an open <Event> is kept whole until it ends and is read."""
    while len(node):
        if len(node) > 1:
            del node[:-1]
        node = node[-1]
        if isinstance(node.tag, str) and node.tag.rpartition("}")[2] == "Event":
            return


@dataclass(slots=True)
class RawRecord:
    """One event as exported: time (UTC datetime or the raw local text), provider, id, message, named data."""

    stamp: RawStamp
    provider: str
    event_id: int
    message: str = ""
    data: dict[str, str] = field(default_factory=dict)
    where: str = ""  # "line N" or "record at line N", for error messages
    utc: bool = False  # stamp text is an XML SystemTime (UTC)

    def local_stamp(self, name: str) -> Stamp:
        """The parsed time; locale strings become LocalStamps (day/month order resolved later)."""
        if not isinstance(self.stamp, str):
            return self.stamp
        if self.utc:
            return parse_utc(self.stamp)
        stamp = parse_local(self.stamp)
        if stamp is None:
            raise InputError(f"{name}: {self.where}: unreadable date {self.stamp.strip()[:40]!r}")
        return stamp


def _without_hint(head: list[str]) -> list[str]:
    """journalctl may open with a 'Hint: ...' paragraph (indented continuation lines): not log lines."""
    out: list[str] = []
    in_hint = False
    for line in head:
        if line.startswith("Hint: ") or (in_hint and line[:1] in (" ", "\t")):
            in_hint = True
            continue
        in_hint = False
        out.append(line)
    return out


def _joined(fields: dict[str, list[str]]) -> dict[str, str]:
    return {k: "\n".join(v).strip() for k, v in fields.items()}


class LogReader:
    """Detects the format from the first lines, then yields RawRecords one at a time."""

    def __init__(self, lines: Iterator[str], name: str, year: int | None = None) -> None:
        self.name = name
        self.dates = DateOrder()
        self.utc = False
        self.clock = "local"  # "utc", "local" or "boot" (seconds since boot, raw dmesg)
        self.year = year  # for journalctl's short format, which prints no year
        self.kernel: object = None  # the KernelLogReader, for Linux logs
        self._text: object = None  # the Windows text reader (details / message text)
        head = list(itertools.islice(lines, SNIFF_LINES))
        self.format: LogFormat = self._sniff(head)
        self._lines: Iterator[str] = itertools.chain(head, lines)

    @property
    def platform(self) -> str:
        return "linux" if self.format.startswith(("journal", "dmesg", "kernel")) else "windows"

    @property
    def skipped(self) -> tuple[int, str]:
        """Lines no format fits (skipped and counted) and the first of them."""
        src = self.kernel if self.kernel is not None else self._text
        return (src.skipped, src.skipped_example) if src is not None else (0, "")  # type: ignore[attr-defined]

    def _sniff(self, head: list[str]) -> LogFormat:
        first = next((ln.strip().lstrip("\ufeff") for ln in _without_hint(head) if ln.strip()
                      and not ln.startswith("#TYPE")), "")
        if not first:
            raise InputError(f"{self.name} has no events (empty or blank)")
        from planner.doctor.kernel_log import sniff, sniff_lines  # Linux readers build on RawRecord (defined here)
        from planner.doctor.wintext import sniff_text

        linux = sniff(first[:2000])
        if linux is not None and linux != "kernel-lines":
            return "dmesg-H" if linux == "dmesg" and sniff_lines([first]) == "dmesg-H" else linux
        windows = sniff_text([ln[:2000] for ln in head])
        if windows == "details-text" or (windows == "message-text" and not first.startswith("<") and (
                sniff_text([first[:2000]]) or not ("," in first or "\t" in first or _FL_KEY.match(first)))):
            return windows  # type: ignore[return-value]
        from planner.doctor.smi_text import is_smi_paste

        if is_smi_paste([ln[:2000] for ln in head]) and sniff_lines([ln[:2000] for ln in head]) is None:
            raise InputError(f"{self.name} is nvidia-smi output, not a system log: give it as nvidia-smi evidence "
                             "(CLI: `planner doctor smi FILE` or `--smi FILE`; web UI: the nvidia-smi box)")
        linux = sniff_lines([ln[:2000] for ln in _without_hint(head)])
        if linux is not None:
            return linux
        if first.startswith("<") or _XML_VIEW.match(first):
            return "xml"
        m = _FL_KEY.match(first)
        if m and m.group(1).lower() in _FL_KNOWN:
            return "format-list"
        if "," in first or "\t" in first:
            return "csv"
        raise InputError(f"{self.name}: unknown format (first line {first[:60]!r}); {FORMATS_READ}")

    def __iter__(self) -> Iterator[RawRecord]:
        if self.platform == "linux":
            from planner.doctor.kernel_log import KernelLogReader

            reader = KernelLogReader(whole_lines(self._lines, self.name), self.name, self.format,  # type: ignore[arg-type]
                                     self.year)
            self.kernel, self.clock, self.utc = reader, reader.clock, reader.clock == "utc"
            return iter(reader)
        if self.format in ("details-text", "message-text"):
            from planner.doctor.wintext import WindowsTextReader

            text = WindowsTextReader(whole_lines(self._lines, self.name), self.name, self.format, self._local)
            self._text = text
            if self.format == "message-text":
                self.clock = "none"
            return iter(text)
        if self.format == "xml":
            self.clock = "utc"
            self.utc = True
            return self._xml()
        self._lines = whole_lines(self._lines, self.name)
        if self.format == "format-list":
            return self._format_list()
        return self._csv()

    # ---- shared helpers -------------------------------------------------------------------
    def _local(self, text: str) -> str:
        self.dates.observe_text(text)
        return text

    def _event_id(self, text: str, where: str, instance_id: bool = False) -> int:
        try:
            value = int(str(text).strip())
        except ValueError:
            raise InputError(f"{self.name}: {where}: event id {str(text).strip()[:20]!r} is not a number") from None
        return value & 0xFFFF if instance_id else value  # InstanceId carries qualifier bits above 16

    # ---- Event Viewer CSV / Export-Csv ----------------------------------------------------
    def _csv(self) -> Iterator[RawRecord]:
        lines = (ln for ln in self._lines if not ln.startswith("#TYPE"))
        first = next((ln for ln in lines if ln.strip()), "")
        delimiter = "\t" if first.count("\t") > first.count(",") else ","
        rows = csv.reader(itertools.chain([first], lines), delimiter=delimiter)
        try:
            header = [h.strip().lstrip("\ufeff").lower() for h in next(rows)]
            layout = self._csv_layout(header)
            layout["needed"] = max(layout["time"], layout["source"], layout["id"])
            for row in rows:
                if not any(cell.strip() for cell in row):
                    continue
                yield self._csv_record(row, layout, rows.line_num)
        except csv.Error as exc:
            raise InputError(f"{self.name}: malformed CSV near line {rows.line_num}: {exc}") from None

    def _csv_layout(self, header: list[str]) -> dict[str, int]:
        names = {h.replace(" ", ""): i for i, h in enumerate(header)}

        def pick(*keys: str) -> int | None:
            return next((names[k] for k in keys if k in names), None)

        # Export-Csv of Get-WinEvent / Get-EventLog: columns by name.
        layout = {
            "time": pick("timecreated", "timegenerated", "timewritten"),
            "source": pick("providername", "source"),
            "id": pick("id", "eventid"),
            "message": pick("message"),
        }
        if layout["id"] is None and pick("instanceid") is not None:
            layout["id"], layout["instanceid"] = pick("instanceid"), 1
        if layout["time"] is not None and layout["source"] is not None and layout["id"] is not None:
            return {k: v for k, v in layout.items() if v is not None}
        # Event Viewer "Save All Events As" CSV: Level, Date and Time, Source, Event ID, Task Category
        # (translated in other UI languages), then an unnamed message column.
        if len(header) in (5, 6) and "id" in header[3]:
            return {"time": 1, "source": 2, "id": 3, "message": 5}
        raise InputError(
            f"{self.name}: CSV header not recognised ({','.join(header)[:80]!r}); expected Event Viewer's "
            "'Level,Date and Time,Source,Event ID,Task Category' or TimeCreated, ProviderName, Id, Message"
        )

    def _csv_record(self, row: list[str], layout: dict[str, int], line: int) -> RawRecord:
        needed = layout["needed"]
        if len(row) <= needed:
            raise InputError(f"{self.name}: line {line}: {len(row)} fields, expected at least {needed + 1}")
        where = f"line {line}"
        message_at = layout.get("message")
        message = row[message_at] if message_at is not None and message_at < len(row) else ""
        return RawRecord(
            stamp=self._local(row[layout["time"]]),
            provider=row[layout["source"]].strip(),
            event_id=self._event_id(row[layout["id"]], where, "instanceid" in layout),
            message=message.strip(),
            where=where,
        )

    # ---- Get-WinEvent | Format-List text ---------------------------------------------------
    def _format_list(self) -> Iterator[RawRecord]:
        # Values are lists of lines joined once per record: appending continuation lines to a growing
        # string made long messages quadratic.
        fields: dict[str, list[str]] = {}
        last_key = ""
        line_no = start = 0
        for line_no, line in enumerate(self._lines, 1):
            text = line.rstrip("\r\n").lstrip("\ufeff")
            if not text.strip():
                continue
            m = _FL_KEY.match(text) if not text[0].isspace() else None
            if m:
                key = m.group(1).lower()
                if key in fields:  # the same property again: a new record starts
                    yield self._fl_record(_joined(fields), start)
                    fields = {}
                if not fields:
                    start = line_no
                value = (m.group(2) or "").strip()
                fields[key] = [value] if value else []
                last_key = key
            elif fields and last_key:
                fields[last_key].append(text.strip())
            else:
                raise InputError(f"{self.name}: line {line_no}: expected 'Name : value', got {text.strip()[:40]!r}")
        if fields:
            yield self._fl_record(_joined(fields), start)

    def _fl_record(self, fields: dict[str, str], line: int) -> RawRecord:
        where = f"record at line {line}"
        time_key = next((k for k in _FL_TIME_KEYS if k in fields), None)
        source_key = next((k for k in _FL_SOURCE_KEYS if k in fields), None)
        id_key = next((k for k in _FL_ID_KEYS if k in fields), None)
        if time_key is None or source_key is None or id_key is None:
            raise InputError(f"{self.name}: {where}: needs TimeCreated, ProviderName and Id")
        if id_key == "id" or "eventid" not in fields:
            id_text, instance = fields[id_key], id_key == "instanceid"
        else:
            id_text, instance = fields["eventid"], False
        skip = {time_key, source_key, id_key, "message"}
        return RawRecord(
            stamp=self._local(fields[time_key]),
            provider=fields[source_key],
            event_id=self._event_id(id_text, where, instance),
            message=fields.get("message", ""),
            data={k: v for k, v in fields.items() if k not in skip},
            where=where,
        )

    # ---- wevtutil qe System /f:xml ---------------------------------------------------------
    def _xml(self) -> Iterator[RawRecord]:
        # wevtutil prints <Event> elements back to back with no root; wrap them in one so the
        # document is well formed. A DOCTYPE inside the wrapper is a syntax error, so no entities.
        # Memory stays bounded: each <Event> is dropped once read, and every MiB fed, finished elements that are not
        # events (a file of other elements, or a wrapper holding them) are dropped too (_purge).
        parser = etree.XMLPullParser(events=("start", "end"), tag=("{*}Event", "doc"), resolve_entities=False,
                                     no_network=True)
        parser.feed("<doc>")
        root = None
        line_no = 0
        first = True
        fed = 0
        try:
            for line_no, line in enumerate(itertools.chain(self._lines, ["</doc>"]), 1):
                if first and line.strip():
                    line = _XML_DECL.sub("", line.lstrip("\ufeff"), count=1)
                    first = False
                line = _XML_VIEW.sub("<", line, count=1)
                parser.feed(line)
                fed += len(line)
                for kind, elem in parser.read_events():
                    if kind == "start" or elem.tag == "doc":
                        root = elem if root is None else root
                        continue
                    record = self._xml_record(elem, line_no)
                    elem.clear(keep_tail=False)
                    parent = elem.getparent()
                    if parent is not None:
                        del parent[:parent.index(elem) + 1]  # the event and whatever finished before it
                    yield record
                if fed >= PURGE_CHARS and root is not None:
                    fed = 0
                    _purge(root)
            parser.close()
        except etree.XMLSyntaxError as exc:
            raise InputError(f"{self.name}: malformed XML near line {line_no}: {exc.msg}") from None

    def _xml_record(self, event: etree._Element, line: int) -> RawRecord:
        where = f"event ending on line {line}"
        provider = event_id = created = None
        data: dict[str, str] = {}
        unnamed: list[str] = []
        message = ""
        for el in event.iter(tag=etree.Element):
            tag = el.tag.rpartition("}")[2]
            if tag == "Provider":
                provider = el.get("EventSourceName") or el.get("Name")
            elif tag == "EventID":
                event_id = el.text
            elif tag == "TimeCreated":
                created = el.get("SystemTime")
            elif tag == "Data":
                name = el.get("Name")
                if name:
                    data[name] = (el.text or "").strip()
                elif el.text and el.text.strip():
                    unnamed.append(el.text.strip())
            elif tag == "Message":  # /f:RenderedXml carries the rendered text
                message = (el.text or "").strip()
        if provider is None or event_id is None or created is None:
            raise InputError(f"{self.name}: {where}: <Event> lacks Provider, EventID or TimeCreated")
        return RawRecord(
            stamp=created,
            provider=provider,
            event_id=self._event_id(event_id, where),
            message=message or " ".join(unnamed),
            data=data,
            where=where,
            utc=True,
        )
