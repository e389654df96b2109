"""`planner speedup`, `planner sweep`, `planner memfit`: speed vs a GTX 1080 Ti, sweep wall time, memory fit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.service import GpuChip, PerfModel, SpeedQueries, read_plan, speed_model
from planner.cli.common import console, emit_json, handle_errors, styled
from planner.errors import InputError
from planner.settings import DEFAULT_BASELINE_HOURS, DEFAULT_RUNS, MAX_GPUS_SEEN, TYPICAL_BATCH, TYPICAL_SEQ

_COUNT_PREFIX = re.compile(r"^\s*(\d+)\s*[x×]\s*(.+)$", re.IGNORECASE)


def _fraction(power_limit: float) -> float:
    """Accept 0.8 or 80 (percent)."""
    return power_limit / 100.0 if 1.0 < power_limit <= 100.0 else power_limit


def _model_info(m: PerfModel) -> dict[str, Any]:
    err = m.params.meta.get("error", {})
    return {"fitted_on": m.params.meta.get("fitted_on"), "refit_command": m.params.meta.get("command"),
            "median_abs_error_leave_one_source_out": err.get("leave_one_source_out", {}).get("median_abs_error"),
            "median_abs_error_leave_one_gpu_out": err.get("leave_one_gpu_out", {}).get("median_abs_error"),
            "median_abs_error_leave_one_architecture_out": err.get("leave_one_architecture_out", {}).get("median_abs_error")}


def _size_info(m: PerfModel, workload: str, model_params: Optional[float]) -> dict[str, Any]:
    """Model size used by the estimate, and whether it was given or is the class default."""
    if model_params is None:
        return {"model_params": m.typical_params(workload), "model_params_source": "typical size of the workload class"}
    return {"model_params": float(model_params), "model_params_source": "given with --model-params"}


def _size_label(size: dict[str, Any]) -> str:
    n = float(size["model_params"])
    default = " (class default)" if size["model_params_source"].startswith("typical") else ""
    return f"{n / 1e6:.3g}M params{default}"


def _parse_gpu_spec(spec: str, default_count: int) -> tuple[str, int]:
    """'2x RTX 3090' -> ('RTX 3090', 2); 'RTX 4090' -> ('RTX 4090', default_count)."""
    match = _COUNT_PREFIX.match(spec)
    return (match.group(2).strip(), int(match.group(1))) if match else (spec, default_count)


MAX_GPUS = MAX_GPUS_SEEN  # one machine or one rented cluster
MAX_HOURS = 100_000


def _build_gpus(path: Path, m: PerfModel) -> tuple[GpuChip, int, Optional[float], str]:
    """(chip, count, plan sustained watts, label) from a `planner recommend --json` file or a bare plan object."""
    return SpeedQueries(m).plan_gpus(read_plan(path), str(path))


def _profile(**given):  # noqa: ANN202 - the service's Applied
    """The values a command runs with: each flag given, else the stored workload profile, else the default."""
    from planner.service import profile_store

    return profile_store().apply(**given)


def register(app: typer.Typer) -> None:
    @app.command("speedup")
    @handle_errors
    def speedup_cmd(
        names: Optional[list[str]] = typer.Argument(None, metavar="GPU", help="GPU names, as with --gpu: planner speedup 'RTX 5090'"),
        gpu: list[str] = typer.Option([], "--gpu", help="GPU name (repeatable): 'RTX 4090', 'A100 80GB', 'H100 SXM'; none = all"),
        vs: str = typer.Option("GTX 1080 Ti", "--vs", help="Baseline GPU (runs fp32 if it has no tensor cores)"),
        workload: Optional[str] = typer.Option(None, "--workload", help="transformer | cnn | generic (default: your profile, else transformer)"),
        precision: Optional[str] = typer.Option(None, "--precision", help="fp32 | tf32 | amp (fp16/bf16 mixed precision; default: your profile, else amp)"),
        power_limit: float = typer.Option(1.0, "--power-limit", help="GPU power limit, fraction of stock (0.4-1.0)"),
        model_params: Optional[float] = typer.Option(
            None, "--model-params", help="Trainable parameters of your model, e.g. 15e6 (default: your profile, else the workload's typical size)"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Training throughput of GPUs relative to a baseline (default GTX 1080 Ti at fp32), with a range."""
        prof = _profile(model_params=model_params, workload=workload, precision=precision)
        model_params, workload, precision = (prof.values[k] for k in ("model_params", "workload", "precision"))
        speed = speed_model()
        m = speed.model
        base = m.resolve(vs)
        rows = speed.speedup_rows([*(names or []), *gpu], base.id, workload, precision, _fraction(power_limit), model_params)
        size = _size_info(m, workload, model_params)
        base_prec = precision if base.has_tensor_cores else "fp32"
        if as_json:
            emit_json({"baseline": base.name, "baseline_precision": base_prec, "workload": workload,
                       "precision": precision, "power_fraction": _fraction(power_limit), **size, "results": rows,
                       "model": _model_info(m), "profile": prof.to_json()})
            return
        console.print(Text(prof.note))
        table = Table(title=f"Speedup vs {base.name} ({base_prec}), {workload}, {precision}, {_size_label(size)}")
        for col in ("GPU", "speedup", "range (low-high)", "runs as", "basis", "limited by"):
            table.add_column(col)
        tiers = {"seen_architecture": "model (LOSO)", "new_architecture": "model (LOSO/LOAO)", "amd": "model (LOAO, widened)"}
        for r in rows:
            basis = tiers.get(r["error_tier"], r["error_tier"]) if r["basis"] == "model" else (
                "measured" if r["basis"] == "measured" else f"re-anchored on {r['anchor']}")
            table.add_row(r["gpu"], f"{r['speedup']:.2f}x", f"{r['low']:.2f}-{r['high']:.2f}x", r["runs_as"], basis,
                          r["limit"] + ("*" if r["underfilled"] else ""))
        console.print(table)
        if any(r["underfilled"] for r in rows):
            console.print(styled("[dim]{}[/]", "* gains under 90 % of its big-model speedup at this size: a bigger "
                                 "batch or several runs per GPU would use it better"))
        if len(rows) <= 8:  # a few cards asked by name: say for each what limits the model there, and why
            for r in rows:
                console.print(styled("[dim]{}[/]", f"{r['gpu']}: {r['limit_sentence']}."))
        for line in dict.fromkeys(x for r in rows if r["basis"] != "model" for x in r["measured"]):
            console.print(styled("[dim]Measured: {}[/]", line))
        for line in dict.fromkeys(w for r in rows for w in r.get("warnings", ())):
            console.print(styled("[yellow]Warning: {}[/]", line))
        info = _model_info(m)
        console.print(styled("[dim]{}[/]", f"Model fitted {info['fitted_on']} on several labs' measurements; held-out "
                             f"median error {info['median_abs_error_leave_one_source_out']:.0%} (new lab) / "
                             f"{info['median_abs_error_leave_one_gpu_out']:.0%} (new GPU) / "
                             f"{info['median_abs_error_leave_one_architecture_out']:.0%} (new architecture). "
                             f"Range = {PerfModel.RANGE_NOTE}."))

    @app.command("sweep")
    @handle_errors
    def sweep_cmd(
        names: Optional[list[str]] = typer.Argument(None, metavar="GPU", help="GPU names, as with --gpu: "
                                                    "planner sweep '2x RTX 3090' --runs 8 --hours 7"),
        runs: Optional[int] = typer.Option(None, "--runs", help=f"Independent runs (seeds x variants; default: your profile, else {DEFAULT_RUNS})"),
        hours: Optional[float] = typer.Option(None, "--hours", help="Hours per run on the baseline GPU (default: "
                                              f"from your calibrated baseline log, else {DEFAULT_BASELINE_HOURS:g})"),
        gpu: list[str] = typer.Option([], "--gpu", help="GPU name, repeatable; '2x RTX 3090' sets a count"),
        count: int = typer.Option(1, "--count", help="GPUs of each --gpu without an 'Nx' prefix"),
        build: Optional[Path] = typer.Option(None, "--build", help="Plan JSON from `planner recommend --json`"),
        vs: str = typer.Option("GTX 1080 Ti", "--vs", help="GPU the --hours were measured on"),
        workload: Optional[str] = typer.Option(None, "--workload", help="transformer | cnn | generic (default: your profile, else transformer)"),
        precision: Optional[str] = typer.Option(None, "--precision", help="fp32 | tf32 | amp on the new GPU (default: your profile, else amp)"),
        power_limit: float = typer.Option(1.0, "--power-limit", help="GPU power limit, fraction of stock (0.4-1.0)"),
        model_params: Optional[float] = typer.Option(
            None, "--model-params", help="Trainable parameters of your model, e.g. 15e6 (default: your profile, else the workload's typical size)"),
        wall_power: Optional[float] = typer.Option(None, "--wall-power", help="Machine power at the wall in W (overrides the estimate)"),
        runs_per_gpu: str = typer.Option("auto", "--runs-per-gpu", help="Runs sharing each GPU: auto (as many as fit "
                                         "VRAM and add throughput, with --model-params) or a number 1-4"),
        run_vram_gb: Optional[float] = typer.Option(None, "--run-vram-gb", help="VRAM one run takes, GiB (nvidia-smi "
                                                    "on your 1080 Ti; default: your profile, else up to its 11 GB)"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Hours per run, wall time for the whole sweep and energy, on a GPU (or N of them) or a recommended build."""
        if run_vram_gb is not None:  # the bound recommend applies (a run takes more than 0 and at most 1024 GiB)
            from planner.request import Request

            Request.parse(run_vram_gb=run_vram_gb)
        prof = _profile(model_params=model_params, workload=workload, precision=precision, runs=runs,
                        baseline_hours=hours, run_vram_gb=run_vram_gb)
        model_params, workload, precision, hours, run_vram_gb = (prof.values[k] for k in (
            "model_params", "workload", "precision", "baseline_hours", "run_vram_gb"))
        runs = (DEFAULT_RUNS if prof.values["runs"] is None else prof.values["runs"])
        gpu = [*(names or []), *gpu]
        if not gpu and build is None:
            raise InputError("give a GPU ('2x RTX 3090', as an argument or --gpu, repeatable) or --build FILE.json")
        if not 1 <= count <= MAX_GPUS:
            raise InputError(f"--count must be between 1 and {MAX_GPUS} (got {count})")
        speed = speed_model()
        m = speed.model
        from planner.service import measurements

        hours, hours_source = measurements().baseline_hours(hours, m.resolve(vs).id)
        if not 0 < hours <= MAX_HOURS:
            raise InputError(f"--hours must be between 0 and {MAX_HOURS} hours per run (got {hours})")
        size = _size_info(m, workload, model_params)
        fraction = _fraction(power_limit)
        configs: list[tuple[GpuChip, int, Optional[float], str]] = []
        if build is not None:
            chip, n, sustained, label = _build_gpus(build, m)
            configs.append((chip, n, sustained, f"plan sustained_w through its PSU's efficiency ({label})"))
        for spec in gpu:
            name, n = _parse_gpu_spec(spec, count)
            if not 1 <= n <= MAX_GPUS:
                raise InputError(f"GPU count must be between 1 and {MAX_GPUS} in {spec!r}")
            configs.append((m.resolve(name), n, None, ""))
        from planner.service import measurements

        store, _ = measurements().mine()
        results = []
        for chip, n, plan_w, plan_label in configs:
            anchored = m.anchored(chip.id, baseline=vs, workload=workload, precision=precision,
                                  power_fraction=fraction, model_params=model_params, store=store)
            e = anchored.estimate
            if wall_power is not None:
                watts, source = wall_power, "given with --wall-power"
            elif plan_w is not None:
                watts, source = plan_w, plan_label
            else:
                busy = min(n, runs)  # GPUs without a run to do sit idle and are not counted
                watts, source = PerfModel.wall_power_w(chip, busy, fraction), "estimate: TDP x power limit x busy GPUs + 150 W"
            shared = speed.runs_sharing_a_gpu(chip, precision, model_params, runs_per_gpu, run_vram_gb)
            k, gain = (shared.runs_per_gpu, shared.gain) if shared else (1, 1.0)
            s = speed.sweep_time(runs, hours, e, n, wall_power_w=watts, runs_per_gpu=k, concurrency_gain=gain)
            results.append({"gpu": chip.name, "id": chip.id, "gpu_count": n, **s.to_json(), "wall_power_source": source,
                            "speed_basis": anchored.to_json(),
                            **({"concurrency": shared.to_json()} if shared else {})})
        base = m.resolve(vs)
        if as_json:
            emit_json({"runs": runs, "baseline_hours": hours, "baseline_hours_source": hours_source,
                       "baseline": base.name, "workload": workload,
                       "precision": precision, "power_fraction": fraction, **size, "results": results,
                       "model": _model_info(m), "profile": prof.to_json()})
            return
        console.print(Text(prof.note))
        table = Table(title=f"{runs} runs of {hours:g} h on {base.name} -> {workload}, {precision}, {_size_label(size)}"
                      + (f", power limit {fraction:.0%}" if fraction < 1 else ""))
        for col in ("GPUs", "speedup", "hours per run", "sweep wall time", "energy"):
            table.add_column(col)
        for r in results:
            sp, hr, wl, en = r["speedup"], r["hours_per_run"], r["wall_hours"], r["energy_kwh"]
            table.add_row(f"{r['gpu_count']} x {r['gpu']}", f"{sp['value']:.2f}x ({sp['low']:.2f}-{sp['high']:.2f})",
                          f"{hr['value']:.2f} h ({hr['low']:.2f}-{hr['high']:.2f})",
                          f"{wl['value']:.1f} h ({wl['low']:.1f}-{wl['high']:.1f}), {r['waves']} wave(s)",
                          f"{en['value']:.1f} kWh ({en['low']:.1f}-{en['high']:.1f}) at {r['wall_power_w']:.0f} W")
        console.print(table)
        console.print(styled("[dim]{}[/]", f"Hours per run on {base.name}: {hours:g} h, {hours_source}."))
        shared = [(r["gpu"], r["concurrency"]) for r in results if r.get("concurrency", {}).get("runs_per_gpu", 1) > 1]
        for name, c in shared:
            console.print(styled("[dim]{}[/]", f"{name}: {c['runs_per_gpu']} runs share each GPU, together "
                                 f"{c['gain']:.2f}x one run; VRAM per run {c['per_run_vram_gib']:.1f} GiB"))
        for line in dict.fromkeys(x for _, c in shared for x in (f"Sharing gain: {c['gain_basis']}.",
                                                                  f"VRAM per run: {c['per_run_vram_source']}.")):
            console.print(styled("[dim]{}[/]", line))
            if r["speed_basis"]["basis"] != "model":
                console.print(styled("[dim]Speed of {}: {}[/]", r["gpu"], r["speed_basis"]["explanation"]))
            for w in r["speed_basis"].get("warnings", ()):
                console.print(styled("[yellow]Warning: {}[/]", w))
        sources = sorted({r["wall_power_source"] for r in results})
        console.print(styled("[dim]Power: {}. Ranges = {}.[/]", "; ".join(sources), PerfModel.RANGE_NOTE))

    @app.command("memfit")
    @handle_errors
    def memfit_cmd(
        names: Optional[list[str]] = typer.Argument(None, metavar="GPU", help="GPU names, as with --gpu: "
                                                    "planner memfit 'RTX 5090' --params 15e6"),
        params: float = typer.Option(..., "--params", help="Trainable parameters, e.g. 15e6"),
        optimizer: str = typer.Option("adamw", "--optimizer", help="adamw | adam | sgd (momentum) | sgd-plain"),
        precision: str = typer.Option("amp", "--precision", help="fp32 | tf32 | amp"),
        batch: int = typer.Option(TYPICAL_BATCH, "--batch", help="Batch size (samples per step per GPU)"),
        seq: int = typer.Option(TYPICAL_SEQ, "--seq", help="Sequence length (tokens per sample)"),
        layers: Optional[int] = typer.Option(None, "--layers", help="Transformer layers"),
        hidden: Optional[int] = typer.Option(None, "--hidden", help="Hidden size (d_model)"),
        heads: Optional[int] = typer.Option(None, "--heads", help="Attention heads (default hidden/64)"),
        vocab: int = typer.Option(0, "--vocab", help="Vocabulary size (counts logits and their gradient)"),
        act_mb: Optional[float] = typer.Option(None, "--act-mb-per-sample", help="Measured activation MB per sample (CNNs etc.)"),
        gpu: list[str] = typer.Option([], "--gpu", help="GPUs to check (repeatable); none = every chip"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Training memory for a model, which GPUs fit it and the largest batch each allows."""
        gpu = [*(names or []), *gpu]
        est = speed_model().memory_fit(gpu, params=params, optimizer=optimizer, precision=precision, batch=batch, seq_len=seq,
                                     layers=layers, hidden=hidden, heads=heads, vocab=vocab,
                                     act_mb_per_sample=act_mb)
        if as_json:
            emit_json(est.to_json())
            return
        console.print("Memory at batch {}: ".format(batch) + ", ".join(
            f"{k.replace('_', ' ')} {v:.2f} GiB" for k, v in est.breakdown_gib.items() if v) + f" -> total {est.total_gib:.2f} GiB")
        table = Table(title="Fit per GPU")
        for col in ("GPU", "VRAM GB", f"batch {batch}", "max batch"):
            table.add_column(col)
        for c in est.chips:
            table.add_row(c.name, f"{c.vram_gb:g}", styled("[green]fits[/]" if c.fits else "[red]too big[/]"),
                          "?" if c.max_batch is None else str(c.max_batch))
        console.print(table)
        for note in est.notes:
            console.print(styled("[yellow]{}[/]" if "limit" in note else "[dim]{}[/]", note))
