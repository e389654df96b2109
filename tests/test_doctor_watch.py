"""`doctor watch`: signals raised from files written while the watch runs, actions with cool-down, resume, memory."""

from __future__ import annotations

import json
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.doctor.signals import Signal
from planner.doctor.watch import Watch, WatchOptions
from planner.errors import InputError

runner = CliRunner()
LINUX = Path(__file__).parent / "data" / "doctor" / "linux"


def jsonl_row(step: int, loss: float, tps: float = 1000.0, **extra: float) -> str:
    return json.dumps({"step": step, "train/loss": loss, "tokens_per_s": tps, **extra}) + "\n"


def healthy(step: int) -> float:
    return 4.0 / (1 + step / 50)


class Writer(threading.Thread):
    """Appends lines to a file with small pauses, as a training logger does, while the watch runs."""

    def __init__(self, path: Path, lines: list[str], pause: float = 0.002) -> None:
        super().__init__(daemon=True)
        self.path, self.lines, self.pause = path, lines, pause

    def run(self) -> None:
        for n, line in enumerate(self.lines):
            with self.path.open("a", encoding="utf-8") as fh:
                if n % 7 == 3:  # sometimes a line arrives in two writes: the watch must wait for its end
                    fh.write(line[:5])
                    fh.flush()
                    time.sleep(self.pause)
                    fh.write(line[5:])
                else:
                    fh.write(line)
            time.sleep(self.pause)


def run_while_writing(watch: Watch, writer: Writer, timeout: float = 20.0) -> None:
    writer.start()
    deadline = time.monotonic() + timeout
    while writer.is_alive() and time.monotonic() < deadline:
        watch.poll()
        time.sleep(0.01)
    writer.join(timeout=1)
    watch.poll()  # what was written after the last look


def test_nan_and_throughput_drop_raised_while_the_file_grows_and_the_action_runs_once(tmp_path):
    metrics = tmp_path / "run.jsonl"
    marker = tmp_path / "actions.txt"
    script = tmp_path / "notify.py"
    script.write_text("import os\nopen(os.environ['MARK'], 'a').write(os.environ['DOCTOR_SIGNAL'] + ' ' + "
                      "os.environ['DOCTOR_STEP'] + '\\n')\n")
    lines = [jsonl_row(s, healthy(s)) for s in range(1, 121)]
    lines += [jsonl_row(s, healthy(s), tps=400.0) for s in range(121, 141)]  # throughput falls to 40 %
    lines += [jsonl_row(s, float("nan"), tps=400.0) for s in range(141, 161)]  # then the loss blows up
    seen: list[Signal] = []
    import os
    os.environ["MARK"] = str(marker)
    try:
        watch = Watch(WatchOptions(metrics=str(metrics), actions={"nan": f"{sys.executable} {script}"},
                                   cooldown_s=3600, interval_s=0.01), seen.append)
        run_while_writing(watch, Writer(metrics, lines))
    finally:
        del os.environ["MARK"]
    kinds = [s.kind for s in seen]
    assert kinds.count("nan_loss") == 1 and seen[kinds.index("nan_loss")].step == 141
    drop = seen[kinds.index("throughput_drop")]
    assert 121 <= drop.step <= 130 and "fell to" in drop.message
    assert "divergence" not in kinds and "hang" not in kinds
    assert marker.read_text().split() == ["nan_loss", "141"]  # ran once (--on nan= is the old name of nan_loss)
    assert watch.feed.rows == 160


def test_cool_down_limits_repeated_commands(tmp_path):
    metrics = tmp_path / "run.csv"
    metrics.write_text("step,loss,gpu0_util,gpu1_util\n")
    now = [1000.0]
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(metrics), actions={"gpu_imbalance": f"{sys.executable} -c pass"},
                               cooldown_s=600), seen.append, clock=lambda: now[0])
    with metrics.open("a") as fh:
        for step in range(1, 6):
            fh.write(f"{step},2.0,97,0\n")  # GPU 1 idle while GPU 0 works
        for step in range(6, 9):
            fh.write(f"{step},2.0,97,96\n")  # recovered
        for step in range(9, 14):
            fh.write(f"{step},2.0,97,1\n")  # idle again, within the cool-down
    watch.poll()
    imbalance = [s for s in seen if s.kind == "gpu_imbalance"]
    assert len(imbalance) == 2 and "GPU1" in imbalance[0].message
    assert watch.actions_run == [("gpu_imbalance", 0)]  # the second one fell inside the cool-down
    now[0] += 601
    with metrics.open("a") as fh:
        fh.writelines(f"{step},2.0,97,96\n" for step in range(14, 17))
        fh.writelines(f"{step},2.0,97,0\n" for step in range(17, 21))
    watch.poll()
    assert watch.actions_run == [("gpu_imbalance", 0), ("gpu_imbalance", 0)]


