"""The versioned permalink token: a Request and the chosen parts, compressed, base64url, CRC-checked, size-bounded."""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import urllib.parse
import zlib
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from pydantic import ValidationError

from planner.catalog.load import Catalog
from planner.errors import PlannerError, ShareError, validation_message
from planner.catalog.models import CATEGORIES
from planner.plan_view import MAX_LINES  # noqa: F401 - parts in one shared build (re-exported)
from planner.request import Request
from planner.vocab import TYPE_LABELS
from planner.validation import load_json

SCHEMA = "planner.build/2"
READ_SCHEMAS = ("planner.build/1", SCHEMA)  # /1 carried v1 inputs
TOKEN_VERSION = "v2"
READ_VERSIONS = ("v1", "v2")
MAX_TOKEN_CHARS = 2048  # a token longer than this is refused before decoding
MAX_INFLATED_BYTES = 64 * 1024  # zip-bomb guard: never inflate more than this
MAX_MEASUREMENTS = 12  # the sender's measured speeds a token carries (planner calibrate), one per card and precision
DEFAULT_BASE_URL = "http://localhost:8501/"
# PCPartPicker's row labels (planner.vocab.TYPE_LABELS); our category ids are accepted too when importing.
_TYPE_ALIASES = {
    **{v.lower(): k for k, v in TYPE_LABELS.items()}, **{c: c for c in CATEGORIES},
    "graphics card": "gpu", "video cards": "gpu", "processor": "cpu", "cpu cooler": "cooler", "ram": "memory",
    "ssd": "storage", "nvme": "storage", "psu": "psu", "power supply unit": "psu", "mainboard": "motherboard",
}
MATCH_THRESHOLD = 0.8  # weighted share of a catalog name found in an imported line to accept it
_HEADER = struct.Struct(">IH")  # CRC-32 of the deflate stream, its length in bytes


# v1 tokens (before the one Request) named two inputs differently and defaulted the budget to EUR 7 000.
_V1_DEFAULTS = {"budget": "7000.00"}


def _v1_inputs(raw: dict[str, Any]) -> dict[str, Any]:
    out = {**_V1_DEFAULTS, **raw}
    if "hours" in out:
        out["baseline_hours"] = out.pop("hours")
    if "model_params_m" in out:
        m = out.pop("model_params_m")
        out["model_params"] = m * 1e6 if isinstance(m, (int, float)) and not isinstance(m, bool) else m
    if out.get("mode") == "cheapest":
        out.pop("budget", None)
    return out


def request_from_inputs(raw: dict[str, Any], version: str = TOKEN_VERSION) -> Request:
    """The Request a token's inputs stand for; any bad value is a ShareError one-liner."""
    try:
        return Request.parse(**(_v1_inputs(raw) if version == "v1" else raw))
    except PlannerError as exc:
        raise ShareError(f"the shared inputs are not valid: {exc}") from None


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class SharedState:
    """What a token carries: the inputs and the chosen parts with quantities."""

    inputs: Request
    parts: tuple[tuple[str, int], ...]
    measurements: tuple[Any, ...] = ()  # the sender's measured speeds (planner.perf.calibration.Measurement)

    @classmethod
    def from_token(cls, token: str, catalog: Optional[Catalog] = None) -> "SharedState":
        """What a link's token carries; every way it can be wrong is one ShareError line (decode_token)."""
        return decode_token(token, catalog)

    def token(self) -> str:
        """The token that carries these inputs, parts and measured speeds (encode_token)."""
        return encode_token(self.inputs, self.parts, self.measurements)

    @property
    def measurements_sentence(self) -> str:
        """'2 measured speeds from the sender: ...' for the measured speeds the token carries."""
        return measurements_sentence(self.measurements)


def measurements_sentence(measurements: Sequence[Any]) -> str:
    """'2 measured speeds from the sender: GeForce RTX 5080 (amp), GeForce GTX 1080 Ti (amp)'."""
    names = ", ".join(f"{m.gpu_name} ({m.precision})" for m in measurements)
    n = len(measurements)
    return f"{n} measured speed{'s' if n > 1 else ''} from the sender: {names}"


