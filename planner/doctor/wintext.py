"""Read Windows event text people paste: Event Viewer 'Copy details as text', `wevtutil qe /f:text`, and bare messages."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Optional

from lxml import etree

from planner.doctor.readers import RawRecord

# "Log Name:      System" (Copy details as text) or "  Log Name: System" under "Event[0]:" (wevtutil /f:text)
_KEY = re.compile(r"^\s*(Log Name|Source|Date|Event ID|Task Category|Task|Level|Opcode|Keywords?|User|User Name|"
                  r"Computer|Description|Event Xml):\s*(.*)$")
_RECORD = re.compile(r"^Event\[\d+\]:?\s*$")
# The message alone (Event Viewer's General tab, a one-line quote): the words say which event it is.
MESSAGES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], tuple[str, int]]], ...] = (
    (re.compile(r"The description for Event ID (\d{1,5}) (?:from|in) source (\S+?) cannot be found", re.I),
     lambda m, t: (m.group(2), _nvlddmkm_id(m.group(2), int(m.group(1)), t))),
    (re.compile(r"Display driver (?:(\S+) )?stopped responding and has (?:successfully )?recovered", re.I),
     lambda m, t: ("Display", 4101)),
    (re.compile(r"The system has rebooted without cleanly shutting down first", re.I),
     lambda m, t: ("Kernel-Power", 41)),
    (re.compile(r"The previous system shutdown at .{3,60}? was unexpected", re.I),
     lambda m, t: ("EventLog", 6008)),
    (re.compile(r"The computer has rebooted from a bugcheck", re.I), lambda m, t: ("BugCheck", 1001)),
    (re.compile(r"A fatal hardware error has occurred", re.I), lambda m, t: ("WHEA-Logger", 18)),
    (re.compile(r"A corrected hardware error has occurred", re.I),
     lambda m, t: ("WHEA-Logger", 17 if "PCI Express" in t else 19)),
    (re.compile(r"Reset(?:ting)? TDR occurred on GPUID", re.I), lambda m, t: ("nvlddmkm", 153)),
    (re.compile(r"Graphics Exception: ", re.I), lambda m, t: ("nvlddmkm", 13)),
)
_BUGCHECK = re.compile(r"bugcheck was: (0x[0-9a-fA-F]{1,16})")
_EPOCH = datetime(1970, 1, 1)
CONTEXT = 12  # lines of a pasted message read with its first one ('Error occurred on GPUID' comes ~7 lines on)
_CODE = re.compile(r"^(?:import \w|from [\w.]+ import |def \w+\(|class \w+[(:])")


def _nvlddmkm_id(source: str, event_id: int, text: str) -> int:
    """nvlddmkm writes its GPU reset (153) as '\\Device\\VideoN Error occurred on GPUID: 100'; some drivers log that
    same text under Event ID 0, which is no catalogued event: it is read as the reset it describes."""
    if source.lower() == "nvlddmkm" and event_id == 0 and "Error occurred on GPUID" in text:
        return 153
    return event_id


def sniff_text(head: list[str]) -> Optional[str]:
    """'details-text' (Copy details as text, wevtutil /f:text), 'message-text' (bare messages), or None."""
    for line in head:
        text = line.strip().lstrip("\ufeff")
        if _RECORD.match(text) or re.match(r"^Log Name:\s", text):
            return "details-text"
    if any(_CODE.match(line) for line in head):
        return None  # a program quoting these messages in its strings is not a paste of them
    for line in head:
        if any(p.search(line) for p, _ in MESSAGES):
            return "message-text"
    return None


class WindowsTextReader:
    """Yields RawRecords from pasted Windows event text; lines it cannot place are skipped and counted."""

    def __init__(self, lines: Iterator[str], name: str, fmt: str, observe: Callable[[str], str] = lambda t: t):
        self.name, self.format, self._lines, self._observe = name, fmt, lines, observe
        self.skipped = 0
        self.skipped_example = ""
        self.clock = "none" if fmt == "message-text" else "local"
        self.utc = False  # wevtutil /f:text writes UTC dates ('...Z')
        self.logs: set[str] = set()  # the 'Log Name:' values seen (System, Security, Application...)

    def __iter__(self) -> Iterator[RawRecord]:
        return self._messages() if self.format == "message-text" else self._details()

    # ---- bare messages -----------------------------------------------------------------------------------------
    def _messages(self) -> Iterator[RawRecord]:
        # A message's own lines follow its first one: each match waits for CONTEXT lines, so memory stays bounded.
        pending: list[tuple[int, Callable[[re.Match[str], str], tuple[str, int]], re.Match[str], list[str]]] = []
        for n, line in enumerate(self._lines, 1):
            for item in pending:
                item[3].append(line.strip())
            while pending and len(pending[0][3]) >= CONTEXT:
                yield self._message_record(*pending.pop(0))
            for pattern, key in MESSAGES:
                m = pattern.search(line)
                if m:
                    pending.append((n, key, m, [line.strip()]))
                    break
        for item in pending:
            yield self._message_record(*item)

    @staticmethod
    def _message_record(n: int, key: Callable[[re.Match[str], str], tuple[str, int]], m: re.Match[str],
                        lines: list[str]) -> RawRecord:
        context = " ".join(lines)
        provider, event_id = key(m, context)
        return _record(_EPOCH + timedelta(seconds=n), provider, event_id, context, f"line {n}")

    # ---- Copy details as text / wevtutil /f:text ---------------------------------------------------------------
    def _details(self) -> Iterator[RawRecord]:
        fields: dict[str, str] = {}
        description: list[str] = []
        xml: list[str] = []
        state, start = "", 0
        for n, raw in enumerate(self._lines, 1):
            line = raw.rstrip("\r\n").lstrip("\ufeff")
            if state == "xml":
                xml.append(line)
                if "</Event>" in line:
                    state = "after"
                continue
            if _RECORD.match(line.strip()):
                if fields:
                    yield from self._emit(fields, description, xml, start)
                fields, description, xml, state, start = {}, [], [], "", n
                continue
            m = _KEY.match(line) if state != "description" or not line.startswith(" ") else None
            if m and not (state == "description" and m.group(1) not in ("Event Xml", "Log Name")):
                key, value = m.group(1), m.group(2).strip()
                if key == "Log Name" and "Source" in fields:
                    yield from self._emit(fields, description, xml, start)
                    fields, description, xml = {}, [], []
                if not fields:
                    start = n
                if key == "Description":
                    state = "description"
                    if value:
                        description.append(value)
                elif key == "Event Xml":
                    state = "xml"
                    if value:
                        xml.append(value)
                else:
                    fields[key] = value
                    state = ""
            elif state == "description":
                description.append(line.strip())
            elif line.strip():
                self.skipped += 1
                self.skipped_example = self.skipped_example or line.strip()[:60]
        if fields:
            yield from self._emit(fields, description, xml, start)

    def _emit(self, fields: dict[str, str], description: list[str], xml: list[str], start: int) -> Iterator[RawRecord]:
        source, event_id, date = fields.get("Source", ""), fields.get("Event ID", ""), fields.get("Date", "")
        if not source or not event_id.strip().isdigit():
            self.skipped += 1
            self.skipped_example = self.skipped_example or f"record at line {start} (no Source or Event ID)"
            return
        data = _xml_data("\n".join(xml)) if xml else {}
        message = " ".join(x for x in description if x).strip()
        utc = date.endswith("Z")
        self.utc = self.utc or utc
        if fields.get("Log Name"):
            self.logs.add(fields["Log Name"])
        stamp: datetime | str
        if not date:  # a copy trimmed to Source, Event ID and Description: the record's place stands for its time
            stamp, self.clock = _EPOCH + timedelta(seconds=start), "none"
        else:
            stamp = date if utc else self._observe(date)
        provider = source.removeprefix("Microsoft-Windows-")
        yield RawRecord(stamp=stamp, provider=provider, event_id=_nvlddmkm_id(provider, int(event_id), message),
                        message=message, data=data, where=f"record at line {start}", utc=utc)


def _record(stamp: datetime, provider: str, event_id: int, message: str, where: str) -> RawRecord:
    data: dict[str, str] = {}
    code = _BUGCHECK.search(message)
    if code:
        data["param1"] = code.group(1)
    return RawRecord(stamp=stamp, provider=provider, event_id=event_id, message=message, data=data, where=where)


def _xml_data(text: str) -> dict[str, str]:
    """<Data Name="BugcheckCode">0</Data> ... from the 'Event Xml:' part (an unreadable one gives nothing)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except (etree.XMLSyntaxError, ValueError):
        return {}
    if root is None:
        return {}
    out: dict[str, str] = {}
    for el in root.iter(tag=etree.Element):
        if el.tag.rpartition("}")[2] == "Data" and el.get("Name"):
            out[el.get("Name")] = (el.text or "").strip()
    return out
