"""scripts/conformance, the one entry point for every host's runner: the Swift, C and Python hosts
replay the same fixture folder with the same per-fixture verdicts and the same closing
`N passed, N failed` line, exit 0 only when nothing failed, and exit 2 for a PATH that does not
exist.

Each host's run builds what it needs (a debug wf-conformance, the CMake C runner, the release
library), so the first run can take minutes. A host is skipped only when its toolchain is absent
(swift for all three, cmake and a C compiler for C), which should not happen on CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR, REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "conformance"
HOSTS = ["swift", "c", "python"]
CLOSING = re.compile(r"^(\d+) passed, (\d+) failed$")

# Project fixtures copied into the small folder (passing ones, so the folder passes).
PASSING = [
    "templates/template-cycle-two-nodes.json",
    "templates/template-v1-upgrade.json",
    "engine/clock-manual.json",
]

# A fixture every host must fail, at the same step.
WRONG_CLOCK = {
    "name": "zz-clock-wrong-on-purpose",
    "description": "Fails on purpose: the manual clock starts at 2026, not 2030.",
    "engine": {"store": ":memory:", "clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}},
    "steps": [{"op": "clock.now", "expect": {"ok": True, "result": {"now": "2030-01-01T00:00:00.000Z"}}}],
}


def missing_toolchain(host: str) -> str | None:
    """What the host needs that this machine lacks, or None."""
    needed = ["swift"] + (["cmake", "cc"] if host == "c" else [])
    lacking = [tool for tool in needed if shutil.which(tool) is None]
    return ", ".join(lacking) or None


def run_script(host: str, *paths: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if reason := missing_toolchain(host):
        pytest.skip(f"the {host} host needs {reason}, which is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WF_LIBRARY")}  # the script sets its own
    return subprocess.run(
        [str(SCRIPT), host, *paths], capture_output=True, text=True, timeout=1800, cwd=cwd, env=env
    )


def verdicts(stdout: str) -> tuple[list[str], str]:
    """The per-fixture verdicts (`PASS name`, or `FAIL name: step N` without a host's own wording of
    the difference) and the closing line."""
    lines = stdout.splitlines()
    assert lines and CLOSING.match(lines[-1]), f"no closing line in {stdout!r}"
    per_fixture = [re.sub(r"^(FAIL [^:]+: step \d+).*$", r"\1", line) for line in lines[:-1]]
    return per_fixture, lines[-1]


@pytest.fixture(scope="module")
def small_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`passing/` (the PASSING fixtures) and `mixed/` (the same plus WRONG_CLOCK) under one folder."""
    root = tmp_path_factory.mktemp("conformance-script")
    for name in ("passing", "mixed"):
        folder = root / name
        folder.mkdir()
        for fixture in PASSING:
            shutil.copy(FIXTURES_DIR / fixture, folder / Path(fixture).name)
    (root / "mixed" / "zz-clock-wrong-on-purpose.json").write_text(json.dumps(WRONG_CLOCK), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def passing_runs(small_folders: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    # A relative PATH: the script reads it from the caller's working directory.
    return {host: run_script(host, "passing", cwd=small_folders) for host in HOSTS}


@pytest.mark.parametrize("host", HOSTS)
def test_each_host_passes_the_small_folder_and_exits_0(
    host: str, passing_runs: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    done = passing_runs[host]
    assert done.returncode == 0, done.stdout + done.stderr
    per_fixture, closing = verdicts(done.stdout)
    assert closing == f"{len(PASSING)} passed, 0 failed"
    assert sorted(per_fixture) == sorted(f"PASS {json.loads((FIXTURES_DIR / f).read_text())['name']}" for f in PASSING)


def test_all_hosts_print_the_same_verdicts_and_closing_line(
    passing_runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    outputs = {host: verdicts(done.stdout) for host, done in passing_runs.items()}
    assert len(set(map(repr, outputs.values()))) == 1, outputs


def test_all_hosts_fail_the_same_fixture_at_the_same_step_and_exit_1(small_folders: Path) -> None:
    runs = {host: run_script(host, str(small_folders / "mixed"), cwd=REPO_ROOT) for host in HOSTS}
    for host, done in runs.items():
        assert done.returncode == 1, f"{host}: {done.stdout}{done.stderr}"
        per_fixture, closing = verdicts(done.stdout)
        assert closing == f"{len(PASSING)} passed, 1 failed", host
        assert f"FAIL {WRONG_CLOCK['name']}: step 1" in per_fixture, f"{host}: {done.stdout}"
    assert len({repr(verdicts(done.stdout)) for done in runs.values()}) == 1


@pytest.mark.parametrize("host", HOSTS)
def test_a_path_that_does_not_exist_exits_2(host: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-fixtures"
    done = run_script(host, str(missing), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(missing) in done.stderr
    assert not CLOSING.search(done.stdout), "nothing ran, so no closing line"
