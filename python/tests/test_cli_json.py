"""The CLI's JSON lines are JSON for any scene path: bench, compare and ablate run a scene
whose folder name holds a double quote, a tab, a newline and non-ASCII text (MuJoCo cannot
open a path with a backslash; tests/test_json.c covers that character), and every
stdout line must parse with Python's json module (strictly: no NaN or Infinity) and give
the path back unchanged (host/cli/json.c escapes; before it, bench wrote the path raw)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SCENES, run_cli


def strict(line: str) -> dict:
    def refuse(c: str) -> float:
        raise ValueError(f"non-JSON constant {c}")
    return json.loads(line, parse_constant=refuse)


@pytest.fixture()
def odd_scene(tmp_path: Path) -> Path:
    folder = tmp_path / 'we"ird\tdir\nwith café'
    folder.mkdir()
    scene = folder / "box.xml"
    shutil.copy(SCENES / "box.xml", scene)
    return scene


@pytest.mark.parametrize("command", [
    ["bench", "--worlds", "1,2", "--steps", "5", "--no-progress", "--quiet"],
    ["compare", "--steps", "5"],
    ["ablate", "--steps", "3", "--worlds", "2", "--quiet"],
])
def test_json_lines_escape_the_scene_path(cli, odd_scene, command):
    out = run_cli(cli, command[0], str(odd_scene), *command[1:])
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"no JSON lines: {out[:400]}"
    scenes = [strict(line).get("scene") for line in lines]
    assert str(odd_scene) in scenes, scenes
    if command[0] == "bench":
        assert len(lines) == 2 and all(s == str(odd_scene) for s in scenes)
        row = strict(lines[0])
        assert row["nworld"] == 1 and row["stage_s"]["total"] > 0 and row["dt"] == 0.005
