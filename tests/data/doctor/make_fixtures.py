"""Regenerate the doctor's event-log fixtures: the user's failure sequence in three Windows export formats.

Run `python tests/data/doctor/make_fixtures.py` from the repo root. The fixtures are written by this project
to mirror real exports (layouts as Event Viewer, wevtutil and PowerShell print them); the machine clock is
set to UTC so all three show the same wall times. The sequence follows ../shared/facts/user-story.md:
nvlddmkm 153 and Display 4101 over several nights (one while idle), then a freeze logged at the next boot
as Kernel-Power 41 with BugcheckCode 0, plus boot noise (Kernel-PnP 219, Hyper-V-Hypervisor 42).
Training ran 22:00-05:30 on the nights starting 2025-10-09, -10 and -12; the 153 at 2025-10-11 14:25 is idle.

The metrics fixtures (clean-run.jsonl, troubled-run.csv) were generated once from the helpers in
tests/test_doctor_metrics.py (clean_rows with seeds 11 and 5; the troubled run adds a data stall at rows
60-63, a hot lagging GPU1 from row 150 and stops at step 2350 of 3000).
"""

from __future__ import annotations

import csv
import io
import textwrap
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMPUTER = "DESKTOP-ML1080"
NS = "http://schemas.microsoft.com/win/2004/08/events/event"

NV153_EN = (
    "The description for Event ID 153 from source nvlddmkm cannot be found. Either the component that raises "
    "this event is not installed on your local computer or the installation is corrupted. You can install or "
    "repair the component on the local computer.\n\nIf the event originated on another computer, the display "
    "information had to be saved with the event.\n\nThe following information was included with the event: "
    "\n\n\\Device\\Video3\nError occurred on GPUID: 2d00\n\nThe message resource is present but the message was "
    "not found in the message table\n"
)
NV153_FR = (
    "La description de l'ID d'événement 153 dans la source nvlddmkm est introuvable. Le composant qui a déclenché "
    "cet événement n'est pas installé sur l'ordinateur local ou l'installation est endommagée.\n\\Device\\Video3\n"
    "Error occurred on GPUID: 2d00"
)

