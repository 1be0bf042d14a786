"""Every fixture of Tests/Conformance/fixtures passes through this binding; and the runner
itself (command line, report lines, reopen, temporary stores) behaves as FORMAT.md says."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR, SRC_DIR

from workflow_engine import conformance
from workflow_engine.conformance import fixture_files, run_file, run_fixture

FIXTURES = fixture_files([FIXTURES_DIR]) if FIXTURES_DIR.is_dir() else []


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(FIXTURES_DIR)) for p in FIXTURES])
def test_fixture_passes(path: Path) -> None:
    result = run_file(path)
    assert result.passed, result.line


# --------------------------------------------------------------------------- the runner itself

MANUAL = {"clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}}
TOOL = {"kind": "StylizeRemote", "resourceClass": "remote", "inputs": {}, "outputs": {"image": "ImageRef"}}


def fixture(name: str, steps: list[Any], engine: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "engine": engine if engine is not None else MANUAL, "steps": steps}


def write(folder: Path, relative: str, content: dict[str, Any]) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    return path


def run_cli(*paths: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workflow_engine.conformance", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC_DIR)},
    )


def test_passing_fixture_with_save_substitution_and_reopens() -> None:
    result = run_fixture(
        fixture(
            "survives",
            [
                {"op": "tool.register", "args": TOOL, "save": {"kind": "result.kind"}},
                {
                    "op": "clock.advance",
                    "args": {"seconds": 30},
                    "save": {"now": "result.now"},
                    "expect": {"ok": True, "result": {"now": {"$time": "2026-01-01T00:00:29.500Z", "$tol": 0.5}}},
                },
                {"reopen": "crash"},
                {"op": "tool.get", "args": {"kind": "${kind}"}, "expect": {"result": {"outputs": {"$len": 1}}}},
                {"op": "clock.now", "expect": {"result": {"now": "${now}"}}},
                {"reopen": "clean"},
                {"op": "tool.list", "expect": {"ok": True, "result": {"tools": [{"kind": "${kind}", "inputs": {}}]}}},
                {
                    "op": "tool.get",
                    "args": {"kind": "x-${kind}"},
                    "expect": {
                        "ok": False,
                        "error": {
                            "status": -3,
                            "code": "unknownTool",
                            "message": {"$match": "x-StylizeRemote"},
                            "details": {"kind": "x-StylizeRemote"},
                        },
                    },
                },
            ],
            engine={"store": "$tempfile", **MANUAL},
        )
    )
    assert result.line == "PASS survives"


def test_crash_reopen_keeps_the_old_engine_alive() -> None:
    before = len(conformance._ABANDONED)
    result = run_fixture(
        fixture("crash", [{"reopen": "crash"}, {"op": "clock.now"}], engine={"store": "$tempfile", **MANUAL})
    )
    assert result.passed, result.line
    assert len(conformance._ABANDONED) == before + 1
    assert not conformance._ABANDONED[-1].closed


def test_temporary_store_and_its_wal_are_removed() -> None:
    pattern = os.path.join(tempfile.gettempdir(), "wf-conformance-*")
    before = set(glob.glob(pattern))
    result = run_fixture(
        fixture(
            "temp",
            [
                {"op": "tool.register", "args": TOOL},
                {"reopen": "clean"},
                {"op": "tool.get", "args": {"kind": "StylizeRemote"}},
            ],
            engine={"store": "$tempfile"},
        )
    )
    assert result.passed, result.line
    assert set(glob.glob(pattern)) == before


@pytest.mark.parametrize(
    "steps, line",
    [
        (
            [{"op": "clock.now", "expect": {"result": {"now": "2026-01-01T00:00:01.000Z"}}}],
            'FAIL f: step 1 (clock.now): result.now: expected "2026-01-01T00:00:01.000Z", got "2026-01-01T00:00:00.000Z"',
        ),
        (
            [{"op": "clock.now"}, {"op": "tool.get", "args": {"kind": "Q"}}],
            "FAIL f: step 2 (tool.get): failed unexpectedly: WF_ENOTFOUND unknownTool: no tool 'Q' is registered",
        ),
        (
            [{"op": "no.op", "expect": {"ok": True}}],
            "FAIL f: step 1 (no.op): ok: expected true, got false (the call failed: WF_EUNSUPPORTED unknownOp: unknown op 'no.op')",
        ),
        ([{"op": "clock.now", "expect": {"ok": False}}], "FAIL f: step 1 (clock.now): ok: expected false, got true"),
        (
            [{"op": "tool.get", "args": {"kind": "Q"}, "expect": {"ok": False, "error": {"code": "unknownThing"}}}],
            'FAIL f: step 1 (tool.get): error.code: expected "unknownThing", got "unknownTool"',
        ),
        (
            [{"reopen": "clean"}, {"op": "tool.get", "args": {"kind": "${k}"}}],
            "FAIL f: step 2 (tool.get): unknown saved name ${k}",
        ),
        (
            [{"op": "clock.now", "save": {"t": "result.later"}}],
            "FAIL f: step 1 (clock.now): save t: result.later is not in the outcome",
        ),
        ([{"reopen": "sometimes"}], 'FAIL f: step 1 (reopen): unknown reopen mode "sometimes"'),
        (
            [{"op": "clock.now", "expect": {"result": {"now": {"$soon": 1}}}}],
            "FAIL f: step 1 (clock.now): result.now: unknown operator $soon",
        ),
        (
            [{"op": "clock.now", "reopen": "clean"}],
            'FAIL f: step 1 (clock.now): a step needs exactly one of "op" and "reopen"',
        ),
        ([{"reopen": "clean", "expect": {}}], "FAIL f: step 1 (reopen): a reopen step takes no args, expect or save"),
        (
            [{"op": "clock.now", "expected": {"ok": False}}],
            'FAIL f: step 1 (clock.now): malformed step: unknown key "expected"',
        ),
        (["clock.now"], "FAIL f: step 1 (?): a step must be an object"),
    ],
)
def test_failure_lines(steps: list[Any], line: str) -> None:
    assert run_fixture(fixture("f", steps)).line == line


def test_step_comments_are_allowed_and_null_args_mean_none() -> None:
    result = run_fixture(fixture("notes", [{"op": "clock.now", "args": None, "comment": "c", "description": "d"}]))
    assert result.line == "PASS notes"


def test_unknown_fixture_keys_fail() -> None:
    result = run_fixture({**fixture("typo", [{"op": "clock.now"}]), "step": []})
    assert result.line == 'FAIL typo: malformed fixture: unknown key "step"'


def test_unnamed_fixture_is_named_by_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "anon.json", {"steps": [{"op": "clock.now", "expect": {"ok": False}}]})
    assert run_file(path).line == f"FAIL {path}: step 1 (clock.now): ok: expected false, got true"


def test_non_object_args_reach_the_engine() -> None:
    result = run_fixture(
        fixture(
            "args",
            [
                {
                    "op": "clock.now",
                    "args": [1],
                    "expect": {"ok": False, "error": {"status": -2, "code": "invalidArgument"}},
                }
            ],
        )
    )
    assert result.passed, result.line


def test_engine_that_cannot_open_fails_the_fixture() -> None:
    result = run_fixture(fixture("bad-config", [], engine={"bogus": True}))
    assert result.line.startswith(
        "FAIL bad-config: step 0 (open): cannot open the engine: WF_EINVALID unknownConfigKey"
    )


def test_folders_expand_to_json_files_sorted_by_path_text(tmp_path: Path) -> None:
    for relative in ("a/x.json", "a-b/x.json", "B.json", "a/notes.txt"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    found = [str(p.relative_to(tmp_path)) for p in fixture_files([tmp_path])]
    assert found == ["B.json", "a-b/x.json", "a/x.json"]  # byte order of the path, as the C and Swift runners


def test_cli_reports_and_exit_status(tmp_path: Path) -> None:
    write(tmp_path, "b/two.json", fixture("two", [{"op": "clock.now"}]))
    write(tmp_path, "a.json", fixture("one", [{"op": "clock.now", "expect": {"result": {"now": {"$any": True}}}}]))
    write(tmp_path, "b/c/three.json", fixture("three", [{"op": "clock.now", "expect": {"result": {"now": 1}}}]))
    (tmp_path / "b" / "notes.txt").write_text("not a fixture")
    done = run_cli(tmp_path)
    assert done.stdout.splitlines() == [
        "PASS one",
        'FAIL three: step 1 (clock.now): result.now: expected 1, got "2026-01-01T00:00:00.000Z"',
        "PASS two",
        "2 passed, 1 failed",
    ]
    assert done.returncode == 1


def test_cli_exit_zero_when_all_pass(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.json", fixture("ok", [{"op": "clock.now"}]))
    done = run_cli(path, path)
    assert (done.stdout, done.returncode) == ("PASS ok\nPASS ok\n2 passed, 0 failed\n", 0)


def test_cli_counts_missing_paths_and_bad_files_as_failures(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    done = run_cli(tmp_path / "broken.json", tmp_path / "absent")
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"FAIL {tmp_path / 'broken.json'}: cannot read")
    assert lines[1] == f"FAIL {tmp_path / 'absent'}: no such fixture file or folder: {tmp_path / 'absent'}"
    assert lines[2] == "0 passed, 2 failed"
    assert done.returncode == 1


def test_cli_needs_a_path() -> None:
    done = run_cli()
    assert done.returncode == 2
    assert "usage:" in done.stderr
