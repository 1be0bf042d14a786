"""The Python conformance runner: replays fixtures (shared/conformance/FORMAT.md).

    python3 -m workflow_engine.conformance PATH...

Each PATH is a fixture file or a folder (every ``*.json`` below it, sorted by path). Every
fixture runs on a fresh engine; one line per fixture, ``PASS name`` or
``FAIL name: step N (op): what differed``, then ``N passed, N failed``. The exit status is 0
only when nothing failed.

The pieces (loader, matcher, substitution, save paths) are importable for tests.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from .engine import Engine
from .errors import WorkflowError, status_name

TEMPFILE = "$tempfile"

#: Engines abandoned by {"reopen": "crash"}: never closed and never freed, as a killed
#: process would leave them. Kept here for the life of the process so no finaliser runs.
_ABANDONED: list[Engine] = []


class _Missing:
    """The value of a key that is not there (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class FixtureError(Exception):
    """The fixture itself is malformed (bad operator, unknown saved name, bad path...)."""


# --------------------------------------------------------------------------- loading


def fixture_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The fixture files named by ``paths``: files as given, folders expanded to every
    ``*.json`` below them, sorted by path. FileNotFoundError for a path that does not exist."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted((p for p in path.rglob("*.json") if p.is_file()), key=str))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such fixture file or folder: {path}")
    return found


def load_fixture(path: Path) -> dict[str, Any]:
    """Parse one fixture file; FixtureError when it is not a fixture object."""
    try:
        fixture = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise FixtureError(f"cannot read {path}: {error}") from error
    if not isinstance(fixture, dict) or not isinstance(fixture.get("steps"), list):
        raise FixtureError(f'{path} is not a fixture: expected an object with a "steps" array')
    return fixture


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# --------------------------------------------------------------------------- rendering


def render(value: Any, limit: int = 400) -> str:
    """A value as compact JSON for messages, shortened past ``limit`` characters."""
    if value is MISSING:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _where(path: str) -> str:
    return path or "(outcome)"


# --------------------------------------------------------------------------- matching


