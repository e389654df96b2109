"""`planner profile`: store your workload once (model, step, sweep, VRAM per run); every command uses it by default."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from planner.cli.common import console, emit_json, handle_errors
from planner.errors import InputError

sub = typer.Typer(help="Your workload profile: model size, sequence and batch, precision, runs, hours per run, VRAM per "
                  "run, owned parts; recommend, speedup, sweep, costs and the web UI use it unless a flag says otherwise.",
                  no_args_is_help=True)


def _show(as_json: bool, path: Path, prof, said: str) -> None:
    if as_json:
        emit_json({"file": str(path), "profile": None if prof is None else prof.model_dump(mode="json",
                                                                                          exclude_none=True)})
        return
    console.print(Text(said))


@sub.command("set")
@handle_errors
def set_cmd(
    model_params: Optional[float] = typer.Option(None, "--model-params", help="Trainable parameters, e.g. 15e6"),
    workload: Optional[str] = typer.Option(None, "--workload", help="transformer | cnn | generic"),
    precision: Optional[str] = typer.Option(None, "--precision", help="fp32 | tf32 | amp"),
    seq_len: Optional[int] = typer.Option(None, "--seq", help="Sequence length (tokens per sample)"),
    batch: Optional[int] = typer.Option(None, "--batch", help="Samples per step per GPU"),
    tokens_per_step: Optional[int] = typer.Option(None, "--tokens-per-step", help="Tokens per optimizer step "
                                                  "(default: batch x sequence length)"),
    runs: Optional[int] = typer.Option(None, "--runs", help="Runs in a sweep (seeds x variants)"),
    hours: Optional[float] = typer.Option(None, "--hours", help="Hours per run on the GTX 1080 Ti"),
    run_vram_gb: Optional[float] = typer.Option(None, "--run-vram-gb", help="VRAM one run takes, GiB (nvidia-smi)"),
    run_vram_log: Optional[Path] = typer.Option(None, "--run-vram-log", help="nvidia-smi CSV log with memory.used "
                                                "of one run alone on its card: its peak becomes the VRAM per run"),
    owned: list[str] = typer.Option([], "--owned", help="A part you own (repeat; replaces the stored list)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Store (or change) your workload profile; fields not given keep their stored value."""
    from planner.service import profile_store

    if run_vram_gb is not None and run_vram_log is not None:
        raise InputError("give --run-vram-gb or --run-vram-log, not both")
    source = "measured: given with --run-vram-gb" if run_vram_gb is not None else None
    if tokens_per_step is None and batch is not None and seq_len is not None:
        tokens_per_step = batch * seq_len
    changes = {"model_params": model_params, "workload": workload, "precision": precision, "seq_len": seq_len,
               "batch": batch, "tokens_per_step": tokens_per_step, "runs": runs, "hours_per_run": hours,
               "run_vram_gb": run_vram_gb, "run_vram_source": source, "owned": tuple(owned) or None}
    if all(v is None for v in changes.values()) and run_vram_log is None:
        raise InputError("nothing to set: give at least one of --model-params, --seq, --batch, --precision, --runs, "
                         "--hours, --run-vram-gb/--run-vram-log, --owned")
    prof, path = profile_store().change(changes, run_vram_log=run_vram_log)  # a log's peak memory.used: the VRAM per run
    _show(as_json, path, prof, f"Profile stored in {path}: {prof.summary()}\n  recommend, speedup, sweep, costs and "
          "the web UI now use it (a flag on the command line still wins)")


@sub.command("show")
@handle_errors
def show_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """Show the stored workload profile."""
    from planner.service import profile_store

    prof, path = profile_store().mine()
    _show(as_json, path, prof, f"Profile in {path}: {prof.summary()}" if prof is not None else
          f"No profile stored ({path}); answers assume the typical model: `planner profile set --model-params N ...`")


@sub.command("clear")
@handle_errors
def clear_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """Delete the stored workload profile (answers go back to the typical model)."""
    from planner.service import profile_store

    had, path = profile_store().forget()
    if as_json:
        emit_json({"file": str(path), "cleared": had})
    else:
        console.print(Text(f"Profile removed ({path})" if had else f"No profile was stored ({path})"))


def register(app: typer.Typer) -> None:
    app.add_typer(sub, name="profile")
