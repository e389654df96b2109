"""Import a shared build: a token, our JSON or a Markdown table, matched to the catalog and checked."""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from planner.catalog.load import Catalog
from planner.compat.checker import CheckReport, check_parts
from planner.errors import ShareError
from planner.catalog.models import AnyPart, Memory
from planner.money import check_currency
from planner.share.export import SharedBuild, build_from_catalog, build_from_json
from planner.share.token import measurements_sentence
from planner.catalog.match import rank
from planner.share.part_index import index_for
from planner.request import Request
from planner.settings import MAX_GPUS
from planner.validation import load_json
from planner.plan_view import UNVERIFIED_MARK
from planner.share.token import MATCH_THRESHOLD, _TYPE_ALIASES, decode_token
from planner.share.answer import check_listed, list_findings
from planner.share.lines import kind_of, match_line
from planner.share.readers import read_list

# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class Match:
    category: Optional[str]
    text: str
    quantity: int
    part: Optional[AnyPart] = None
    how: str = "none"  # id | name | fuzzy | exact | board | model | twin | generic | picked | none
    note: str = ""
    confidence: Optional[float] = None  # how sure the match is, 0..1 (None: an id or a token, certain)
    line: Optional[int] = None  # the line of the pasted list it came from
    candidates: tuple[tuple[str, str, float], ...] = ()  # closest parts to pick from: (id, name, score)
    price: str = ""  # the price cell or text the list gave for the line, as written

    @property
    def generic(self) -> bool:
        """A stand-in built from the line's own words, not a catalog product."""
        return self.how == "generic"


def match_part(catalog: Catalog, text: str, category: Optional[str], quantity: int = 1) -> Match:
    """The catalog matcher (exact id or name first, then a unique fragment, then the best-scoring part);
    unmatched says the best guess. An index of the category keeps a row's cost to the parts that can match."""
    q = text.strip()
    if q in catalog.parts and (category is None or catalog.parts[q].category == category):
        return Match(category, text, quantity, catalog.parts[q], "id")
    index = index_for(catalog, category)
    hit = index.find_exact(q)
    if hit is None:
        contains = index.containing(q.lower().split())
        hit = contains[0] if len(contains) == 1 else None
    if hit is not None:
        return Match(category, text, quantity, hit, "name")  # type: ignore[arg-type]
    ranked = rank(q, index.candidates(q), category, typos=True)
    if not ranked:
        return Match(category, text, quantity, note="no catalog part resembles it")
    best, part = ranked[0]
    if len(ranked) > 1 and ranked[1][0] == best:
        return Match(category, text, quantity, note=f"ambiguous: {part.id} or {ranked[1][1].id}")
    if best < MATCH_THRESHOLD:
        return Match(category, text, quantity, note=f"closest is {part.id} ({part.name}), {best:.0%} alike")
    return Match(category, text, quantity, part, "fuzzy", f"{best:.0%} of its name found")  # type: ignore[arg-type]


MAX_CELL_CHARS = 1_000  # a part cell with its link is ~200 characters; PCPartPicker's longest is far below this
MAX_ROWS = 200  # a build list has some 10 to 30 rows
MAX_IMPORT_S = 10.0  # matching a whole list; each row is milliseconds even on a 100 000-part catalog


def find_link(cell: str) -> Optional[tuple[int, str]]:
    """The first Markdown link `[text](address "title")` in a cell: (where it starts, its text), else None.
    One pass left to right, each character looked at a bounded number of times (a regex for this backtracks
    quadratically on a cell of `[`)."""
    n, i = len(cell), 0
    while True:
        start = cell.find("[", i)
        if start < 0:
            return None
        j = start + 1
        while j < n and cell[j] != "]":  # the text: anything but an unescaped ]
            j += 2 if cell[j] == "\\" else 1
        if j >= n:
            return None  # no ] after this [: none after a later [ either
        k = j + 1
        if k < n and cell[k] == "(":
            k += 1
            while k < n and cell[k].isspace():
                k += 1
            while k < n and not cell[k].isspace() and cell[k] != ")":  # the address
                k += 1
            if k >= n:
                return None  # no ) or space after this (: no later link can close either
            after = k
            while k < n and cell[k].isspace():
                k += 1
            if k < n and cell[k] == '"' and after < k:  # an optional title after a space
                close = cell.find('"', k + 1)
                if close >= 0:
                    k = close + 1
                    while k < n and cell[k].isspace():
                        k += 1
            if k < n and cell[k] == ")":
                return start, cell[start + 1:j]
        i = j + 1