def is_number(value: Any) -> bool:
    """True for JSON numbers; booleans are not numbers here, although Python says so."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_operator(expect: Any) -> bool:
    """An operator is a non-empty object whose keys all start with "$"."""
    return isinstance(expect, dict) and bool(expect) and all(k.startswith("$") for k in expect)


def mismatch(expect: Any, actual: Any, path: str = "") -> str | None:
    """Why ``actual`` does not match ``expect``, or None when it matches.

    ``actual`` is MISSING when the key is not there. The message names the path and both
    values, e.g. ``result.nodes[0].state: expected "queuedRemote", got "ready"``.
    Raises FixtureError for a malformed operator.
    """
    if is_operator(expect):
        return _operator_mismatch(expect, actual, path)
    if actual is MISSING:
        return f"{_where(path)}: expected {render(expect)}, got nothing"
    if isinstance(expect, dict):
        return _object_mismatch(expect, actual, path)
    if isinstance(expect, list):
        return _array_mismatch(expect, actual, path)
    if _scalar_equal(expect, actual):
        return None
    return f"{_where(path)}: expected {render(expect)}, got {render(actual)}"


def matches(expect: Any, actual: Any) -> bool:
    """True when ``actual`` matches ``expect`` (see :func:`mismatch`)."""
    return mismatch(expect, actual) is None


def _scalar_equal(expect: Any, actual: Any) -> bool:
    if is_number(expect):
        return is_number(actual) and expect == actual
    if isinstance(expect, bool) or expect is None:
        return type(actual) is type(expect) and actual == expect
    if isinstance(expect, str):
        return isinstance(actual, str) and actual == expect
    raise FixtureError(f"cannot match against {render(expect)}")


def _object_mismatch(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    if not isinstance(actual, dict):
        return f"{_where(path)}: expected an object like {render(expect)}, got {render(actual)}"
    for key, wanted in expect.items():
        problem = mismatch(wanted, actual.get(key, MISSING), _key_path(path, key))
        if problem:
            return problem
    return None


def _array_mismatch(expect: list[Any], actual: Any, path: str) -> str | None:
    if not isinstance(actual, list):
        return f"{_where(path)}: expected an array {render(expect)}, got {render(actual)}"
    if len(actual) != len(expect):
        return (
            f"{_where(path)}: expected an array of {len(expect)} elements {render(expect)}, "
            f"got {len(actual)} elements {render(actual)}"
        )
    for index, (wanted, got) in enumerate(zip(expect, actual, strict=True)):
        problem = mismatch(wanted, got, f"{path}[{index}]")
        if problem:
            return problem
    return None


# --------------------------------------------------------------------------- operators


def _operator_mismatch(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    """All operators of ``expect`` must hold ("$tol" only modifies "$approx" / "$time")."""
    unknown = [k for k in expect if k not in _OPERATORS and k != "$tol"]
    if unknown:
        raise FixtureError(f"{_where(path)}: unknown operator {unknown[0]}")
    if "$tol" in expect and "$approx" not in expect and "$time" not in expect:
        raise FixtureError(f"{_where(path)}: $tol needs $approx or $time")
    for key in expect:
        if key == "$tol":
            continue
        if actual is MISSING and key not in ("$absent", "$not"):
            return f"{_where(path)}: expected {render(expect)}, got nothing"
        problem = _OPERATORS[key](expect, actual, path)
        if problem:
            return problem
    return None


def _op_any(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    if expect["$any"] is not True:
        raise FixtureError(f"{_where(path)}: $any takes true, not {render(expect['$any'])}")
    return None  # presence was checked by the caller


def _op_absent(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    if expect["$absent"] is not True:
        raise FixtureError(f"{_where(path)}: $absent takes true, not {render(expect['$absent'])}")
    if actual is MISSING or actual is None:
        return None
    return f"{_where(path)}: expected nothing (absent or null), got {render(actual)}"


def _op_not(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    if mismatch(expect["$not"], actual, path) is None:
        return f"{_where(path)}: expected anything but {render(expect['$not'])}, got {render(actual)}"
    return None


def _op_len(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    wanted = expect["$len"]
    if not is_number(wanted) or wanted < 0 or (isinstance(wanted, float) and not wanted.is_integer()):
        raise FixtureError(f"{_where(path)}: $len takes a count, not {render(wanted)}")
    wanted = int(wanted)
    if not isinstance(actual, (list, dict, str)):
        return f"{_where(path)}: expected an array, object or string of length {wanted}, got {render(actual)}"
    if len(actual) != wanted:  # len(str) counts code points
        return f"{_where(path)}: expected length {wanted}, got length {len(actual)}: {render(actual)}"
    return None


def _tolerance(expect: dict[str, Any], default: float, path: str) -> float:
    tol = expect.get("$tol", default)
    if not is_number(tol) or tol < 0:
        raise FixtureError(f"{_where(path)}: $tol takes a non-negative number, not {render(tol)}")
    return float(tol)


def _op_approx(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    target = expect["$approx"]
    if not is_number(target):
        raise FixtureError(f"{_where(path)}: $approx takes a number, not {render(target)}")
    tol = _tolerance(expect, 1e-9, path)
    if not is_number(actual):
        return f"{_where(path)}: expected a number near {render(target)}, got {render(actual)}"
    bound = tol if target == 0 else tol * abs(target)
    if math.isfinite(actual) and abs(actual - target) <= bound:
        return None
    return f"{_where(path)}: expected {render(target)} within relative {tol:g}, got {render(actual)}"


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_rfc3339(text: str) -> Decimal | None:
    """Exact seconds since the epoch for an RFC 3339 timestamp, or None if it is not one."""
    match = _RFC3339.fullmatch(text)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = Decimal(match.group(7) or 0)
    zone = match.group(8)
    offset = (
        timedelta(0)
        if zone in ("Z", "z")
        else ((1 if zone[0] == "+" else -1) * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    )
    leap = 1 if second == 60 else 0
    try:
        moment = datetime(year, month, day, hour, minute, second - leap, tzinfo=timezone(offset))
    except ValueError:
        return None
    return (moment - _EPOCH) // timedelta(seconds=1) + leap + fraction


def _op_time(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    target_text = expect["$time"]
    target = parse_rfc3339(target_text) if isinstance(target_text, str) else None
    if target is None:
        raise FixtureError(f"{_where(path)}: $time takes an RFC 3339 timestamp, not {render(target_text)}")
    tol = Decimal(repr(_tolerance(expect, 0, path)))
    got = parse_rfc3339(actual) if isinstance(actual, str) else None
    if got is None:
        return f"{_where(path)}: expected a timestamp near {render(target_text)}, got {render(actual)}"
    if abs(got - target) <= tol:
        return None
    return f"{_where(path)}: expected {render(target_text)} within {tol:g} s, got {render(actual)}"


def _op_match(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    pattern = expect["$match"]
    try:
        compiled = re.compile(pattern) if isinstance(pattern, str) else None
    except re.error as error:
        raise FixtureError(f"{_where(path)}: bad $match pattern {render(pattern)}: {error}") from error
    if compiled is None:
        raise FixtureError(f"{_where(path)}: $match takes a string, not {render(pattern)}")
    if isinstance(actual, str) and compiled.search(actual):
        return None
    return f"{_where(path)}: expected a string matching {render(pattern)}, got {render(actual)}"


def _op_contains(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    wanted = expect["$contains"]
    if not isinstance(wanted, list):
        raise FixtureError(f"{_where(path)}: $contains takes an array, not {render(wanted)}")
    if not isinstance(actual, list):
        return f"{_where(path)}: expected an array containing {render(wanted)}, got {render(actual)}"
    candidates = [[j for j, got in enumerate(actual) if mismatch(w, got) is None] for w in wanted]
    unmatched = _unassigned(candidates)
    if unmatched is None:
        return None
    if not candidates[unmatched]:
        return f"{_where(path)}: expected an element matching {render(wanted[unmatched])}, got {render(actual)}"
    return f"{_where(path)}: expected {len(wanted)} different elements matching {render(wanted)}, got {render(actual)}"


def _unassigned(candidates: list[list[int]]) -> int | None:
    """Give each expectation a different element (bipartite matching, augmenting paths);
    the index of an expectation left without one, or None when all are assigned."""
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in sorted(range(len(candidates)), key=lambda k: len(candidates[k])):
        if not assign(i, set()):
            return i
    return None


_OPERATORS = {
    "$any": _op_any,
    "$absent": _op_absent,
    "$not": _op_not,
    "$len": _op_len,
    "$approx": _op_approx,
    "$time": _op_time,
    "$match": _op_match,
    "$contains": _op_contains,
}


# --------------------------------------------------------------------------- save and substitute

_PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
_SEGMENT = re.compile(r"([^.\[\]]+)?((?:\[\d+\])*)")


def parse_path(path: str) -> list[str | int]:
    """``"result.effects[0].runId"`` → ``["result", "effects", 0, "runId"]``."""
    steps: list[str | int] = []
    for piece in path.split("."):
        match = _SEGMENT.fullmatch(piece)
        if not piece or not match or (match.group(1) is None and not steps):
            raise FixtureError(f"bad path {path!r}")
        if match.group(1) is not None:
            steps.append(match.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return steps


def lookup(value: Any, path: str) -> Any:
    """The value at a dotted path with ``[i]`` indices; FixtureError if it is not there."""
    for step in parse_path(path):
        if not _holds(value, step):
            raise FixtureError(f"{path} is not in the outcome")
        value = value[step]
    return value


def _holds(container: Any, step: str | int) -> bool:
    if isinstance(step, int):
        return isinstance(container, list) and step < len(container)
    return isinstance(container, dict) and step in container


def substitute(value: Any, saved: dict[str, Any]) -> Any:
    """Replace ``${name}`` in the string values of ``value`` (not in keys), recursively.

    A string that is exactly ``${name}`` becomes the saved value with its type; inside a
    longer string the value is spliced in as text (strings verbatim, others as compact
    JSON). An unknown name is a FixtureError.
    """
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    if not isinstance(value, str):
        return value
    whole = _PLACEHOLDER.fullmatch(value)
    if whole:
        return copy.deepcopy(_saved(saved, whole.group(1)))
    return _PLACEHOLDER.sub(lambda m: _as_text(_saved(saved, m.group(1))), value)


def _saved(saved: dict[str, Any], name: str) -> Any:
    if name not in saved:
        raise FixtureError(f"unknown saved name ${{{name}}}")
    return saved[name]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def save(outcome: dict[str, Any], spec: Any, saved: dict[str, Any]) -> None:
    """Store each ``name: path`` of a step's ``save`` from ``outcome`` into ``saved``."""
    if not isinstance(spec, dict):
        raise FixtureError(f"save must map names to paths, not {render(spec)}")
    for name, path in spec.items():
        if not isinstance(path, str):
            raise FixtureError(f"save {name}: the path must be a string, not {render(path)}")
        try:
            saved[name] = copy.deepcopy(lookup(outcome, path))
        except FixtureError as error:
            raise FixtureError(f"save {name}: {error}") from error