def test_hang_when_no_new_step_for_n_minutes(tmp_path):
    metrics = tmp_path / "run.jsonl"
    metrics.write_text("".join(jsonl_row(s, healthy(s)) for s in range(1, 30)))
    now = [0.0]
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(metrics), hang_min=10), seen.append, clock=lambda: now[0])
    watch.poll()
    now[0] = 9 * 60
    watch.poll()
    assert "hang" not in [s.kind for s in seen]
    now[0] = 10 * 60 + 1
    watch.poll()
    now[0] = 20 * 60
    watch.poll()
    hangs = [s for s in seen if s.kind == "hang"]
    assert len(hangs) == 1 and "last step 29" in hangs[0].message
    with metrics.open("a") as fh:
        fh.write(jsonl_row(30, healthy(30)))
    watch.poll()  # progress again: a later stall is a new hang
    now[0] = 40 * 60
    watch.poll()
    assert len([s for s in seen if s.kind == "hang"]) == 2


def test_killed_watch_resumes_where_it_stopped(tmp_path):
    metrics = tmp_path / "run.jsonl"
    state = tmp_path / "state.json"
    metrics.write_text("".join(jsonl_row(s, healthy(s)) for s in range(1, 101)) + '{"step": 101, "train/lo')
    first: list[Signal] = []
    Watch(WatchOptions(metrics=str(metrics), state_path=str(state)), first.append).poll()
    saved = json.loads(state.read_text())
    assert saved["version"] == 2 and len(json.dumps(saved)) < 10_000  # offsets and what was said, not the rows
    with metrics.open("a") as fh:
        fh.write('ss": 0.9}\n' + "".join(jsonl_row(s, float("inf")) for s in range(102, 105)))
    second: list[Signal] = []
    resumed = Watch(WatchOptions(metrics=str(metrics), state_path=str(state)), second.append)
    assert resumed.resumed
    resumed.poll()
    assert resumed.feed.rows == 104  # the rows rebuilt from the file, the half line completed
    assert [s.kind for s in second] == ["nan_loss"] and second[0].step == 102  # nothing said twice
    assert "nan_loss" not in [s.kind for s in first]


def test_state_save_replaces_a_planted_link_and_leaves_no_temporary(tmp_path):
    """The state is written through planner.atomicfile: a link planted at the state path after the start is
    replaced, its target never written; a save that cannot write leaves no temporary file behind."""
    metrics = tmp_path / "run.jsonl"
    metrics.write_text("".join(jsonl_row(s, healthy(s)) for s in range(1, 20)))
    state = tmp_path / "state.json"
    watch = Watch(WatchOptions(metrics=str(metrics), state_path=str(state)))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    state.symlink_to(victim)
    watch.poll()
    assert victim.read_text() == "keep me" and not state.is_symlink()
    assert json.loads(state.read_text())["version"] == 2
    state.unlink()
    state.mkdir()  # a directory where the state file goes: the rename fails
    with pytest.raises(InputError, match="cannot write the watch state .*; pass --state"):
        watch.poll()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl", "state.json", "victim.txt"]


def test_truncated_file_is_read_again_from_the_start(tmp_path):
    metrics = tmp_path / "run.jsonl"
    metrics.write_text("".join(jsonl_row(s, healthy(s)) for s in range(1, 50)))
    watch = Watch(WatchOptions(metrics=str(metrics)))
    watch.poll()
    metrics.write_text(jsonl_row(1, float("nan")))  # a new run overwrote the file
    seen: list[Signal] = []
    watch.emit = seen.append
    watch.poll()
    assert watch.metrics.rotated == 1 and "nan_loss" in [s.kind for s in seen]


