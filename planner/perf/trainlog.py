"""Every training log people have, streamed as rows of named numbers: CSV, JSONL, trainer_state.json and stdout.

One reader and one column vocabulary for `planner calibrate`, `planner doctor metrics` and the burn-in. Stdout lines
of the common trainers become rows whose keys are the vocabulary's own names (`step`, `loss`, `tokens_per_s`,
`samples_per_s`, `steps_per_s`, `step_time_ms`, `mfu`, `elapsed_s`, `grad_norm`), so every reader maps them alike:

- nanoGPT:            ``iter 100: loss 4.2100, time 120.50ms, mfu 31.20%``
- llm.c:              ``step   10/74 | train loss 5.1234 | norm 1.23 | lr 1.00e-04 | (120.50 ms | 34000 tok/s)``
- modded-nanogpt:     ``step:125/1750 train_time:12345ms step_avg:98.76ms``
- Megatron-LM:        ``iteration      100/  500000 | ... | elapsed time per iteration (ms): 1234.5 | ...
                      global batch size:   512 | lm loss: 6.789E+00 | ...``
- MLX (mlx-examples): ``Iter 10: Train loss 2.345, It/sec 1.234, Tokens/sec 567.8``
- Hugging Face Trainer stdout: ``{'loss': 2.1, 'grad_norm': 0.5, 'learning_rate': 5e-05, 'epoch': 0.5}`` and the
  closing ``{'train_runtime': 120.0, 'train_samples_per_second': 8.5, ...}``; `trainer_state.json`'s log_history.

Evaluation lines (``val_loss``, ``eval_*``, MLX ``Val loss``) are training-log rows but never throughput: their
time is excluded from the Trainer's summary rate (whose own figure counts evaluation time).
"""

from __future__ import annotations

import ast
import codecs
import csv
import io
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Optional

from planner.errors import InputError
from planner.validation import Source, open_binary

MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_LINE_CHARS = 4 * 1024 * 1024  # a longer line is not a log line
MAX_FIELD_CHARS = 1024 * 1024  # a CSV cell over this is refused in one line (csv's own limit is 128 kB)
MAX_STATE_BYTES = 64 * 1024 * 1024  # trainer_state.json is read whole (it is one JSON document)
FORMATS = ("csv", "jsonl", "trainer_state", "stdout")

_KEY = re.compile(r"[^a-z0-9]+")


def key(name: str) -> str:
    """The vocabulary's spelling of a column name: 'throughput/tokens_per_sec' -> 'throughput_tokens_per_sec'."""
    return _KEY.sub("_", str(name).strip().lower()).strip("_")


# ------------------------------------------------------------------ the one column vocabulary
# Throughput columns: name -> (unit, kind). kind "rate" is per second; "seconds" / "ms" is a time per step.
# Order matters: a log with several is read through the first in this list (a global rate before a per-device one).
RATE_NAMES: list[tuple[str, str, str]] = [
    *((n, "tokens/s", "rate") for n in (
        "throughput_tokens_per_sec", "tokens_per_sec", "tokens_sec", "tokens_per_second", "tokens_per_s", "tokens_s",
        "tok_s", "tok_per_sec", "tok_per_s", "tok_sec", "train_tokens_per_sec", "train_tokens_per_second",
        "throughput_device_tokens_per_sec", "perf_tokens_per_sec", "tps")),
    *((n, "samples/s", "rate") for n in (
        "throughput_samples_per_sec", "samples_per_sec", "samples_sec", "samples_per_second", "samples_per_s",
        "samples_s", "train_samples_per_second", "train_samples_per_sec", "images_per_sec", "images_per_s",
        "images_sec", "img_s", "imgs_per_s", "imgs_per_sec", "throughput_device_samples_per_sec")),
    *((n, "steps/s", "rate") for n in (
        "throughput_batches_per_sec", "batches_per_sec", "steps_per_sec", "steps_per_second", "steps_per_s", "it_s",
        "its", "iter_per_sec", "iters_per_s", "train_steps_per_second")),
    *((n, "steps/s", "seconds") for n in (
        "step_time", "step_time_s", "time_per_step", "sec_per_step", "s_per_step", "batch_time", "iter_time",
        "train_step_time", "time_step", "perf_step_time")),
    *((n, "steps/s", "ms") for n in ("step_time_ms", "iter_time_ms", "batch_time_ms", "ms_per_step",
                                     "time_per_step_ms", "elapsed_time_per_iteration_ms")),
]
RATE_INDEX = {name: (unit, kind) for name, unit, kind in RATE_NAMES}
STEP_NAMES = ("step", "_step", "global_step", "trainer_global_step", "iteration", "iter", "steps", "it", "batch")
TIME_NAMES = ("wall_time", "_runtime", "runtime", "elapsed", "elapsed_s", "time", "timestamp", "_timestamp",
              "walltime", "datetime", "date")