# --------------------------------------------------------------------------- running


@dataclass
class FixtureResult:
    """The verdict on one fixture, and its report line."""

    name: str
    passed: bool
    detail: str = ""

    @property
    def line(self) -> str:
        return f"PASS {self.name}" if self.passed else f"FAIL {self.name}: {self.detail}"


class _StepFailure(Exception):
    def __init__(self, number: int, label: str, what: str) -> None:
        super().__init__(f"step {number} ({label}): {what}")


def outcome_of(engine: Engine, op: str, args: Any) -> dict[str, Any]:
    """Call ``op`` and describe what came back as a FORMAT.md outcome.

    ``args`` None (a JSON null) means no arguments, as NULL does in C.
    """
    try:
        if args is None or isinstance(args, dict):
            result = engine.call(op, args)
        else:  # not an object: let the engine judge the JSON, as the C runner would
            result = engine.call_json(op, json.dumps(args))
    except WorkflowError as error:
        return {
            "ok": False,
            "error": {"status": error.status, "code": error.code, "message": error.message, "details": error.details},
        }
    return {"ok": True, "result": result}


def _error_note(outcome: dict[str, Any]) -> str:
    error = outcome["error"]
    return f"{status_name(error['status'])} {error['code']}: {error['message']}"


def _check_outcome(step: dict[str, Any], outcome: dict[str, Any], saved: dict[str, Any]) -> str | None:
    """What is wrong with an op step's outcome, or None."""
    if "expect" not in step:
        return None if outcome["ok"] else f"failed unexpectedly: {_error_note(outcome)}"
    problem = mismatch(substitute(step["expect"], saved), outcome)
    if problem and not outcome["ok"] and not problem.startswith("error"):
        problem += f" (the call failed: {_error_note(outcome)})"
    return problem