def parse_markdown(text: str) -> list[tuple[Optional[str], str, int, str]]:
    """Rows of a `Type | Item | Price` table as (category or None, item text, quantity, price cell).
    A cell over MAX_CELL_CHARS or a table over MAX_ROWS part rows is refused (ShareError)."""
    rows: list[tuple[Optional[str], str, int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())]
        if len(cells) < 2:
            continue
        if cells and cells[0] == "" and line.strip().startswith("|"):
            cells = cells[1:]
        if cells and cells[-1] == "" and line.strip().endswith("|"):
            cells = cells[:-1]
        longest = max((len(c) for c in cells), default=0)
        if longest > MAX_CELL_CHARS:
            raise ShareError(f"line {number}: a cell of {longest} characters is over the {MAX_CELL_CHARS}-character "
                             "limit for one part; a build list names each part in far fewer")
        if len(cells) < 2 or re.fullmatch(r":?-{2,}:?", cells[0]) or not cells[0]:
            continue
        label = re.sub(r"[*_`]", "", cells[0]).strip().lower()
        if label in ("type", "total", "category"):
            continue
        item = cells[1]
        link = find_link(item)
        name = link[1] if link else re.sub(r"(?<!\\)[*`]|(?<![\w\\])_|(?<!\\)_(?!\w)", "", item)  # keep WD_Black

        qty = 1
        m = re.match(r"\s*(\d{1,2})\s*[x×]\s+(.*)", name if not link else item[: link[0]] + name)
        if m:
            qty, name = int(m.group(1)), m.group(2)
        name = re.sub(r"\\(.)", r"\1", name).strip()
        if name.endswith(UNVERIFIED_MARK):  # our own export's mark of a row not re-read (planner.plan_view)
            name = name[: -len(UNVERIFIED_MARK)].strip()
        if name:
            cat = _TYPE_ALIASES.get(label)
            rows.append((cat, name if cat else f"{label}: {name}", qty, cells[2] if len(cells) > 2 else ""))
            if len(rows) > MAX_ROWS:
                raise ShareError(f"the table has more than {MAX_ROWS} part rows; a build list has far fewer")
    return rows


@dataclass
class ImportResult:
    kind: str  # token | json | markdown
    matches: list[Match]
    inputs: Optional[Request] = None
    notes: list[str] = field(default_factory=list)
    report: Optional[CheckReport] = None
    build: Optional[SharedBuild] = None
    lines: list[Match] = field(default_factory=list)  # a posted list: every part line as matched, before merging
    list_prices: list[Any] = field(default_factory=list)  # planner.share.list_prices.ListPrice per priced line
    from_sender: bool = False  # the inputs are the sender's (a link, a token, our JSON): else only parts came
    measurements: tuple[Any, ...] = ()  # the sender's measured speeds a token carried

    @property
    def matched(self) -> list[Match]:
        return [m for m in self.matches if m.part is not None]

    @property
    def unmatched(self) -> list[Match]:
        return [m for m in self.matches if m.part is None]

    @property
    def list_total(self) -> Optional[tuple[Any, str]]:
        """The list's total (amount, currency) when its prices are in one currency, else None."""
        from planner.share.list_prices import list_total

        return list_total(self.list_prices)

    @property
    def measurements_sentence(self) -> str:
        """'2 measured speeds from the sender: ...' for the measured speeds the token carried."""
        return measurements_sentence(self.measurements)

    def parts(self) -> list[tuple[str, int]]:
        """(id, quantity) of the matched catalog parts (generic stand-ins are checked but not exported)."""
        return [(m.part.id, m.quantity) for m in self.matched if not m.generic]  # type: ignore[union-attr]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "matched": [{"category": m.part.category, "id": m.part.id, "name": m.part.name,  # type: ignore[union-attr]
                         "quantity": m.quantity, "from": m.text, "how": m.how, "note": m.note, "line": m.line,
                         "confidence": m.confidence, "generic": m.generic} for m in self.matched],
            "unmatched": [{"category": m.category, "text": m.text, "reason": m.note, "line": m.line,
                           "quantity": m.quantity,
                           "candidates": [{"id": i, "name": n, "score": s} for i, n, s in m.candidates]}
                          for m in self.unmatched],
            "notes": list(self.notes),
            "inputs": None if self.inputs is None else self.inputs.model_dump(mode="json"),
            "check": None if self.report is None else self.report.to_json(),
            "build": None if self.build is None else self.build.to_json(),
            "list_prices": [p.to_json() for p in self.list_prices], "from_sender": self.from_sender,
            "measurements": [m.model_dump(mode="json") for m in self.measurements],
        }