# (time, provider (full name), short source, id, level, task, english message, french message, xml data)
SEQUENCE = [
    ("2025-10-09 19:02:05", "Microsoft-Windows-Hyper-V-Hypervisor", "Hyper-V-Hypervisor", 42, "Error", "None",
     "Hypervisor launch failed; Either SVM not present or not enabled in BIOS.",
     "Échec du lancement de l'hyperviseur ; SVM absent ou non activé dans le BIOS.",
     [("Status", "0xC0350038")]),
    ("2025-10-09 19:02:11", "Microsoft-Windows-Kernel-PnP", "Kernel-PnP", 219, "Warning", "(212)",
     "The driver \\Driver\\WudfRd failed to load for the device ROOT\\DISPLAY\\0000.",
     "Le pilote \\Driver\\WudfRd n'a pas pu être chargé pour le périphérique ROOT\\DISPLAY\\0000.",
     [("DriverName", "ROOT\\DISPLAY\\0000"), ("FailureName", "\\Driver\\WudfRd"), ("Status", "3221226341")]),
    ("2025-10-09 22:00:03", "Service Control Manager", "Service Control Manager", 7036, "Information", "None",
     "The Windows Update service entered the running state.",
     "Le service Windows Update est entré dans l'état : en cours d'exécution.",
     [("param1", "Windows Update"), ("param2", "running")]),
    ("2025-10-10 01:37:42", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-10 01:37:44", "Display", "Display", 4101, "Warning", "None",
     "Display driver nvlddmkm stopped responding and has successfully recovered.",
     "Le pilote d'affichage nvlddmkm a cessé de répondre et a été récupéré.",
     [(None, "nvlddmkm"), (None, "")]),
    ("2025-10-11 03:12:05", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-11 03:12:07", "Display", "Display", 4101, "Warning", "None",
     "Display driver nvlddmkm stopped responding and has successfully recovered.",
     "Le pilote d'affichage nvlddmkm a cessé de répondre et a été récupéré.",
     [(None, "nvlddmkm"), (None, "")]),
    ("2025-10-11 03:40:19", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-11 14:25:51", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-13 02:05:13", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-13 02:05:15", "Display", "Display", 4101, "Warning", "None",
     "Display driver nvlddmkm stopped responding and has successfully recovered.",
     "Le pilote d'affichage nvlddmkm a cessé de répondre et a été récupéré.",
     [(None, "nvlddmkm"), (None, "")]),
    ("2025-10-13 02:31:40", "nvlddmkm", "nvlddmkm", 153, "Error", "None", NV153_EN, NV153_FR,
     [(None, "\\Device\\Video3"), (None, "Error occurred on GPUID: 2d00")]),
    ("2025-10-13 08:13:58", "Microsoft-Windows-Kernel-General", "Kernel-General", 12, "Information", "(1)",
     "The operating system started at system time 2025-10-13T08:13:58.500000000Z.",
     "Le système d'exploitation a démarré à l'heure système 2025-10-13T08:13:58.500000000Z.",
     [("MajorVersion", "10"), ("MinorVersion", "0"), ("BuildVersion", "26100")]),
    ("2025-10-13 08:14:05", "Microsoft-Windows-Hyper-V-Hypervisor", "Hyper-V-Hypervisor", 42, "Error", "None",
     "Hypervisor launch failed; Either SVM not present or not enabled in BIOS.",
     "Échec du lancement de l'hyperviseur ; SVM absent ou non activé dans le BIOS.",
     [("Status", "0xC0350038")]),
    ("2025-10-13 08:14:09", "Microsoft-Windows-Kernel-Power", "Kernel-Power", 41, "Critical", "(63)",
     "The system has rebooted without cleanly shutting down first. This error could be caused if the system "
     "stopped responding, crashed, or lost power unexpectedly.",
     "Le système a redémarré sans s'arrêter correctement au préalable. Cette erreur peut être due au fait que le "
     "système ne répondait plus, était en panne ou était hors tension de manière inattendue.",
     [("BugcheckCode", "0"), ("BugcheckParameter1", "0x0"), ("BugcheckParameter2", "0x0"),
      ("BugcheckParameter3", "0x0"), ("BugcheckParameter4", "0x0"), ("SleepInProgress", "0"),
      ("PowerButtonTimestamp", "0"), ("BootAppStatus", "0"), ("Checkpoint", "0"),
      ("ConnectedStandbyInProgress", "false"), ("SystemSleepTransitionsToOn", "0"),
      ("CsEntryScenarioInstanceId", "0"), ("BugcheckInfoFromEFI", "false"), ("CheckpointStatus", "0"),
      ("LongPowerButtonPressDetected", "false")]),
    ("2025-10-13 08:14:20", "EventLog", "EventLog", 6008, "Error", "None",
     "The previous system shutdown at 2:31:58 AM on \u200e10/\u200e13/\u200e2025 was unexpected.",
     "L'arrêt système précédent à 02:31:58 le \u200e13/\u200e10/\u200e2025 n'était pas prévu.",
     [(None, "2:31:58 AM"), (None, "\u200e10/\u200e13/\u200e2025")]),
    ("2025-10-13 08:14:31", "Microsoft-Windows-Kernel-PnP", "Kernel-PnP", 219, "Warning", "(212)",
     "The driver \\Driver\\WudfRd failed to load for the device ROOT\\DISPLAY\\0000.",
     "Le pilote \\Driver\\WudfRd n'a pas pu être chargé pour le périphérique ROOT\\DISPLAY\\0000.",
     [("DriverName", "ROOT\\DISPLAY\\0000"), ("FailureName", "\\Driver\\WudfRd"), ("Status", "3221226341")]),
]
# Kernel-Power's provider GUID is the public one; the others are placeholders (the reader ignores GUIDs).
GUIDS = {
    "Microsoft-Windows-Kernel-Power": "{331c3b3a-2005-44c2-ac5e-77220c37d6b4}",
    "Microsoft-Windows-Kernel-PnP": "{00000000-0000-0000-0000-000000000219}",
    "Microsoft-Windows-Hyper-V-Hypervisor": "{00000000-0000-0000-0000-000000000042}",
    "Microsoft-Windows-Kernel-General": "{00000000-0000-0000-0000-000000000012}",
}
LEVEL_NUM = {"Critical": 1, "Error": 2, "Warning": 3, "Information": 4}
QUALIFIERS = {"nvlddmkm": " Qualifiers='49242'", "Display": " Qualifiers='0'", "EventLog": " Qualifiers='32768'",
              "Service Control Manager": " Qualifiers='16384'"}