LOSS_NAMES = ("loss", "train_loss", "training_loss", "loss_train", "train_loss_step", "lm_loss")
GRAD_NAMES = ("grad_norm", "gradient_norm", "grad_norm_total", "norm")
MFU_NAMES = ("mfu", "mfu_pct", "train_mfu")


def rate_of(name: str) -> Optional[tuple[str, str]]:
    """(unit, kind) of a throughput column name, or None."""
    return RATE_INDEX.get(key(name))


# ------------------------------------------------------------------ opening a file as lines


@contextmanager
def open_lines(source: Source) -> Iterator[tuple[str, Iterator[str]]]:
    """(display name, lines without their ends): any of LF, CRLF or CR-only, UTF-8 (BOM or not), UTF-16 with a BOM,
    else Windows-1252; read as a stream, never whole."""
    with open_binary(source, "a training log", MAX_LOG_BYTES) as (raw, name):
        head = raw.read(4096)
        if not head:
            raise InputError(f"{name}: empty log")
        if head.startswith((b"PK\x03\x04", b"\x1f\x8b")):
            raise InputError(f"{name}: an archive; unpack the log first")
        if head.startswith(codecs.BOM_UTF8):
            enc = "utf-8-sig"
        elif head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            enc = "utf-16"
        elif b"\x00" in head:
            raise InputError(f"{name} looks binary (NUL bytes), not a training log")
        else:
            try:
                head.decode("utf-8")
                enc = "utf-8"
            except UnicodeDecodeError as exc:
                enc = "utf-8" if exc.start >= len(head) - 4 else "cp1252"
        # a text layer over a buffered stream, as io documents it (a raw one is typed and buffered differently)
        stream = io.TextIOWrapper(io.BufferedReader(_Rejoined(head, raw)), encoding=enc, errors="replace", newline=None)
        total = [0]

        def lines() -> Iterator[str]:
            while True:
                line = stream.readline(MAX_LINE_CHARS)
                if not line:
                    return
                total[0] += len(line)
                if total[0] > MAX_LOG_BYTES:
                    raise InputError(f"{name}: over {MAX_LOG_BYTES // 2**20} MB; cut it to the steady part of the run")
                if len(line) >= MAX_LINE_CHARS and not line.endswith("\n"):
                    raise InputError(f"{name}: a line over {MAX_LINE_CHARS // 2**20} MB is not a training log line")
                yield line.rstrip("\n")

        yield name, lines()