def _merge(matches: list[Match], notes: list[str]) -> list[Match]:
    """Repeated rows of one part add up (PCPartPicker lists two GPUs as two rows); one part per category."""
    merged: dict[str, Match] = {}
    out: list[Match] = []
    for m in matches:
        if m.part is None:
            out.append(m)
            continue
        prev = merged.get(m.part.category)
        if prev is None:
            merged[m.part.category] = m
            out.append(m)
        elif prev.part.id == m.part.id:  # type: ignore[union-attr]
            i = out.index(prev)
            out[i] = merged[m.part.category] = dataclasses.replace(prev, quantity=prev.quantity + m.quantity)
        else:
            notes.append(f"a build takes one {m.part.category}; kept {prev.part.id}, left out {m.part.id}")  # type: ignore[union-attr]
    return out


def _from_token(raw: str, catalog: Catalog) -> tuple[list[Match], Optional[Request], tuple[Any, ...]]:
    state = decode_token(raw, catalog)
    return ([Match(catalog.parts[i].category, i, q, catalog.parts[i], "id") for i, q in state.parts], state.inputs,
            state.measurements)


def _from_json(raw: str, catalog: Catalog) -> tuple[list[Match], Optional[Request], tuple[str, ...]]:
    data = load_json(raw, "the pasted JSON is invalid", ShareError)
    shared = build_from_json(data)
    matches = []
    for ln in shared.lines:
        m = match_part(catalog, ln.part_id, ln.category, ln.quantity)
        matches.append(m if m.part else match_part(catalog, ln.name, ln.category, ln.quantity))
    owned = tuple(m.part.id for m, ln in zip(matches, shared.lines) if ln.owned and m.part)
    return matches, shared.inputs, owned


def _from_list(raw: str, catalog: Catalog, notes: list[str],
               picks: dict[int, str]) -> tuple[list[Match], tuple[str, ...], str]:
    """Rows of a posted list in any form `readers` sniffs, each matched by `lines.match_line`; `picks` maps a line
    number to the part id the user chose for it."""
    form, rows = read_list(raw)
    if not rows:
        if form == "markdown":
            raise ShareError("no part rows found in the table (expected `Type | Item | Price` rows)")
        raise ShareError("not a build link, token, JSON or part list: no part lines found (paste a table, "
                         "PCPartPicker's text or Markdown export, `Part: name` lines or bullets; see docs/sharing.md)")
    unknown = [f"{ln}={pid}" for ln, pid in picks.items() if pid not in catalog.parts]
    if unknown:
        raise ShareError(f"--pick {unknown[0]}: no such part id in the catalog; `planner catalog list` shows them")
    lines_seen = {r.line for r in rows}
    stray = [ln for ln in picks if ln not in lines_seen]
    if stray:
        raise ShareError(f"--pick line {stray[0]}: the list has no part on that line (its part lines: "
                         f"{', '.join(str(r.line) for r in rows[:20])})")
    matches: list[Match] = []
    owned: list[str] = []
    deadline = time.monotonic() + MAX_IMPORT_S
    for done, row in enumerate(rows):
        if time.monotonic() > deadline:
            raise ShareError(f"matching the list took over {MAX_IMPORT_S:g} s (stopped after {done} of {len(rows)} "
                             "rows); paste a shorter list")
        if row.line in picks:
            part = catalog.parts[picks[row.line]]
            matches.append(Match(part.category, row.text or part.name, row.quantity, part, "picked",
                                 "chosen by the user", 1.0, row.line, price=row.price))
            continue
        cat = kind_of(row)
        if cat is None:
            shown = f"{row.label}: {row.text}" if row.label else row.text
            if shown.strip():
                notes.append(f"line {row.line}: skipped {shown[:80]!r}: not a part the planner builds with")
            continue
        lm = match_line(catalog, row, cat)
        matches.append(Match(cat, row.text or (row.label or ""), row.quantity, lm.part,
                             lm.how if lm.part is not None else "none", lm.note, lm.confidence, row.line,
                             tuple(lm.candidates), row.price))
        if lm.part is not None and row.price.strip().lower() == "owned":
            owned.append(lm.part.id)
    return matches, tuple(owned), form