# ---------------------------------------------------------------- token


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _measurement_row(m: Any) -> list[Any]:
    return [m.gpu_id, m.gpu_name, m.precision, m.unit, float(f"{m.median:.5g}"), float(f"{m.q25:.5g}"),
            float(f"{m.q75:.5g}"), int(m.points), m.recorded_on.isoformat(), int(m.concurrent)]


def encode_token(inputs: Request, parts: list[tuple[str, int]] | tuple[tuple[str, int], ...],
                 measurements: tuple[Any, ...] | list[Any] = ()) -> str:
    """`v2.` + base64url(CRC-32, length, deflate(JSON of non-default inputs, [id, qty] pairs and the sender's
    measured speeds)); <= 2 KB (measurements that would not fit are left out: the build comes first)."""
    if len(parts) > MAX_LINES:
        raise ShareError(f"a shared build holds at most {MAX_LINES} parts, got {len(parts)}")
    body: dict[str, Any] = {"i": inputs.model_dump(mode="json", exclude_defaults=True),
                            "p": [[str(i), int(q)] for i, q in parts]}
    if measurements:
        body["m"] = [_measurement_row(m) for m in list(measurements)[-MAX_MEASUREMENTS:]]
        token = _pack(body)
        if len(token) <= MAX_TOKEN_CHARS:
            return token
        del body["m"]
    return _pack(body)


def _pack(body: dict[str, Any]) -> str:
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(text) + packer.flush()
    token = f"{TOKEN_VERSION}.{_b64encode(_HEADER.pack(zlib.crc32(stream), len(stream)) + stream)}"
    if len(token) > MAX_TOKEN_CHARS:
        raise ShareError(f"this build makes a {len(token)}-character link (limit {MAX_TOKEN_CHARS}); "
                         "share the JSON export instead")
    return token


def token_from_text(text: str) -> str:
    """The token inside a pasted link (`...?b=v1.xxx`) or the text itself."""
    t = text.strip()
    if "b=" in t and ("?" in t or "&" in t or t.startswith("b=")):
        query = urllib.parse.urlsplit(t).query if "?" in t else t
        values = urllib.parse.parse_qs(query).get("b")
        if values:
            return values[-1].strip()
    return t


def decode_token(token: str, catalog: Optional[Catalog] = None) -> SharedState:
    """Parse a token; every way it can be wrong (version, size, tampering, schema, unknown part) is a ShareError."""
    t = token_from_text(token)
    if len(t) > MAX_TOKEN_CHARS:
        raise ShareError(f"the build token is {len(t)} characters long, over the {MAX_TOKEN_CHARS} limit (refused)")
    version, dot, payload = t.partition(".")
    if not dot:
        raise ShareError("not a planner build token (expected it to start with 'v2.' or 'v1.')")
    if version not in READ_VERSIONS:
        label = version if re.fullmatch(r"v\d{1,4}", version) else version[:12] + "..."
        raise ShareError(f"unknown build token version {label!r}; this planner reads {' and '.join(READ_VERSIONS)} tokens")
    if not re.fullmatch(r"[A-Za-z0-9_-]*", payload):
        raise ShareError("the build token holds characters outside base64url: it was altered or mis-copied")
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        raise ShareError("the build token is truncated (its base64 length is impossible)") from None
    if len(raw) < _HEADER.size:
        raise ShareError("the build token is truncated (too short to hold a build)")
    crc, length = _HEADER.unpack_from(raw)
    stream = raw[_HEADER.size:]
    if len(stream) < length:
        raise ShareError(f"the build token is truncated ({len(stream)} of {length} bytes): copy the whole link")
    if len(stream) > length:
        raise ShareError("the build token has extra data after its end: it was altered")
    if zlib.crc32(stream) != crc or _b64encode(raw) != payload:  # (stray bits in the last character)
        raise ShareError("the build token fails its checksum: it was altered or mis-copied")
    return SharedState(*_parse_body(_inflate(stream), catalog, version))