class _Rejoined(io.RawIOBase):
    """The sniffed head, then the rest of the stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        if self._head:
            n = min(len(buf), len(self._head))
            buf[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buf))
        buf[:len(data)] = data
        return len(data)


# ------------------------------------------------------------------ training stdout, line by line

_NUM = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)"
_NANOGPT = re.compile(rf"\biter\s+(\d+):\s*loss\s+({_NUM}),\s*time\s+({_NUM})\s*ms(?:,\s*mfu\s+({_NUM})%)?",
                      re.IGNORECASE)  # found anywhere in the line: timestamps and quote marks before it are common
_NANOGPT_EVAL = re.compile(rf"\bstep\s+(\d+):\s*train loss\s+({_NUM}),\s*val loss\s+({_NUM})", re.IGNORECASE)
_LLAMA2C = re.compile(rf"^\s*(\d+)\s*\|\s*loss\s+({_NUM})\s*\|\s*lr\s+{_NUM}\s*\|\s*({_NUM})\s*ms\s*\|"
                      rf"\s*mfu\s+({_NUM})%", re.IGNORECASE)
_LLMC_CPU = re.compile(rf"^\s*step\s+(\d+):\s*train loss\s+({_NUM})\s*\(took\s+({_NUM})\s*ms\)", re.IGNORECASE)
_LLMC = re.compile(rf"^\s*step\s+(\d+)\s*/\s*\d+\s*\|\s*(?:train\s+)?loss\s+({_NUM})\s*\|.*?\(\s*({_NUM})\s*ms\s*\|"
                   rf"\s*({_NUM})\s*tok/s", re.IGNORECASE)
_MODDED = re.compile(r"^\s*step:(\d+)/\d+\s+(.*?)train_time:(\d+(?:\.\d+)?)ms(?:\s+step_avg:\S+ms)?", re.IGNORECASE)
_MEGATRON = re.compile(r"^.*?\biteration\s+(\d+)\s*/\s*\d+\s*\|(.*)$")
_MLX = re.compile(r"^\s*Iter\s+(\d+):\s*(.*)$")
_PAIR = re.compile(rf"^\s*([A-Za-z][A-Za-z0-9 /()._%-]*?)\s*[:=]?\s+({_NUM})\s*(%|ms|s|GB)?\s*$")
_HF_DICT = re.compile(r"^\s*\{['\"][A-Za-z_]+['\"]\s*:")
STDOUT_KINDS = ("nanoGPT", "llama2.c", "llm.c", "modded-nanogpt", "Megatron-LM", "MLX", "Hugging Face Trainer")

_MEGATRON_KEYS = {"elapsed_time_per_iteration_ms": "step_time_ms", "global_batch_size": "samples_per_step",
                  "lm_loss": "loss", "grad_norm": "grad_norm", "consumed_samples": "consumed_samples",
                  "throughput_per_gpu_tflop_s_gpu": "tflops_per_gpu", "tokens_per_gpu_per_second_tgs": "tokens_per_s_gpu"}
_MLX_KEYS = {"train_loss": "loss", "it_sec": "steps_per_s", "tokens_sec": "tokens_per_s", "trained_tokens":
             "trained_tokens", "learning_rate": "learning_rate", "peak_mem": "peak_mem_gb"}


def _f(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def parse_stdout_line(line: str) -> Optional[tuple[str, dict[str, Any]]]:
    """(trainer, row) for a training stdout line of a known kind; None for any other line. A row with `eval` True
    is an evaluation line (a loss, no throughput)."""
    m = _NANOGPT.search(line)
    if m:
        row: dict[str, Any] = {"step": int(m.group(1)), "loss": _f(m.group(2)), "step_time_ms": _f(m.group(3))}
        if m.group(4) is not None:
            row["mfu"] = _f(m.group(4))
        return "nanoGPT", row
    m = _NANOGPT_EVAL.search(line)
    if m:
        return "nanoGPT", {"step": int(m.group(1)), "train_loss_eval": _f(m.group(2)), "val_loss": _f(m.group(3)),
                           "eval": True}
    m = _LLAMA2C.match(line)
    if m:
        return "llama2.c", {"step": int(m.group(1)), "loss": _f(m.group(2)), "step_time_ms": _f(m.group(3)),
                            "mfu": _f(m.group(4))}
    m = _LLMC_CPU.match(line)
    if m:
        return "llm.c", {"step": int(m.group(1)), "loss": _f(m.group(2)), "step_time_ms": _f(m.group(3))}
    m = _LLMC.match(line)
    if m:
        return "llm.c", {"step": int(m.group(1)), "loss": _f(m.group(2)), "step_time_ms": _f(m.group(3)),
                         "tokens_per_s": _f(m.group(4))}
    m = _MODDED.match(line)
    if m:
        row = {"step": int(m.group(1)), "elapsed_s": _f(m.group(3)) / 1000.0}
        rest = m.group(2)
        val = re.search(rf"val_loss:({_NUM})", rest)
        train = re.search(rf"(?:train_)?loss:({_NUM})", rest.replace("val_loss", ""))
        if train:
            row["loss"] = _f(train.group(1))
        if val:
            row["val_loss"] = _f(val.group(1))
            row["eval"] = True
        return "modded-nanogpt", row
    m = _MEGATRON.match(line)
    if m and "|" in m.group(2):
        row = {"step": int(m.group(1))}
        for part in m.group(2).split("|"):
            name, sep, value = part.rpartition(":")
            k = _MEGATRON_KEYS.get(key(name))
            if sep and k:
                row[k] = _f(value.strip())
        if "step_time_ms" in row and row.get("samples_per_step", 0) > 0 and row["step_time_ms"] > 0:
            row["samples_per_s"] = row["samples_per_step"] / (row["step_time_ms"] / 1000.0)
        return "Megatron-LM", row
    m = _MLX.match(line)
    if m:
        row = {"step": int(m.group(1))}
        for part in m.group(2).split(","):
            p = _PAIR.match(part)
            if not p:
                continue
            k = key(p.group(1))
            if k.startswith("val"):
                row["eval"] = True
                if k == "val_loss":
                    row["val_loss"] = _f(p.group(2))
            elif k in _MLX_KEYS:
                row[_MLX_KEYS[k]] = _f(p.group(2))
        return ("MLX", row) if len(row) > 1 else None  # "Iter 100: Saved adapter weights to ..." is no row
    if _HF_DICT.match(line):
        try:
            obj = ast.literal_eval(line.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
            return "Hugging Face Trainer", _hf_row(obj)
    return None


def _hf_row(obj: dict[str, Any]) -> dict[str, Any]:
    """A Trainer log dict as a row: `eval_*` dicts are evaluation, `train_runtime` the closing summary."""
    row: dict[str, Any] = {}
    for k, v in obj.items():  # newer Trainers print the numbers as strings: {'loss': '0.1307', ...}
        if isinstance(v, str):
            v = _f(v)
            if math.isnan(v):
                continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            row[k] = v
    if any(k.startswith("eval_") for k in row):
        row["eval"] = True
    if "train_runtime" in row:
        row["summary"] = True
    return row


# ------------------------------------------------------------------ one log: format, rows, summary


# ------------------------------------------------------------------ run settings a log states

_INT = r"[0-9][0-9,]*"
_SETTINGS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, float]]], ...] = (
    # nanoGPT / llama2.c train.py: "tokens per iteration will be: 491,520" (all processes, accumulation included)
    (re.compile(rf"tokens per iteration(?: will be)?:\s*({_INT})", re.I),
     lambda m: {"tokens_per_step": _i(m.group(1))}),
    # llama2.c: "breaks down as: 4 grad accum steps * 1 processes * 32 batch size * 256 max seq len"
    (re.compile(r"breaks down as:\s*([0-9]+) grad accum steps \* ([0-9]+) processes \* ([0-9]+) batch size \* "
                r"([0-9]+) max seq len", re.I),
     lambda m: {"accumulation": _i(m.group(1)), "processes": _i(m.group(2)), "batch": _i(m.group(3)),
                "seq_len": _i(m.group(4))}),
    # nanoGPT model.py: "number of parameters: 123.59M"
    (re.compile(r"number of parameters:\s*([0-9.]+)\s*([KMB])\b", re.I),
     lambda m: {"model_params": float(m.group(1)) * {"K": 1e3, "M": 1e6, "B": 1e9}[m.group(2).upper()]}),
    # mlx-lm: "Trainable parameters: 0.041% (1.311M/3212.750M)": the model's size, and the trained share (LoRA)
    (re.compile(r"Trainable parameters:\s*[0-9.]+%\s*\(([0-9.]+)M\s*/\s*([0-9.]+)M\)", re.I),
     lambda m: {"trainable_params": float(m.group(1)) * 1e6, "model_params": float(m.group(2)) * 1e6}),
    # mlx-lm: "..., Peak mem 10.588 GB" (mx.get_peak_memory() / 1e9: decimal GB)
    (re.compile(r"Peak mem\s+([0-9.]+)\s*GB", re.I), lambda m: {"peak_mem_gib": float(m.group(1)) * 1e9 / 2**30}),
    # Megatron-LM iteration line "global batch size:   128" (samples per step over all GPUs) and argument dump
    (re.compile(r"global batch size:\s*([0-9]+)", re.I), lambda m: {"global_batch": _i(m.group(1))}),
    (re.compile(r"^\s*seq_length\s*\.{3,}\s*([0-9]+)\s*$"), lambda m: {"seq_len": _i(m.group(1))}),
    (re.compile(r"^\s*micro_batch_size\s*\.{3,}\s*([0-9]+)\s*$"), lambda m: {"batch": _i(m.group(1))}),
)
_SETTING_HINTS = ("tokens per iteration", "breaks down", "number of parameters", "trainable parameters", "peak mem",
                  "global batch size", "seq_length", "micro_batch_size")


def _i(text: str) -> float:
    return float(text.replace(",", ""))


def note_settings(line: str, stated: dict[str, float]) -> None:
    """Record into `stated` the run settings this line states (tokens per step, sequence length, per-device batch,
    processes, model size, global batch, peak memory in GiB). A later statement wins, except peak memory: the
    largest. Values that are not positive are ignored."""
    low = line.lower()
    if not any(h in low for h in _SETTING_HINTS):
        return
    for pattern, read in _SETTINGS:
        m = pattern.search(line)
        if not m:
            continue
        for k, v in read(m).items():
            if not (math.isfinite(v) and v > 0):
                continue
            stated[k] = max(v, stated.get(k, 0.0)) if k == "peak_mem_gib" else v


@dataclass
class TrainLog:
    """A training log being read: its format (and trainer for stdout), the rows as they stream, the run summary."""

    name: str
    format: str  # one of FORMATS
    trainer: str = ""  # for stdout and trainer_state: which trainer wrote it
    header: Optional[list[str]] = None  # CSV only
    rows: Iterator[dict[str, Any]] = field(default_factory=lambda: iter(()))
    cell_rows: Optional[Iterator[list[str]]] = None  # CSV only: the same rows as lists of cells (read one or other)
    summary: dict[str, Any] = field(default_factory=dict)  # Trainer's closing figures
    eval_seconds: float = 0.0  # evaluation time reported in the log (Trainer)
    skipped: int = 0  # stdout lines that are not training lines (tracebacks, banners, progress bars)
    stated: dict[str, float] = field(default_factory=dict)  # run settings the log itself states (stated_setting)

    def describe(self) -> str:
        return f"{self.trainer} {self.format}" if self.trainer else self.format


def sniff(first_lines: list[str]) -> str:
    """The format of a log from its first lines: a CSV needs a header and rows with as many commas; a line of a
    known trainer makes it stdout; "text" is neither in the first lines (a banner or code before the log, or not a
    log at all): calibrate reads it as stdout, the doctor as CSV (its messages name the columns it expected)."""
    lines = [ln.strip() for ln in first_lines if ln.strip()]
    if not lines:
        return "empty"
    first = lines[0]
    if first == "{" or (first.startswith("{") and not first.endswith("}")):
        return "trainer_state"  # one JSON document over several lines
    if first == "[" or first.startswith(("[{", "[]")):
        return "json_array"
    if first.startswith("{"):
        if _HF_DICT.match(first) and "{'" in first[:3]:
            try:
                json.loads(first)
            except (ValueError, RecursionError):
                return "stdout"  # a Python dict: the Trainer's printed logs
        return "jsonl"
    if any(parse_stdout_line(ln) for ln in lines):
        return "stdout"
    commas = first.count(",")
    code = any(ch in first for ch in "=#{;")  # a line of code or prose with commas is no CSV header
    if commas and not code and (len(lines) == 1 or any(ln.count(",") >= commas for ln in lines[1:3])):
        return "csv"
    return "text"  # no known line in the first ones: training stdout after a banner, or not a log at all


def _csv_cells(lines: Iterator[str], name: str, header: list[str]) -> Iterator[list[str]]:
    csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(lines)
    try:
        for cells in reader:
            if not cells or cells == header:
                continue  # blank lines, a logger's repeated header after a restart
            yield cells
    except csv.Error as exc:
        raise InputError(f"{name}: line {reader.line_num}: not a CSV row ({exc}); a cell over "
                         f"{MAX_FIELD_CHARS // 1024} kB is not a metric") from None


def _header(line: str, name: str) -> list[str]:
    csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        header = next(csv.reader([line]))
    except (csv.Error, StopIteration) as exc:
        raise InputError(f"{name}: the CSV header does not read ({exc})") from None
    seen: dict[str, int] = {}
    for i, col in enumerate(header, 1):
        if col in seen:
            raise InputError(f"{name}: the column {col[:60]!r} appears twice (columns {seen[col]} and {i}); rename "
                             "or drop one so it is clear which one to read")
        seen[col] = i
    return header


def jsonl_rows(lines: Iterator[str], name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, flattened object) per JSONL line; a line that is not a JSON object is one InputError line (the
    doctor's metrics reader reads JSONL through this too)."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {n} is not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{name}: line {n}: JSON nested too deep for a metrics row") from None
        if not isinstance(obj, dict):
            raise InputError(f"{name}: line {n} is not a JSON object")
        yield n, flat(obj)


def flat(obj: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """{"train": {"loss": 1}} -> {"train/loss": 1} (8 levels at most)."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            if depth < 8:
                out.update(flat(v, f"{prefix}{k}/", depth + 1))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _trainer_state(lines: Iterator[str], log: TrainLog) -> None:
    text, size = [], 0
    for line in lines:
        size += len(line) + 1
        if size > MAX_STATE_BYTES:
            raise InputError(f"{log.name}: a JSON document over {MAX_STATE_BYTES // 2**20} MB; a trainer_state.json "
                             "is far smaller")
        text.append(line)
    try:
        obj = json.loads("\n".join(text))
    except json.JSONDecodeError as exc:
        raise InputError(f"{log.name}: not valid JSON (line {exc.lineno}: {exc.msg}); give trainer_state.json, "
                         "a JSONL or a CSV log") from None
    except RecursionError:
        raise InputError(f"{log.name}: JSON nested too deep") from None
    history = obj.get("log_history") if isinstance(obj, dict) else None
    if not isinstance(history, list):
        raise InputError(f"{log.name}: one JSON document without a `log_history` list; give a Hugging Face "
                         "trainer_state.json, or one JSON object per line (JSONL)")
    log.trainer = "Hugging Face Trainer"
    rows = []
    for entry in history:
        if isinstance(entry, dict):
            rows.append(_hf_row(entry))
    for k in ("train_batch_size", "max_steps", "global_step"):
        v = obj.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            log.summary[k] = float(v)
            if k == "train_batch_size" and v > 0:
                log.stated["batch"] = float(v)  # per device
    log.rows = _summarised(iter(rows), log)


