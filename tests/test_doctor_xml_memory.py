"""Issue 27: a wevtutil XML export is streamed with every finished element dropped, so memory does not follow the
file's size even when it holds many elements other than <Event> (peak RSS of a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVENTS = REPO / "tests" / "data" / "doctor" / "user-system.xml"

PROBE = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    path, mb = Path(sys.argv[1]), int(sys.argv[2])
    events = Path(sys.argv[3]).read_text(encoding="utf-8")
    other = "<Other><Item a='1'/><Item a='2'/><Item a='3'/></Other>\\n"
    with path.open("w") as fh:
        fh.write(events)
        fh.write(other * (mb * 1024 * 1024 // len(other)))
        fh.write(events)
    from planner.doctor import diagnose_events
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = diagnose_events(str(path))
    print(len(report.incidents), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
""")


def grown_mib(tmp_path: Path, mb: int) -> tuple[int, float]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / f"x{mb}.xml"), str(mb), str(EVENTS)],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    incidents, grown = done.stdout.split()
    return int(incidents), float(grown)


def test_xml_full_of_other_elements_reads_in_flat_memory(tmp_path):
    incidents, grown = grown_mib(tmp_path, 12)
    assert incidents >= 1  # the events around the other elements are still read
    assert grown < 25, f"peak RSS grew {grown:.0f} MiB reading 12 MB of XML"  # was ~30x the file before