def _measurements(rows: Any, catalog: Optional[Catalog]) -> tuple[Any, ...]:
    """The sender's measured speeds, validated like a calibration file's (bounded count, sizes and values)."""
    from planner.perf.calibration import Measurement

    if not isinstance(rows, list) or len(rows) > MAX_MEASUREMENTS:
        raise ShareError(f"the build token's measurements must be a list of at most {MAX_MEASUREMENTS}")
    out = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 10):
            raise ShareError(f"the build token holds a malformed measurement {_short(row)}")
        gpu_id, name, precision, unit, median, q25, q75, points, day, concurrent = row
        try:
            m = Measurement(gpu_id=gpu_id, gpu_name=name, precision=precision, unit=unit, median=median, q25=q25,
                            q75=q75, points=points, warmup_dropped=0, column="(shared)", how="from a shared link",
                            log_file="the sender's shared link", recorded_on=day, concurrent=concurrent)
        except ValidationError as exc:
            raise ShareError(f"the build token holds a bad measurement: {validation_message(exc)}") from None
        if max(m.median, m.q25, m.q75) > 1e12 or m.points > 10_000_000:
            raise ShareError("the build token holds a measurement out of range")
        from planner.validation import not_future

        try:
            not_future(m.recorded_on, "a shared measurement's date")
        except (PlannerError, ValueError) as exc:
            raise ShareError(str(exc)) from None
        if catalog is not None and m.gpu_id not in catalog.chips:
            raise ShareError(f"the build token measures card {m.gpu_id[:40]!r}, which this catalog does not have")
        out.append(m)
    return tuple(out)


def _inflate(stream: bytes) -> bytes:
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(stream, MAX_INFLATED_BYTES)
    except zlib.error:
        raise ShareError("the build token does not decompress: it was altered or mis-copied") from None
    if inflater.unconsumed_tail or (not inflater.eof and inflater.decompress(b"", 1)):
        raise ShareError(f"the build token inflates beyond {MAX_INFLATED_BYTES // 1024} KB (refused)")
    if not inflater.eof:
        raise ShareError("the build token is truncated (its data stream does not end)")
    return out


def _parse_body(text: bytes, catalog: Optional[Catalog], version: str = TOKEN_VERSION
                ) -> tuple[Request, tuple[tuple[str, int], ...], tuple[Any, ...]]:
    body = load_json(text, "the build token does not hold a build (not JSON)", ShareError)
    if not isinstance(body, dict) or set(body) - {"i", "p", "m"} or not isinstance(body.get("p", []), list):
        raise ShareError("the build token does not hold a build (unexpected fields)")
    inputs = request_from_inputs(body.get("i", {}), version) if isinstance(body.get("i", {}), dict) else None
    if inputs is None:
        raise ShareError("the build token does not hold a build (inputs are not an object)")
    parts: list[tuple[str, int]] = []
    for item in body.get("p", []):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and type(item[1]) is int and 1 <= item[1] <= 8):
            raise ShareError(f"the build token holds a malformed part entry {_short(item)}")
        parts.append((item[0], item[1]))
    if len(parts) > MAX_LINES:
        raise ShareError(f"the build token lists {len(parts)} parts (limit {MAX_LINES})")
    if catalog is not None:
        unknown = [i for i, _ in parts if i not in catalog.parts]
        for ident in (*inputs.owned, *inputs.pinned, *inputs.excluded):
            if ident not in catalog.parts:
                unknown.append(ident)
        if unknown:
            raise ShareError(f"the shared build names part {unknown[0]!r}, which this catalog does not have"
                             + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    return inputs, tuple(parts), _measurements(body.get("m", []), catalog)


def permalink(token: str, base_url: str = DEFAULT_BASE_URL) -> str:
    base = base_url.split("#")[0]
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}b={token}"