def _memory_total(matches: list[Match], notes: list[str]) -> list[Match]:
    """Memory lines as one kit: a quantity (8 x 64 GB DIMMs, 3 kits) multiplies the modules; several different
    kits add up to a capacity-only stand-in (their type and speed may differ)."""
    mem = [m for m in matches if m.category == "memory" and m.part is not None]
    if not mem:
        return matches
    rest = [m for m in matches if not (m.category == "memory" and m.part is not None)]
    if len(mem) == 1 and (mem[0].quantity <= 1 or getattr(mem[0].part, "stated_only", False)):
        return matches
    from types import SimpleNamespace

    def gb(m: Match) -> int:
        cap = getattr(m.part, "capacity_gb", 0) or 0
        return cap * (m.quantity if not getattr(m.part, "stated_only", False) else 1)

    if len(mem) == 1 and isinstance(mem[0].part, Memory):  # one kit (catalog or generic) bought several times
        m, kit = mem[0], mem[0].part
        part = kit.model_copy(update={"id": f"{kit.id}-x{m.quantity}", "modules": kit.modules * m.quantity,
                                      "name": f"{m.quantity} x {kit.name}"})
        notes.append(f"memory: {m.quantity} x {kit.id} read as one set of {part.modules} modules")
        merged = Match("memory", m.text, 1, part, m.how, m.note, m.confidence, m.line, m.candidates)
    else:
        total = sum(gb(m) for m in mem)
        part = SimpleNamespace(id=f"generic-memory-{total}gb", name=f"{total} GB of memory from {len(mem)} lines",
                               brand="generic", category="memory", capacity_gb=total, stated_only=True,
                               source="sum of the list's memory lines")
        notes.append(f"memory: {len(mem)} lines add up to {total} GB (checked by capacity only)")
        merged = Match("memory", "; ".join(m.text for m in mem), 1, part, "generic", "sum of the memory lines",
                       min((m.confidence or 1.0) for m in mem), mem[0].line)
    first = matches.index(mem[0])
    out = [m for m in matches[:first] if m in rest] + [merged] + [m for m in matches[first:] if m in rest]
    return out


_PERMALINK = re.compile(r"[?&]b=(v[12]\.[A-Za-z0-9_\-]+)")


def _sender_settings(raw: str, catalog: Catalog, notes: list[str]) -> Optional[Request]:
    """The sender's inputs from the permalink our Markdown export puts under the table (None when absent)."""
    m = _PERMALINK.search(raw)
    if m is None:
        return None
    try:
        inputs = decode_token(m.group(1), catalog).inputs
    except ShareError as exc:
        notes.append(f"the link in the list could not be read ({exc}); the sender's settings were not restored")
        return None
    notes.append("restored the sender's settings from the link in the list")
    return inputs


