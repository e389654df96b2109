"""`planner calibrate`: read your own training log, store the card's measured throughput for every later answer."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.cli.common import console, emit_json, handle_errors, styled
from planner.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    @handle_errors
    def calibrate_cmd(
        log: Optional[Path] = typer.Argument(None, metavar="LOG", help="Training log: CSV or JSONL (Lightning "
                                             "CSVLogger, W&B history export, TensorBoard scalar CSV), a Hugging Face "
                                             "trainer_state.json, or the training stdout of nanoGPT, llm.c, "
                                             "modded-nanogpt, Megatron-LM, MLX or the Hugging Face Trainer"),
        gpu: Optional[str] = typer.Option(None, "--gpu", help="The GPU the log was recorded on, e.g. 'GTX 1080 Ti'"),
        precision: Optional[str] = typer.Option(None, "--precision", help="fp32 | tf32 | amp the run used "
                                                "(default: amp on tensor-core cards, fp32 otherwise)"),
        column: Optional[str] = typer.Option(None, "--column", help="Throughput column to read (default: recognised "
                                             "names such as tokens/sec, throughput/tokens_per_sec, step_time)"),
        unit: Optional[str] = typer.Option(None, "--unit", help="What --column (or a TensorBoard Value) measures: "
                                           "tokens/s | samples/s | steps/s | s/step"),
        tokens_per_step: Optional[float] = typer.Option(None, "--tokens-per-step",
                                                        help="Tokens per optimizer step (batch x sequence length): "
                                                             "turns a step time into tokens/s"),
        seq_len: Optional[float] = typer.Option(None, "--seq-len", help="Tokens per sample: turns samples/s "
                                                "(Megatron-LM, the Trainer's summary) into tokens/s"),
        model_params: Optional[float] = typer.Option(None, "--model-params", help="Model parameters: turns "
                                                     "nanoGPT's mfu column into tokens/s when no step time is read"),
        steps_per_run: Optional[float] = typer.Option(None, "--steps-per-run",
                                                      help="Steps in one whole run: gives the run's hours on this "
                                                           "card (on the GTX 1080 Ti it replaces the 7 h assumption)"),
        concurrent: int = typer.Option(1, "--concurrent", help="The log is one of K runs sharing the GPU at once "
                                       "(with a log of the card alone, this measures what several runs per GPU gain)"),
        save_profile: bool = typer.Option(False, "--save-profile", help="Fill the unset fields of your workload profile "
                                          "(planner profile) with what the log states: model size, sequence length, "
                                          "batch, tokens per step, peak memory; stored values are kept"),
        list_: bool = typer.Option(False, "--list", help="List the stored measurements"),
        clear: bool = typer.Option(False, "--clear", help="Delete the stored measurements (of --gpu only, if given)"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Measure, don't guess: store a GPU's throughput from your training log; speedup, sweep, recommend and costs use it."""
        from planner.service import measurements, speed_model
        from planner.service import read_training_log as read_log

        if clear:
            if log is not None:
                raise InputError("--clear takes no LOG")
            if gpu is None:  # everything: works on a damaged file too (it is what the error message suggests)
                n, _, path = measurements().forget()
                _say(as_json, {"cleared": n, "left": 0, "file": str(path)}, f"Removed {n} measurement(s) ({path})")
                return
            n, left, path = measurements().forget(speed_model().model.resolve(gpu).id)
            _say(as_json, {"cleared": n, "left": left, "file": str(path)},
                 f"Removed {n} measurement(s); {left} left in {path}")
            return
        store, path = measurements().mine()
        if list_ or log is None:
            if log is None and not list_:
                raise InputError("give a training LOG and --gpu NAME, or --list / --clear")
            _show(store, as_json, path)
            return
        if not gpu:
            raise InputError("--gpu NAME is required: the GPU the log was recorded on")
        model = speed_model().model
        chip = model.resolve(gpu)
        prec = precision or ("amp" if chip.has_tensor_cores else "fp32")
        if prec not in ("fp32", "tf32", "amp"):
            raise InputError(f"--precision must be fp32, tf32 or amp (got {prec!r})")
        if not 1 <= concurrent <= 8:
            raise InputError(f"--concurrent must be between 1 and 8 runs (got {concurrent})")
        reading = read_log(log, column=column, unit=unit, tokens_per_step=tokens_per_step, seq_len=seq_len,
                           model_params=model_params)
        done = measurements().calibrate(reading, chip, prec, str(log), run_steps=steps_per_run, concurrent=concurrent)
        m, stored, path, gain = done.measurement, done.store, done.path, done.concurrency_gain
        others = [x for x in stored.measurements if x.gpu_id != m.gpu_id and x.unit != m.unit]
        out = {"stored": m.model_dump(mode="json"), "spread_iqr_over_median": round(reading.spread, 4),
               **({"concurrency_gain": {"runs": gain[0], "gain": round(gain[1], 3), "basis": gain[2]}} if gain else {}),
               "file": str(path),
               "format": reading.format,
               "warnings": [*reading.warnings, *(f"{x.gpu_name} was measured in {x.unit}, this log in {m.unit}: they "
                                                 "are not compared" for x in others)]}
        text = (f"{m.label()}\n  read {reading.how} ({reading.format}); {m.warmup_dropped} warm-up point(s) dropped; spread (IQR / "
                f"median) {reading.spread:.1%}" + (f"; one run = {m.run_hours:.2f} h" if m.run_hours else "")
                + f"\n  stored in {path}; `planner speedup`, `sweep`, `recommend` and `costs` now use it")
        if gain:
            text += f"\n  several runs per GPU: {gain[2]}; `planner sweep` plans with it"
        from planner.service import profile_store

        said, out["profile"] = profile_store().from_log(reading.stated, str(log), save_profile,
                                                {"tokens_per_step": tokens_per_step, "seq_len": seq_len,
                                                 "model_params": model_params})
        text += said
        _say(as_json, out, text + "".join(f"\n  warning: {w}" for w in out["warnings"]))


def _say(as_json: bool, data: dict, text: str) -> None:
    if as_json:
        emit_json(data)
    else:
        console.print(Text(text))


def _show(store, as_json: bool, path: Path) -> None:  # type: ignore[no-untyped-def]
    if as_json:
        emit_json({"file": str(path), "measurements": [m.model_dump(mode="json") for m in store.measurements]})
        return
    if not store.measurements:
        console.print(styled("[dim]{}[/]", f"No measurements stored ({path}). Record one with "
                             "`planner calibrate LOG --gpu NAME`."))
        return
    table = Table(title=f"Your measurements ({path})")
    for col in ("GPU", "precision", "median", "IQR", "points", "one run", "log", "recorded"):
        table.add_column(col)
    for m in store.measurements:
        table.add_row(Text(m.gpu_name), m.precision, f"{m.median:,.0f} {m.unit}", f"{m.q25:,.0f}-{m.q75:,.0f}",
                      str(m.points), f"{m.run_hours:.2f} h" if m.run_hours else "-", Text(m.log_file),
                      str(m.recorded_on))
    console.print(table)