def us_date(t: datetime) -> str:
    hour = t.hour % 12 or 12
    return f"{t.month}/{t.day}/{t.year} {hour}:{t:%M:%S} {'AM' if t.hour < 12 else 'PM'}"


def event_viewer_csv() -> str:
    """Event Viewer 'Save All Events As' CSV (en-US): five named columns plus the message, newest first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["Level", "Date and Time", "Source", "Event ID", "Task Category"])
    for t, _prov, short, eid, level, task, msg, _fr, _data in reversed(SEQUENCE):
        w.writerow([level, us_date(datetime.fromisoformat(t)), short, eid, task, msg])
    return buf.getvalue()


def wevtutil_xml() -> str:
    """`wevtutil qe System /f:xml` (oldest first): <Event> elements back to back, no root, no declaration."""
    out = []
    for n, (t, prov, _short, eid, level, _task, _msg, _fr, data) in enumerate(SEQUENCE, 51200):
        guid = f" Guid='{GUIDS[prov]}'" if prov in GUIDS else ""
        source_name = " EventSourceName='Service Control Manager'" if prov == "Service Control Manager" else ""
        items = []
        for name, value in data:
            value = value.replace("&", "&amp;").replace("<", "&lt;")
            items.append(f"<Data Name='{name}'>{value}</Data>" if name else f"<Data>{value}</Data>")
        stamp = datetime.fromisoformat(t).strftime("%Y-%m-%dT%H:%M:%S") + ".%07dZ" % (n * 7919 % 10_000_000)
        out.append(
            f"<Event xmlns='{NS}'><System><Provider Name='{prov}'{guid}{source_name}/>"
            f"<EventID{QUALIFIERS.get(prov, '')}>{eid}</EventID><Version>0</Version><Level>{LEVEL_NUM[level]}</Level>"
            f"<Task>0</Task><Opcode>0</Opcode><Keywords>0x80000000000000</Keywords>"
            f"<TimeCreated SystemTime='{stamp}'/><EventRecordID>{n}</EventRecordID><Correlation/>"
            f"<Execution ProcessID='4' ThreadID='{n % 997}'/><Channel>System</Channel><Computer>{COMPUTER}</Computer>"
            f"<Security/></System><EventData>{''.join(items)}</EventData></Event>"
        )
    return "\r\n".join(out) + "\r\n"


def format_list_fr() -> str:
    """`Get-WinEvent -LogName System | Format-List` on a French Windows (dd/MM/yyyy), newest first."""
    lines = ["", ""]
    for t, prov, _short, eid, _level, _task, _msg, fr, _data in reversed(SEQUENCE):
        stamp = datetime.fromisoformat(t).strftime("%d/%m/%Y %H:%M:%S")
        # PowerShell wraps long values at the console width and indents the continuation lines.
        msg_lines = [w for para in fr.split("\n") for w in (textwrap.wrap(para, 100) or [""])]
        lines.append(f"TimeCreated  : {stamp}")
        lines.append(f"ProviderName : {prov}")
        lines.append(f"Id           : {eid}")
        lines.append(f"Message      : {msg_lines[0]}")
        lines.extend(f"               {m}" if m else "" for m in msg_lines[1:])
        lines.extend(["", ""])
    return "\r\n".join(lines)


def _wave(i: int, period: int = 7) -> float:
    """A deterministic wobble in -1..1 (no random numbers: the fixtures regenerate byte for byte)."""
    return ((i * 37) % period) / (period - 1) * 2 - 1


def logger_fixtures() -> dict[str, str]:
    """Metrics as common loggers write them (issue 27), each with one thing to find:
    - wandb-export.csv: `run.history()` of Weights & Biases (`_step`, `train/loss`, `tokens/sec`, system metrics
      `system.gpu.N.temp` / `.gpu`), a 61 % throughput stall at steps 300-340;
    - lightning-metrics.csv: PyTorch Lightning's CSVLogger (train rows and sparse validation rows on the same
      step, `train_loss_step`, GPUStatsMonitor's `gpu_id: 0/utilization.gpu (%)`), a GPU that heats to 88 °C;
    - run-train-tag-loss.csv: TensorBoard's "download CSV" of the `loss` scalar (Wall time, Step, Value), a loss
      that diverges after step 1200;
    - imbalance-run.csv: four GPUs, GPU0 at about 100 % while the others sit at about 20 % (input pipeline)."""
    t0 = 1760306400.0  # 2025-10-12T22:00:00Z
    out: dict[str, str] = {}
    rows = ["_step,_runtime,_timestamp,train/loss,tokens/sec,system.gpu.0.temp,system.gpu.0.gpu,system.gpu.1.temp,"
            "system.gpu.1.gpu,system.gpu.0.memory"]
    for i in range(200):
        step = i * 5
        tps = 41000 * (0.39 if 60 <= i <= 68 else 1.0) + 400 * _wave(i)
        rows.append(f"{step},{i * 20:.1f},{t0 + i * 20:.3f},{3.2 / (1 + i / 40) + 0.01 * _wave(i, 5):.5f},"
                    f"{tps:.1f},{70 + _wave(i, 3):.0f},{96 + 2 * _wave(i):.0f},{71 + _wave(i, 5):.0f},"
                    f"{95 + 2 * _wave(i, 3):.0f},41")
    out["wandb-export.csv"] = "\n".join(rows) + "\n"
    rows = ["epoch,step,train_loss_step,train_loss_epoch,val_loss,lr-AdamW,gpu_id: 0/utilization.gpu (%),"
            "gpu_id: 0/temperature.gpu (°C)"]
    for i in range(1, 241):
        step = i * 10
        temp = 88 if 150 <= i <= 170 else 74 + _wave(i, 3)
        rows.append(f"{(i - 1) // 60},{step},{2.5 / (1 + i / 30) + 0.01 * _wave(i, 5):.5f},,,0.0003,"
                    f"{97 + _wave(i):.0f},{temp:.0f}")
        if i % 60 == 0:  # the end of an epoch: a validation row and the epoch mean, on the same step
            rows.append(f"{(i - 1) // 60},{step},,{2.5 / (1 + i / 30):.5f},{2.6 / (1 + i / 30):.5f},,,")
    out["lightning-metrics.csv"] = "\n".join(rows) + "\n"
    rows = ["Wall time,Step,Value"]
    for i in range(160):
        step = i * 10
        loss = 3.0 / (1 + i / 20) if i < 120 else 3.0 / (1 + 120 / 20) * (1 + (i - 120) / 8)
        rows.append(f"{t0 + i * 15:.3f},{step},{loss + 0.005 * _wave(i, 5):.6f}")
    out["run-train-tag-loss.csv"] = "\n".join(rows) + "\n"
    rows = ["step,time,loss,samples_per_s,gpu0_util,gpu1_util,gpu2_util,gpu3_util"]
    for i in range(1, 181):
        stamp = datetime.utcfromtimestamp(t0 + i * 30).isoformat()
        rows.append(f"{i * 10},{stamp},{2.0 / (1 + i / 50):.5f},{820 + 5 * _wave(i):.1f},{99 + _wave(i):.0f},"
                    f"{21 + 3 * _wave(i, 5):.0f},{19 + 3 * _wave(i, 3):.0f},{20 + 2 * _wave(i):.0f}")
    out["imbalance-run.csv"] = "\n".join(rows) + "\n"
    return out


def main() -> None:
    for name, text in logger_fixtures().items():
        (HERE / name).write_text(text, encoding="utf-8", newline="")
    (HERE / "user-system.csv").write_text(event_viewer_csv(), encoding="utf-8-sig", newline="")
    (HERE / "user-system.xml").write_text(wevtutil_xml(), encoding="utf-8", newline="")
    fl = format_list_fr()
    (HERE / "user-system-fl.txt").write_text(fl, encoding="utf-8", newline="")
    # Windows PowerShell 5.1 `Get-WinEvent ... | Format-List > file.txt` writes UTF-16 LE with a BOM.
    (HERE / "user-system-fl-utf16le.txt").write_bytes(b"\xff\xfe" + fl.encode("utf-16-le"))


if __name__ == "__main__":
    main()