def test_kernel_and_smi_logs_growing_beside_the_metrics(tmp_path):
    metrics, kernel, smi = tmp_path / "m.csv", tmp_path / "kern.log", tmp_path / "smi.csv"
    metrics.write_text("step,loss\n1,3.0\n")
    kernel.write_text("")
    header = ("timestamp, index, name, utilization.gpu [%], power.draw [W], power.limit [W], "
              "clocks_throttle_reasons.active\n")
    smi.write_text(header)
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(metrics), kernel_log=str(kernel), smi_log=str(smi)), seen.append)
    watch.poll()
    kern_lines = [
        "Oct 14 02:13:50 rig kernel: ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PCI0], AE_NOT_FOUND\n",
        "Oct 14 02:13:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the "
        "bus.\n"]
    smi_lines = [f"2025/10/14 02:13:{s:02d}.000, {g}, NVIDIA GeForce RTX 3090, {u} %, 300.00 W, 350.00 W, {r}\n"
                 for s in range(0, 12) for g, u, r in ((0, 98, "0x0000000000000000"),
                                                        (1, 0 if s >= 4 else 97, "0x0000000000000080" if s >= 8
                                                         else "0x0000000000000000"))]
    threads = [Writer(kernel, kern_lines, pause=0.01), Writer(smi, smi_lines)]
    for t in threads[1:]:
        t.start()
    run_while_writing(watch, threads[0])
    threads[1].join(timeout=5)
    watch.poll()
    kinds = [s.kind for s in seen]
    assert kinds.count("kernel") == 1 and "fallen off the bus" in seen[kinds.index("kernel")].message
    assert any(s.kind == "hw_slowdown" and "power brake" in s.message for s in seen)
    assert any(s.kind == "gpu_idle" and "GPU 1" in s.message for s in seen)


def test_memory_stays_flat_as_the_file_grows(tmp_path, monkeypatch):
    """Flapping NaN losses and temperatures (a signal every few rows): the engine keeps a bounded series and the
    watch says a bounded number of signals per poll, so the peak does not grow with the backlog (issue 27: the
    old watch kept every signal of the backlog, 795 MB for 50 MB)."""
    monkeypatch.setattr("planner.doctor.tail.MAX_READ_BYTES", 8 * 1024)  # both files span many chunks
    monkeypatch.setattr("planner.doctor.metrics_io.KEPT_ROWS", 1_000)  # the series' bound, reached by both sizes

    def peak(rows: int) -> tuple[int, int]:
        path = tmp_path / f"m{rows}.csv"
        with path.open("w") as fh:
            fh.write("step,loss,tokens_per_s,gpu_temp\n")
            fh.writelines(f"{s},{'nan' if s % 4 == 0 else f'{healthy(s):.5f}'},1000,{90 if s % 6 < 3 else 70}\n"
                          for s in range(1, rows + 1))
        seen: list[Signal] = []
        watch = Watch(WatchOptions(metrics=str(path)), seen.append)
        tracemalloc.start()
        watch.poll()
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert watch.feed.rows == rows
        return size, len(seen)

    (small, said_small), (large, said_large) = peak(8_000), peak(32_000)
    assert large < 1.5 * small  # 4x the rows, about the same peak: nothing grows with the file
    assert said_large <= 40 and said_small <= 40  # at most MAX_PER_KIND per kind, then one line counts the rest


def test_cli_once_json_and_bad_options(tmp_path):
    metrics = tmp_path / "run.jsonl"
    metrics.write_text("".join(jsonl_row(s, healthy(s)) for s in range(1, 40)) + jsonl_row(40, float("nan")))
    result = runner.invoke(app, ["doctor", "watch", str(metrics), "--once", "--json"])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["kind"] for line in result.stdout.splitlines()] == ["nan_loss"]
    again = runner.invoke(app, ["doctor", "watch", str(metrics), "--once", "--json"])
    assert again.exit_code == 0 and again.stdout == ""  # resumed: nothing new, nothing said twice
    bad = runner.invoke(app, ["doctor", "watch", str(metrics), "--on", "[/]=x", "--once"])
    assert bad.exit_code == 2 and "unknown signal" in bad.stderr and "Traceback" not in bad.output
    timed = runner.invoke(app, ["doctor", "watch", str(metrics), "--max-seconds", "0.2", "--interval-s", "0.05"])
    assert timed.exit_code == 0 and "resuming" in timed.stdout


def test_unwritable_state_is_one_line(tmp_path):
    metrics = tmp_path / "run.jsonl"
    metrics.write_text(jsonl_row(1, 1.0))
    result = runner.invoke(app, ["doctor", "watch", str(metrics), "--once", "--state",
                                 str(tmp_path / "missing-dir" / "state.json")])
    assert result.exit_code == 2 and "cannot write the watch state" in result.stderr
    assert "Traceback" not in result.output