_FIXTURE_KEYS = frozenset({"name", "description", "engine", "steps"})
_STEP_KEYS = frozenset({"op", "args", "expect", "save", "reopen", "description", "comment"})


def _check_step(number: int, step: Any) -> None:
    """Refuse a malformed step, so a typo ("expected") never passes silently."""
    if not isinstance(step, dict):
        raise _StepFailure(number, "?", "a step must be an object")
    unknown = sorted(set(step) - _STEP_KEYS)
    if unknown:
        raise _StepFailure(number, _label(step), f"malformed step: unknown key {render(unknown[0])}")
    if ("op" in step) == ("reopen" in step):
        raise _StepFailure(number, _label(step), 'a step needs exactly one of "op" and "reopen"')
    if "reopen" in step and {"args", "expect", "save"} & set(step):
        raise _StepFailure(number, "reopen", "a reopen step takes no args, expect or save")


class _Run:
    """One fixture being replayed: its config, its live engine, its saved values."""

    def __init__(self, fixture: dict[str, Any]) -> None:
        self.config, self.store = _engine_config(fixture.get("engine"))
        self.saved: dict[str, Any] = {}
        self.engine: Engine | None = None

    def open(self, number: int, label: str) -> None:
        try:
            self.engine = Engine(self.config)
        except WorkflowError as error:
            self.engine = None
            raise _StepFailure(
                number, label, f"cannot open the engine: {status_name(error.status)} {error.code}: {error.message}"
            ) from error

    def reopen(self, number: int, how: Any) -> None:
        if how == "clean":
            if self.engine is not None:
                self.engine.close()
        elif how == "crash":
            if self.engine is not None:
                _ABANDONED.append(self.engine)  # neither closed nor freed, ever
        else:
            raise _StepFailure(number, "reopen", f"unknown reopen mode {render(how)}")
        self.engine = None
        self.open(number, "reopen")

    def op_step(self, number: int, step: dict[str, Any]) -> None:
        op = step["op"]
        if not isinstance(op, str):
            raise _StepFailure(number, "?", f"op must be a string, not {render(op)}")
        try:
            args = substitute(step.get("args", {}), self.saved)
            assert self.engine is not None
            outcome = outcome_of(self.engine, op, args)
            problem = _check_outcome(step, outcome, self.saved)
            if problem is None and "save" in step:
                save(outcome, step["save"], self.saved)
        except FixtureError as error:
            problem = str(error)
        if problem:
            raise _StepFailure(number, op, problem)

    def step(self, number: int, step: Any) -> None:
        _check_step(number, step)
        if "reopen" in step:
            self.reopen(number, step["reopen"])
        else:
            self.op_step(number, step)

    def finish(self) -> None:
        """Close the live engine and delete a temporary store with its -wal and -shm."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None
        if self.store is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.store + suffix)


def _engine_config(config: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The fixture's engine config with a "$tempfile" store made real, and that path."""
    if config is None:
        return None, None
    if not isinstance(config, dict):
        raise FixtureError(f"engine must be an object, not {render(config)}")
    config = copy.deepcopy(config)
    if config.get("store") != TEMPFILE:
        return config, None
    handle, path = tempfile.mkstemp(prefix="wf-conformance-", suffix=".sqlite")
    os.close(handle)
    os.unlink(path)  # the engine creates it
    config["store"] = path
    return config, path