def _summarised(rows: Iterator[dict[str, Any]], log: TrainLog) -> Iterator[dict[str, Any]]:
    """Rows on, with the Trainer's evaluation time and closing summary collected into `log` as they pass."""
    for row in rows:
        if row.get("eval"):
            rt = row.get("eval_runtime")
            if isinstance(rt, (int, float)) and math.isfinite(rt) and rt > 0:
                log.eval_seconds += float(rt)
        if row.get("summary"):
            log.summary.update({k: v for k, v in row.items() if k not in ("summary", "eval")})
        yield row


def _stdout_rows(lines: Iterator[str], log: TrainLog) -> Iterator[dict[str, Any]]:
    last: Optional[tuple[float, float]] = None  # (step, elapsed seconds) of the previous training line
    for line in lines:
        note_settings(line, log.stated)
        hit = parse_stdout_line(line)
        if hit is None:
            if line.strip(" >\t"):  # a quoted blank line ("> ") is blank
                log.skipped += 1
            continue
        trainer, row = hit
        if not log.trainer:
            log.trainer = trainer
        if "elapsed_s" in row and not row.get("eval"):  # a running clock (modded-nanogpt): time per step between lines
            now = (float(row["step"]), float(row["elapsed_s"]))
            if last is not None and now[0] > last[0] and now[1] > last[1]:
                row["step_time_ms"] = 1000.0 * (now[1] - last[1]) / (now[0] - last[0])
            last = now
        yield row


