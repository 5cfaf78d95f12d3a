"""Shared fixtures of the Python tests: the checkout's root, the C CLI (the oracle of
trajectories and model sizes), and a summary line in the form tests/run.sh counts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# one OpenMP thread (results do not depend on it: worlds are independent): on a
# shared, oversubscribed machine every stage's barrier waits for a descheduled
# thread, which made an 80-step run of 3 worlds take seconds instead of milliseconds.
# Set before the library loads; the CLI inherits it.
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"


@pytest.fixture(scope="session")
def cli() -> Path:
    """Path of the sapsim CLI (SAPSIM_CLI, else build/sapsim)."""
    path = Path(os.environ.get("SAPSIM_CLI", ROOT / "build" / "sapsim"))
    if not path.is_file():
        pytest.fail(f"the sapsim CLI {path} does not exist: run 'make' first or set SAPSIM_CLI")
    return path


def run_cli(cli: Path, *args: str) -> str:
    """Run the CLI, return its stdout; a failure shows its stderr."""
    proc = subprocess.run([str(cli), *args], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, f"sapsim {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """'N passed, N failed, N skipped': the totals line tests/run.sh adds up."""
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    skipped = len(stats.get("skipped", []))
    terminalreporter.write_line(f"python: {passed} passed, {failed} failed, {skipped} skipped")