def _label(step: Any) -> str:
    op = step.get("op") if isinstance(step, dict) else None
    if isinstance(op, str):
        return op
    return "reopen" if isinstance(step, dict) and "reopen" in step else "?"


def _guarded_step(run: _Run, number: int, step: Any) -> None:
    """One step; a bug in the runner or binding fails the fixture instead of the run."""
    try:
        run.step(number, step)
    except _StepFailure:
        raise
    except Exception as error:  # reported, with its type, as the step's failure
        raise _StepFailure(number, _label(step), f"runner error: {type(error).__name__}: {error}") from error


def run_fixture(fixture: dict[str, Any], default_name: str = "fixture") -> FixtureResult:
    """Replay one parsed fixture on a fresh engine; ``default_name`` names it when it has
    no "name"."""
    given = fixture.get("name")
    name = given if isinstance(given, str) else default_name
    unknown = sorted(set(fixture) - _FIXTURE_KEYS)
    if unknown:
        return FixtureResult(name, False, f"malformed fixture: unknown key {render(unknown[0])}")
    try:
        run = _Run(fixture)
    except FixtureError as error:
        return FixtureResult(name, False, str(error))
    try:
        run.open(0, "open")
        for number, step in enumerate(fixture["steps"], start=1):
            _guarded_step(run, number, step)
    except _StepFailure as failure:
        return FixtureResult(name, False, str(failure))
    finally:
        run.finish()
    return FixtureResult(name, True)


def run_file(path: Path) -> FixtureResult:
    """Load and replay one fixture file."""
    try:
        fixture = load_fixture(path)
    except FixtureError as error:
        return FixtureResult(str(path), False, str(error))
    return run_fixture(fixture, default_name=str(path))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run every fixture named, print the report, return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python3 -m workflow_engine.conformance", description="Replay workflow engine conformance fixtures."
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="fixture file or folder")
    options = parser.parse_args(argv)
    results: list[FixtureResult] = []
    for raw in options.paths:
        try:
            files = fixture_files([raw])
        except FileNotFoundError as error:
            results.append(FixtureResult(str(raw), False, str(error)))
            print(results[-1].line, flush=True)
            continue
        for path in files:
            results.append(run_file(path))
            print(results[-1].line, flush=True)
    failed = sum(1 for r in results if not r.passed)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