def attach(log: TrainLog, lines: Iterator[str]) -> TrainLog:
    """`log.rows` (and its header, summary) from the lines of a log whose format `log.format` names."""
    fmt, name = log.format, log.name
    if fmt == "csv":
        body = (ln for ln in lines if ln.strip())
        first = next(body, "")
        log.header = header = _header(first, name)
        log.cell_rows = _csv_cells(body, name, header)
        log.rows = (dict(zip(header, cells)) for cells in log.cell_rows)
    elif fmt == "jsonl":
        log.rows = _summarised((row for _, row in jsonl_rows(lines, name)), log)
    elif fmt == "trainer_state":
        _trainer_state(lines, log)
    else:
        log.rows = _summarised(_stdout_rows(lines, log), log)
    return log


NOT_A_LOG = ("not a training log this reads: no CSV header with metric columns, no JSON lines, and no line of the "
             "known training outputs (" + ", ".join(STDOUT_KINDS) + "); docs/perf.md lists the formats")


@contextmanager
def open_log(source: Source) -> Iterator[TrainLog]:
    """The log opened as a stream of rows (dicts of column -> cell), its format sniffed from the first lines."""
    with open_lines(source) as (name, lines):
        head: list[str] = []
        for line in lines:
            head.append(line)
            if sum(1 for h in head if h.strip()) >= 20:
                break
        fmt = sniff(head)
        if fmt == "empty":
            raise InputError(f"{name}: empty log")
        if fmt == "json_array":
            raise InputError(f"{name}: a JSON array; give one JSON object per line (JSONL), a CSV, "
                             "trainer_state.json or the training stdout")
        yield attach(TrainLog(name=name, format="stdout" if fmt == "text" else fmt), _chain(head, lines))


