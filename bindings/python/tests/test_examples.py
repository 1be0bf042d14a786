"""examples/python/stylize_validate.py, run as a host would run it: a separate process using the
built library (the same one as these tests: $WF_LIBRARY is passed on), whose printed report must
say what the engine says about the sample template and its broken variant."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import MANUAL_CLOCK, REPO_ROOT, SRC_DIR

from workflow_engine import Engine

EXAMPLE = REPO_ROOT / "examples" / "python" / "stylize_validate.py"

# "  error portTypeMismatch: nodeId=mask1 port=image path=$.edges[0] port type mismatch: ..."
ISSUE_LINE = re.compile(r"^  (error|warning) (\w+):((?: (?:nodeId|port|path)=\S+)*) (.*)$")


def load_example() -> ModuleType:
    """The example as a module, for its SAMPLE, TOOLS and broken_variant (main() is not run)."""
    spec = importlib.util.spec_from_file_location("stylize_validate", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_example() -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC_DIR), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT, env=env
    )


def parse_report(stdout: str) -> dict[str, dict[str, Any]]:
    """{label: {"valid": bool, "issues": [(kind, code, {field: value}, message)]}} per validation block."""
    reports: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in stdout.splitlines():
        header = re.match(r"^(sample|broken variant): (valid|INVALID)$", line)
        if header:
            current = {"valid": header.group(2) == "valid", "issues": []}
            reports[header.group(1)] = current
            continue
        issue = ISSUE_LINE.match(line)
        if issue and current is not None:
            fields = dict(part.split("=", 1) for part in issue.group(3).split())
            current["issues"].append((issue.group(1), issue.group(2), fields, issue.group(4)))
        else:
            current = None  # any other line ends the block
    return reports


def expected_issues(validation: dict[str, Any]) -> list[tuple[str, str, dict[str, str], str]]:
    """What the example should print for one template.validate result."""
    def fields(issue: dict[str, Any]) -> dict[str, str]:
        return {k: str(issue[k]) for k in ("nodeId", "port", "path") if k in issue}

    return [
        (kind[:-1], issue["code"], fields(issue), issue["message"])
        for kind in ("errors", "warnings")
        for issue in validation[kind]
    ]


@pytest.fixture(scope="module")
def example_run() -> subprocess.CompletedProcess[str]:
    return run_example()


def test_the_example_exits_0_and_reports_the_sample_valid(example_run: subprocess.CompletedProcess[str]) -> None:
    assert example_run.returncode == 0, example_run.stderr
    report = parse_report(example_run.stdout)
    assert report["sample"]["valid"] is True, example_run.stdout
    assert [i for i in report["sample"]["issues"] if i[0] == "error"] == []


def test_the_example_reports_the_broken_variants_type_mismatch_and_cycle(
    example_run: subprocess.CompletedProcess[str],
) -> None:
    """TEST PLAN §2.1 (cycleDetected with the path) and §2.2 (portTypeMismatch with node and port
    ids), through the example's own Python."""
    report = parse_report(example_run.stdout)
    broken = report["broken variant"]
    assert broken["valid"] is False, example_run.stdout
    errors = [i for i in broken["issues"] if i[0] == "error"]
    assert sorted(code for _, code, _, _ in errors) == ["cycleDetected", "portTypeMismatch"]
    mismatch = next(i for i in errors if i[1] == "portTypeMismatch")
    assert mismatch[2] == {"nodeId": "mask1", "port": "image", "path": "$.edges[0]"}
    assert "FileRef" in mismatch[3] and "ImageRef" in mismatch[3]
    cycle = next(i for i in errors if i[1] == "cycleDetected")
    # The cycle the variant closes (compress1.file → mask1.image), written as a path.
    assert re.fullmatch(r"cycle detected: (\w+)(?: → \w+)+", cycle[3])
    nodes = cycle[3].removeprefix("cycle detected: ").split(" → ")
    assert nodes[0] == nodes[-1] and set(nodes) == {"mask1", "stylize1", "compress1"}


def test_the_examples_report_is_what_the_engine_says(example_run: subprocess.CompletedProcess[str]) -> None:
    """Every printed error and warning, in order, is the engine's own validation of the same templates."""
    example = load_example()
    with Engine(MANUAL_CLOCK) as engine:
        for tool in example.TOOLS:
            engine.call("tool.register", tool)
        good = engine.call("template.validate", {"template": example.SAMPLE})
        bad = engine.call("template.validate", {"template": example.broken_variant(example.SAMPLE)})
        template_id = engine.call("template.register", {"template": example.SAMPLE})["templateId"]
        export = engine.call("template.export", {"templateId": template_id})["text"]
    report = parse_report(example_run.stdout)
    assert report["sample"]["issues"] == expected_issues(good)
    assert report["broken variant"]["issues"] == expected_issues(bad)
    assert f"canonical export of {template_id}:\n{export}" in example_run.stdout


def test_the_example_fails_without_a_loadable_library(tmp_path: Path) -> None:
    """The run above used the library: pointed at nothing, the same script cannot start."""
    env = {**os.environ, "PYTHONPATH": str(SRC_DIR), "WF_LIBRARY": str(tmp_path / "no-such-libworkflow.so")}
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0
    assert "no-such-libworkflow.so" in done.stderr