def import_build(text: str, catalog: Catalog, *, currency: Optional[str] = None,
                 picks: Optional[dict[int, str]] = None) -> ImportResult:
    """Read a pasted link/token, our JSON (or recommend output) or a posted list in any common form (tables,
    PCPartPicker exports, bullets, `Part: name` lines); match, check and price it. `picks`: line -> part id."""
    raw = (text or "").strip()
    if not raw:
        raise ShareError("nothing to import: paste a link, a build token, our JSON or a Markdown table")
    if len(raw) > 1_000_000:
        raise ShareError("the pasted text is over 1 MB; a build list is far smaller")
    notes: list[str] = []
    owned: tuple[str, ...] = ()
    measured: tuple[Any, ...] = ()
    if raw.startswith("{"):
        matches, inputs, owned = _from_json(raw, catalog)
        kind = "json"
    elif "\n" not in raw and (re.match(r"v\d+\.", raw) or "b=" in raw or raw.startswith(("http://", "https://"))):
        matches, inputs, measured = _from_token(raw, catalog)
        kind = "token"
    else:
        matches, owned, form = _from_list(raw, catalog, notes, picks or {})
        inputs, kind = _sender_settings(raw, catalog, notes), form
        return _answer_list(raw, catalog, matches, owned, inputs, notes, kind, currency)
    result = ImportResult(kind, _merge(matches, notes), inputs, notes, from_sender=inputs is not None,
                          measurements=measured)
    parts = result.parts()
    if not parts:
        return result
    inputs = inputs or Request(currency=currency or "EUR")
    gpus = next((q for i, q in parts if catalog.parts[i].category == "gpu"), inputs.gpu_count or 1)
    result.inputs = inputs = _list_inputs(inputs, gpus, owned, currency)
    parts = [(i, gpus if catalog.parts[i].category == "gpu" else 1) for i, _ in parts]
    owned_here = tuple(i for i in inputs.owned if i in dict(parts))
    result.report = check_parts(catalog, [catalog.parts[i] for i, _ in parts], gpu_count=gpus,
                                power_fraction=inputs.power_fraction, workload=inputs.workload,
                                precision=inputs.precision, owned=owned_here, used=inputs.used,
                                model_params=inputs.model_params)
    result.build = build_from_catalog(catalog, parts, currency=inputs.currency, inputs=inputs, owned=owned_here,
                                      used=inputs.used)
    return _with_list_prices(result, catalog, owned_here, inputs.used)


def _list_inputs(inputs: Request, gpus: int, owned: tuple[str, ...], currency: Optional[str]) -> Request:
    """The request an imported build is checked with: its GPU count (1 to MAX_GPUS), its owned parts, the currency."""
    if not 1 <= gpus <= MAX_GPUS:
        raise ShareError(f"{gpus} GPUs: the planner checks builds with 1 to {MAX_GPUS} identical GPUs")
    update: dict[str, Any] = {"gpu_count": gpus, "owned": tuple(dict.fromkeys((*inputs.owned, *owned)))}
    if currency:
        update["currency"] = check_currency(currency)
    return inputs.model_copy(update=update)


def _with_list_prices(result: ImportResult, catalog: Catalog, owned_here: tuple[str, ...], used: Any) -> ImportResult:
    """Attach the list's own prices for the catalog parts it matched (not the owned ones), and say what was unread."""
    from planner.share.list_prices import list_prices

    priced = [m for m in result.matched if m.part.id in catalog.parts and m.part.id not in owned_here]  # type: ignore[union-attr]
    result.list_prices, unread = list_prices(priced, catalog, used)
    result.notes.extend(unread)
    return result


def _answer_list(raw: str, catalog: Catalog, matches: list[Match], owned: tuple[str, ...], inputs: Optional[Request],
                 notes: list[str], kind: str, currency: Optional[str]) -> ImportResult:
    """Check what a posted list's lines matched (catalog parts and stand-ins), with the quantities it states."""
    extra = list_findings(matches, raw)
    merged = _merge(_memory_total(matches, notes), notes)
    result = ImportResult(kind, merged, inputs, notes, lines=list(matches), from_sender=inputs is not None)
    found = [m for m in merged if m.part is not None]
    if not found:
        return result
    inputs = inputs or Request(currency=currency or "EUR")
    gpus = next((m.quantity for m in found if m.category == "gpu"), inputs.gpu_count or 1)
    result.inputs = inputs = _list_inputs(inputs, gpus, owned, currency)
    by_cat = {m.category: m.part for m in found if m.category is not None and m.part is not None}
    owned_here = tuple(i for i in inputs.owned if any(p.id == i for p in by_cat.values()))
    report = check_listed(catalog, by_cat, gpu_count=gpus, power_fraction=inputs.power_fraction,
                          workload=inputs.workload, precision=inputs.precision, model_params=inputs.model_params,
                          owned=owned_here, used=inputs.used, currency=inputs.currency)
    report.findings[:0] = [f for f in extra if f.severity.name == "PROBLEM"]
    report.findings.extend(f for f in extra if f.severity.name != "PROBLEM")
    result.report = report
    parts = [(i, gpus if catalog.parts[i].category == "gpu" else 1) for i, _ in result.parts() if i in catalog.parts]
    if parts:
        result.build = build_from_catalog(catalog, parts, currency=inputs.currency, inputs=inputs,
                                          owned=owned_here, used=inputs.used)
    return _with_list_prices(result, catalog, owned_here, inputs.used)
