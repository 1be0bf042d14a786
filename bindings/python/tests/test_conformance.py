"""Every fixture of Tests/Conformance/fixtures passes through this binding; every runner case of
Tests/Conformance/runner-cases prints exactly its expected line (the same lines the Swift and C
runners print); and the runner itself (command line, report lines, reopen, temporary stores)
behaves as FORMAT.md and runner-cases/README.md say."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR, REPO_ROOT, SRC_DIR

from workflow_engine import conformance
from workflow_engine.conformance import fixture_files, run_file, run_fixture

FIXTURES = fixture_files([FIXTURES_DIR]) if FIXTURES_DIR.is_dir() else []


@pytest.mark.parametrize("path", FIXTURES, ids=[os.path.relpath(p, FIXTURES_DIR) for p in FIXTURES])
def test_fixture_passes(path: str) -> None:
    result = run_file(path)
    assert result.passed, result.line


# --------------------------------------------------------------------------- the shared runner cases

RUNNER_CASES = REPO_ROOT / "Tests" / "Conformance" / "runner-cases"
PASS_CASES = fixture_files([RUNNER_CASES / "pass"])
FAIL_CASES = fixture_files([RUNNER_CASES / "fail"])


def expected_line(fixture: str) -> str:
    """The line of ``fail/NAME.expected``, with @FIXTURE@ standing for the path as given."""
    with open(fixture.removesuffix(".json") + ".expected", encoding="utf-8") as file:
        return file.read().rstrip("\n").replace("@FIXTURE@", fixture)


def assert_line(got: str, want: str) -> None:
    """A line ending in "..." only has to start the output line (a parser's own words follow)."""
    if want.endswith("..."):
        assert got.startswith(want[:-3]), f"{got!r} should start with {want[:-3]!r}"
    else:
        assert got == want


def test_every_fail_case_has_its_expected_line() -> None:
    names = {Path(p).stem for p in FAIL_CASES}
    expected = {p.stem for p in (RUNNER_CASES / "fail").glob("*.expected")}
    assert names == expected
    assert len(FAIL_CASES) >= 30 and len(PASS_CASES) >= 8


@pytest.mark.parametrize("path", FAIL_CASES, ids=[Path(p).stem for p in FAIL_CASES])
def test_runner_case_fails_with_its_line(path: str) -> None:
    assert_line(run_file(path).line, expected_line(path))


@pytest.mark.parametrize("path", PASS_CASES, ids=[os.path.relpath(p, RUNNER_CASES / "pass") for p in PASS_CASES])
def test_runner_case_passes(path: str) -> None:
    result = run_file(path)
    assert result.passed, result.line


def test_runner_cases_through_the_command_line() -> None:
    """Each folder in one run: the lines in path order, the closing line, the exit status."""
    done = run_cli(RUNNER_CASES / "pass")
    assert done.stdout.splitlines() == (RUNNER_CASES / "pass.expected").read_text(encoding="utf-8").splitlines()
    assert done.returncode == 0

    folder = str(RUNNER_CASES / "fail")
    done = run_cli(folder)
    lines = done.stdout.splitlines()
    cases = sorted((f"{folder}/{Path(p).name}" for p in FAIL_CASES), key=lambda p: p.encode())
    assert len(lines) == len(cases) + 1
    for got, case in zip(lines, cases, strict=False):
        assert_line(got, expected_line(case))
    assert lines[-1] == f"0 passed, {len(cases)} failed"
    assert done.returncode == 1


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


def run_cli(*paths: Path | str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workflow_engine.conformance", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC_DIR)},
        cwd=cwd,
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


def test_temporary_store_and_its_wal_are_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only this fixture's own files are looked at: engines earlier tests abandoned with
    `{"reopen": "crash"}` stay alive in this process, and their folder threads can write their
    own (already deleted) temporary stores again at any moment."""
    made: list[str] = []
    engine_config = conformance._engine_config

    def recording(config: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        config, path = engine_config(config)
        if path is not None:
            made.append(path)
        return config, path

    monkeypatch.setattr(conformance, "_engine_config", recording)
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
    assert len(made) == 1 and made[0].startswith(os.path.join(tempfile.gettempdir(), "wf-conformance-"))
    suffixes = ("", "-wal", "-shm", "-journal", "-wfjournal")
    left = [made[0] + suffix for suffix in suffixes if os.path.exists(made[0] + suffix)]
    assert left == []


@pytest.mark.parametrize(
    "steps, line",
    [
        (
            [{"op": "clock.now", "expect": {"result": {"now": "2026-01-01T00:00:01.000Z"}}}],
            'FAIL f: step 1 (clock.now): result.now: expected "2026-01-01T00:00:01.000Z", got "2026-01-01T00:00:00.000Z"',
        ),
        (
            [{"op": "clock.now"}, {"op": "tool.get", "args": {"kind": "Q"}}],
            "FAIL f: step 2 (tool.get): unexpected error unknownTool: no tool 'Q' is registered",
        ),
        (
            [{"op": "no.op", "expect": {"ok": True}}],
            "FAIL f: step 1 (no.op): ok: expected true, got false (unknownOp: unknown op 'no.op')",
        ),
        (
            [{"op": "clock.now", "expect": {"ok": False}}],
            'FAIL f: step 1 (clock.now): ok: expected false, got true (result {"now":"2026-01-01T00:00:00.000Z"})',
        ),
        (
            [{"op": "tool.get", "args": {"kind": "Q"}, "expect": {"ok": False, "error": {"code": "unknownThing"}}}],
            'FAIL f: step 1 (tool.get): error.code: expected "unknownThing", got "unknownTool"',
        ),
        (
            [{"reopen": "clean"}, {"op": "tool.get", "args": {"kind": "${k}"}}],
            "FAIL f: step 2 (tool.get): unknown saved name 'k'",
        ),
        (
            [{"op": "clock.now", "save": {"t": "result.later"}}],
            "FAIL f: step 1 (clock.now): save 't': result.later is not in the outcome",
        ),
        (
            [{"op": "clock.now", "expect": {"result": {"now": {"$soon": 1}}}}],
            "FAIL f: step 1 (clock.now): malformed expectation: result.now: unknown operator $soon",
        ),
        ([{"reopen": "sometimes"}], 'FAIL f: invalid fixture: step 1: reopen must be "clean" or "crash"'),
        ([{"reopen": "clean", "expect": {}}], "FAIL f: invalid fixture: step 1: unexpected key 'expect'"),
        (["clock.now"], "FAIL f: invalid fixture: step 1: must be an object"),
    ],
)
def test_failure_lines(steps: list[Any], line: str) -> None:
    assert run_fixture(fixture("f", steps)).line == line


def test_step_comments_are_allowed_and_null_args_mean_none() -> None:
    result = run_fixture(fixture("notes", [{"op": "clock.now", "args": None, "comment": "c", "description": "d"}]))
    assert result.line == "PASS notes"


def test_unknown_fixture_keys_fail() -> None:
    result = run_fixture({**fixture("typo", [{"op": "clock.now"}]), "step": []})
    assert result.line == "FAIL typo: invalid fixture: unexpected key 'step'"


def test_unnamed_fixture_is_invalid_and_shown_by_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "anon.json", {"steps": [{"op": "clock.now"}]})
    assert run_file(path).line == f"FAIL {path}: invalid fixture: name must be a non-empty string"


def test_non_object_args_get_the_c_interface_outcome() -> None:
    expect = {
        "ok": False,
        "error": {
            "status": -2,
            "code": "invalidArgument",
            "message": "args must be a JSON object, not array",
            "details": {"argument": "args"},
        },
    }
    result = run_fixture(fixture("args", [{"op": "clock.now", "args": [1], "expect": expect}]))
    assert result.passed, result.line


def test_engine_that_cannot_open_fails_the_fixture() -> None:
    result = run_fixture(fixture("bad-config", [], engine={"bogus": True}))
    assert result.line == "FAIL bad-config: opening the engine: unknownConfigKey: config has an unknown key 'bogus'"


def test_folders_expand_to_json_files_sorted_by_path_bytes(tmp_path: Path) -> None:
    for relative in ("a/x.json", "a-b/x.json", "B.json", "a/notes.txt", "c/.json"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    found = [os.path.relpath(p, tmp_path) for p in fixture_files([tmp_path])]
    assert found == ["B.json", "a-b/x.json", "a/x.json"]  # byte order of the path, as the C and Swift runners


def test_paths_are_sorted_together_and_named_as_given(tmp_path: Path) -> None:
    write(tmp_path, "b/x.json", {})
    write(tmp_path, "a.json", {})
    folder = f"{tmp_path}/b/"
    assert fixture_files([folder, f"{tmp_path}/./a.json"]) == [f"{tmp_path}/./a.json", f"{tmp_path}/b/x.json"]


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


def test_cli_reports_unreadable_fixtures_by_path(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    done = run_cli(tmp_path / "broken.json")
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"FAIL {tmp_path / 'broken.json'}: invalid fixture: not JSON: ")
    assert lines[1] == "0 passed, 1 failed"
    assert done.returncode == 1


def test_cli_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.json", fixture("ok", [{"op": "clock.now"}]))
    done = run_cli(path, tmp_path / "absent")
    assert (done.stdout, done.returncode) == ("", 2)
    assert f"no such file or folder: {tmp_path / 'absent'}" in done.stderr


def test_cli_needs_a_path() -> None:
    done = run_cli()
    assert done.returncode == 2
    assert "usage:" in done.stderr


def test_cli_an_unknown_option_is_a_usage_error_and_after_a_double_dash_a_path_may_start_with_a_dash(
    tmp_path: Path,
) -> None:
    write(tmp_path, "-x.json", fixture("dash", [{"op": "clock.now"}]))
    done = run_cli("-x.json", cwd=tmp_path)
    assert (done.stdout, done.returncode) == ("", 2)
    done = run_cli("--", "-x.json", cwd=tmp_path)
    assert (done.stdout, done.returncode) == ("PASS dash\n1 passed, 0 failed\n", 0)