def _chain(head: list[str], rest: Iterator[str]) -> Iterator[str]:
    yield from head
    yield from rest


def training_steps_per_s(log: TrainLog) -> Optional[tuple[float, str]]:
    """Steps per second over training alone from a Trainer summary: steps / (runtime - evaluation time), and how."""
    s = log.summary
    runtime, per_s = s.get("train_runtime"), s.get("train_steps_per_second")
    steps = s.get("global_step") or s.get("step") or (runtime * per_s if runtime and per_s else None)
    if not (isinstance(runtime, (int, float)) and runtime > 0 and steps and steps > 0):
        return None
    train_s = runtime - log.eval_seconds
    if train_s <= 0.05 * runtime:
        return None
    how = (f"{steps:,.0f} steps over {train_s:,.1f} s of training (train_runtime {runtime:,.1f} s less "
           f"{log.eval_seconds:,.1f} s of evaluation)" if log.eval_seconds else
           f"{steps:,.0f} steps over train_runtime {runtime:,.1f} s")
    return float(steps) / train_s, how


__all__ = ["FORMATS", "NOT_A_LOG", "attach", "GRAD_NAMES", "LOSS_NAMES", "MAX_LOG_BYTES", "MFU_NAMES", "RATE_INDEX", "RATE_NAMES",
           "STDOUT_KINDS", "STEP_NAMES", "TIME_NAMES", "TrainLog", "flat", "key", "open_lines", "open_log",
           "parse_stdout_line", "rate_of", "sniff", "training_steps_per_s"]
