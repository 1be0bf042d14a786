"""The Python conformance runner: replays fixtures (shared/conformance/FORMAT.md).

    python3 -m workflow_engine.conformance PATH...

Each PATH is a fixture file or a folder (every ``*.json`` below it); all of them run in the
order of their paths' UTF-8 bytes, each on a fresh engine. One line per fixture, ``PASS name``
or ``FAIL name: step N (op): what differed``, then ``N passed, N failed``. The exit status is 0
only when nothing failed, 2 for a usage error (such as a PATH that does not exist).

The rules and the wording of every line are those of Tests/Conformance/runner-cases/README.md,
which the Swift and C runners share. The pieces (loader, checks, matcher, substitution, save
paths) are importable for tests.
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
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .engine import Engine
from .errors import WorkflowError

TEMPFILE = "$tempfile"

#: Engines abandoned by {"reopen": "crash"}: never closed and never freed, as a killed
#: process would leave them. Kept here for the life of the process so no finaliser runs.
_ABANDONED: list[Engine] = []

#: Values in report lines are cut after this many code points (and end in "…").
SHOW_MAX = 300


class _Missing:
    """The value of a key that is not there (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class FixtureError(Exception):
    """The fixture itself is malformed: an invalid fixture, a malformed expectation, an
    unknown saved name. The message is the report's wording."""


# --------------------------------------------------------------------------- loading


def fixture_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The fixture files named by ``paths``, sorted by the UTF-8 bytes of their names: files
    as given, folders expanded to every ``*.json`` file below them, named ``folder/relative``.
    FileNotFoundError for a path that does not exist (a usage error)."""
    found: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        if os.path.isdir(path):
            for folder, _, names in os.walk(path, followlinks=True):
                found.extend(
                    os.path.join(folder, name)
                    for name in names
                    if len(name) > 5 and name.endswith(".json") and os.path.isfile(os.path.join(folder, name))
                )
        elif os.path.exists(path):
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return sorted(found, key=lambda p: p.encode("utf-8", errors="surrogateescape"))


def load_fixture(path: str | os.PathLike[str]) -> Any:
    """Parse one fixture file (any JSON; :func:`check_fixture` judges it). FixtureError when it
    cannot be read or is not JSON (a string holding U+0000 or a lone surrogate, a real that
    overflows, or an integer outside 64 bits, counts as not JSON, as for the C and Swift runners);
    a repeated key keeps its last value."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise FixtureError("cannot read the file") from error
    try:
        text = data.decode("utf-8")
        _check_depth(text)
        return _reject_non_text(json.loads(text, parse_constant=_reject_constant, parse_int=_int64,
                                      parse_float=_finite))
    except (UnicodeDecodeError, ValueError) as error:
        raise FixtureError(f"not JSON: {error}") from error


MAX_DEPTH = 512
"""The deepest nesting of arrays and objects a fixture may have, the fixture's own object counting
as the first level (the engine's JSON parser's limit, which the Swift runner uses)."""


def _check_depth(text: str) -> None:
    """ValueError when arrays and objects nest deeper than :data:`MAX_DEPTH` (checked on the text,
    before :func:`json.loads`, which would exhaust Python's recursion limit first)."""
    depth = 0
    in_string = escaped = False
    for at, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"nesting deeper than {MAX_DEPTH} at character {at}")
        elif char in "]}":
            depth -= 1


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int64(text: str) -> int:
    """An integer literal, refused outside 64 bits as the C runner's parser (Jansson) does."""
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"integer {text} does not fit in 64 bits")
    return value


def _finite(text: str) -> float:
    """A real literal, refused when it overflows (1e400 would be infinity, and match anything
    near it) as the C and Swift runners' parsers refuse it."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def _reject_non_text(value: Any) -> Any:
    """Refuse U+0000 and lone surrogates (escaped "\\ud800": not Unicode text) in any string or
    key, as the C runner's parser (Jansson) does."""
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError("\\u0000 in a string")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError("a lone surrogate in a string") from error
    if isinstance(value, dict):
        for key, member in value.items():
            _reject_non_text(key)
            _reject_non_text(member)
    elif isinstance(value, list):
        for item in value:
            _reject_non_text(item)
    return value


_FIXTURE_KEYS = ("name", "description", "engine", "steps")
_OP_KEYS = ("op", "args", "expect", "save", "description", "comment")
_REOPEN_KEYS = ("reopen", "description", "comment")


def fixture_name(fixture: Any) -> str | None:
    """The fixture's name when it is a non-empty string, else None."""
    name = fixture.get("name") if isinstance(fixture, dict) else None
    return name if isinstance(name, str) and name else None


def check_fixture(fixture: Any) -> None:
    """Refuse anything outside the format, so a typo ("expct") never passes silently.
    FixtureError with the first problem, in the order of runner-cases/README.md."""
    if not isinstance(fixture, dict):
        raise FixtureError("a fixture must be a JSON object")
    _only_keys(fixture, _FIXTURE_KEYS, "")
    if fixture_name(fixture) is None:
        raise FixtureError("name must be a non-empty string")
    if "description" in fixture and not isinstance(fixture["description"], str):
        raise FixtureError("description must be a string")
    if "engine" in fixture and not isinstance(fixture["engine"], dict):
        raise FixtureError("engine must be an object")
    if not isinstance(fixture.get("steps"), list):
        raise FixtureError("steps must be an array")
    for number, step in enumerate(fixture["steps"], start=1):
        _check_step(number, step)


def _only_keys(value: dict[str, Any], allowed: tuple[str, ...], at: str) -> None:
    for key in value:
        if key not in allowed:
            raise FixtureError(f"{at}unexpected key '{key}'")


def _check_step(number: int, step: Any) -> None:
    at = f"step {number}: "
    if not isinstance(step, dict):
        raise FixtureError(f"{at}must be an object")
    if ("op" in step) == ("reopen" in step):
        raise FixtureError(f"{at}needs exactly one of 'op' and 'reopen'")
    _only_keys(step, _REOPEN_KEYS if "reopen" in step else _OP_KEYS, at)
    if "op" in step and not (isinstance(step["op"], str) and step["op"]):
        raise FixtureError(f"{at}op must be a non-empty string")
    if "reopen" in step and step["reopen"] not in ("clean", "crash"):
        raise FixtureError(f'{at}reopen must be "clean" or "crash"')
    for key in ("description", "comment"):
        if key in step and not isinstance(step[key], str):
            raise FixtureError(f"{at}{key} must be a string")
    if "save" not in step:
        return
    if not isinstance(step["save"], dict):
        raise FixtureError(f"{at}save must be an object")
    for name, path in step["save"].items():
        if not name:
            raise FixtureError(f"{at}save names must be non-empty")
        if not isinstance(path, str):
            raise FixtureError(f"{at}save '{name}' must be a path string")
        try:
            parse_path(path)
        except FixtureError as error:
            raise FixtureError(f"{at}save '{name}': {error}") from error


# --------------------------------------------------------------------------- rendering


def compact(value: Any) -> str:
    """Compact JSON: members in order, no spaces, UTF-8 as is, reals as Python's repr."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(value: Any, limit: int = SHOW_MAX) -> str:
    """A value as compact JSON for messages, cut to ``limit`` code points plus "…"."""
    if value is MISSING:
        return "nothing"
    text = compact(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _where(path: str) -> str:
    return path or "outcome"


# --------------------------------------------------------------------------- checking expectations


def is_number(value: Any) -> bool:
    """True for JSON numbers; booleans are not numbers here, although Python says so."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_operator(expect: Any) -> bool:
    """An operator is a non-empty object whose keys all start with "$"."""
    return isinstance(expect, dict) and bool(expect) and all(k.startswith("$") for k in expect)


_OPERATOR_NAMES = ("$contains", "$len", "$any", "$absent", "$approx", "$time", "$tol", "$match", "$not")


def check_expectation(expect: Any, path: str = "") -> None:
    """FixtureError ("malformed expectation: where: why") when ``expect`` is malformed
    anywhere: under $not, inside $contains items, whatever the outcome holds."""
    if is_operator(expect):
        _check_operator(expect, path)
    elif isinstance(expect, dict):
        for key, value in expect.items():
            check_expectation(value, _key_path(path, key))
    elif isinstance(expect, list):
        for index, value in enumerate(expect):
            check_expectation(value, f"{path}[{index}]")


def _malformed(path: str, why: str) -> FixtureError:
    return FixtureError(f"malformed expectation: {_where(path)}: {why}")


def _check_operator(expect: dict[str, Any], path: str) -> None:
    for key in expect:
        if key not in _OPERATOR_NAMES:
            raise _malformed(path, f"unknown operator {key}")
    if "$tol" in expect and "$approx" not in expect and "$time" not in expect:
        raise _malformed(path, "$tol needs $approx or $time")
    for key, arg in expect.items():
        if key in ("$any", "$absent"):
            if arg is not True:
                raise _malformed(path, f"{key} takes only true, not {render(arg)}")
        elif key == "$len":
            if not is_number(arg) or not math.isfinite(arg) or arg < 0 or arg != math.floor(arg):
                raise _malformed(path, f"$len takes a non-negative integer, not {render(arg)}")
        elif key == "$approx":
            if not is_number(arg):
                raise _malformed(path, f"$approx takes a number, not {render(arg)}")
        elif key == "$tol":
            if not is_number(arg) or arg < 0:
                raise _malformed(path, f"$tol takes a non-negative number, not {render(arg)}")
        elif key == "$time":
            if not isinstance(arg, str) or parse_rfc3339(arg) is None:
                raise _malformed(path, f"$time takes an RFC 3339 timestamp, not {render(arg)}")
        elif key == "$match":
            if not isinstance(arg, str):
                raise _malformed(path, f"$match takes a string, not {render(arg)}")
            if not _within_shared_subset(arg):
                raise _malformed(
                    path, f"$match takes a regular expression of the runners' shared subset, not {render(arg)}"
                )
            try:
                re.compile(arg)
            except re.error as error:
                raise _malformed(path, f"$match takes a valid regular expression, not {render(arg)}") from error
        elif key == "$not":
            check_expectation(arg, _key_path(path, "$not"))
        elif key == "$contains":
            if not isinstance(arg, list):
                raise _malformed(path, f"$contains takes an array, not {render(arg)}")
            for index, item in enumerate(arg):
                check_expectation(item, f"{_key_path(path, '$contains')}[{index}]")


# --------------------------------------------------------------------------- matching


def mismatch(expect: Any, actual: Any, path: str = "") -> str | None:
    """Why ``actual`` does not match ``expect``, or None when it matches.

    ``actual`` is MISSING when the key is not there. The message names the path and both
    values, e.g. ``result.nodes[0].state: expected "queuedRemote", got "ready"``.
    Raises FixtureError for a malformed expectation.
    """
    check_expectation(expect)
    return _mismatch(expect, actual, path)


def matches(expect: Any, actual: Any) -> bool:
    """True when ``actual`` matches ``expect`` (see :func:`mismatch`)."""
    return mismatch(expect, actual) is None


def _differs(expect: Any, actual: Any, path: str, note: str = "") -> str:
    """``path: expected E, got A (note)``, or ``path: missing (expected E)``."""
    if actual is MISSING:
        return f"{_where(path)}: missing (expected {render(expect)})"
    text = f"{_where(path)}: expected {render(expect)}, got {render(actual)}"
    return f"{text} ({note})" if note else text


def _mismatch(expect: Any, actual: Any, path: str) -> str | None:
    """:func:`mismatch` on a checked expectation."""
    if is_operator(expect):
        return _operator_mismatch(expect, actual, path)
    if actual is MISSING:
        return _differs(expect, actual, path)
    if isinstance(expect, dict):
        if not isinstance(actual, dict):
            return _differs(expect, actual, path)
        for key, wanted in expect.items():
            problem = _mismatch(wanted, actual.get(key, MISSING), _key_path(path, key))
            if problem:
                return problem
        return None
    if isinstance(expect, list):
        if not isinstance(actual, list):
            return _differs(expect, actual, path)
        if len(actual) != len(expect):
            return _differs(expect, actual, path, f"expected {len(expect)} elements, got {len(actual)}")
        for index, (wanted, got) in enumerate(zip(expect, actual, strict=True)):
            problem = _mismatch(wanted, got, f"{path}[{index}]")
            if problem:
                return problem
        return None
    return None if _scalar_equal(expect, actual) else _differs(expect, actual, path)


def _scalar_equal(expect: Any, actual: Any) -> bool:
    if is_number(expect):
        return is_number(actual) and _numbers_equal(expect, actual)
    if isinstance(expect, bool) or expect is None:
        return type(actual) is type(expect) and actual == expect
    if isinstance(expect, str):
        return isinstance(actual, str) and actual == expect  # code points, no normalisation
    return False


def _numbers_equal(a: int | float, b: int | float) -> bool:
    """By value, exactly: Python compares an int and a float without rounding the int, so a
    real matches an integer only when it is that integer (as the C and Swift runners)."""
    return a == b


# --------------------------------------------------------------------------- operators


def _operator_mismatch(expect: dict[str, Any], actual: Any, path: str) -> str | None:
    """All operators of ``expect`` must hold, in written order ("$tol" only qualifies)."""
    for key, arg in expect.items():
        if key == "$tol":
            continue
        if key == "$absent":
            if actual is not MISSING and actual is not None:
                return _differs(expect, actual, path)
            continue
        if key == "$not":
            if _mismatch(arg, actual, path) is None:
                return _differs(expect, actual, path)
            continue
        if actual is MISSING:  # the other operators need a value
            return _differs(expect, actual, path)
        problem = _OPERATORS[key](expect, arg, actual)
        if problem is not None:
            return _differs(expect, actual, path, problem)
    return None


# Each returns None when the operator holds, else the note of the message ("" for none).


def _op_any(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    return None  # presence was checked by the caller


def _op_len(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    if not isinstance(actual, (list, dict, str)):
        return "not an array, object or string"
    return None if len(actual) == arg else f"length {len(actual)}"  # len(str) counts code points


def _op_approx(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    if not is_number(actual):
        return "not a number"
    target, tol, value = float(arg), float(expect.get("$tol", 1e-9)), float(actual)
    bound = tol if target == 0 else tol * abs(target)
    return None if abs(value - target) <= bound else ""


def _op_time(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    got = parse_rfc3339(actual) if isinstance(actual, str) else None
    if got is None:
        return "not an RFC 3339 timestamp"
    target = parse_rfc3339(arg)
    assert target is not None  # checked
    # The tolerance in whole nanoseconds, rounded half away from zero as C's round().
    limit = Decimal(float(expect.get("$tol", 0)) * 1e9).to_integral_value(rounding=ROUND_HALF_UP)
    return None if limit >= 2**63 or abs(got - target) <= limit else ""


_SPECIAL = frozenset(".[]()*+?{}|^$\\")


def _within_shared_subset(p: str) -> bool:
    """Whether a ``$match`` pattern keeps to the regular expressions the three runners read alike
    (the runner cases' README): literals, ``.``, ``[...]`` and ``[^...]`` (ASCII ranges, ``-``
    first or last; no ``\\``, ``[``, ``&&`` or ``--`` inside, no ``:`` first), ``*``, ``+``,
    ``?``, ``{m}``, ``{m,}``, ``{m,n}`` (m <= n <= 255) after something to repeat, ``|`` between
    non-empty alternatives, non-empty ``(...)``, ``^``, ``$``, and ``\\`` before a special
    character. The Swift runner's ``RegexSubset`` and the C runner's ``within_shared_subset``
    hold the same rules."""
    n = len(p)
    i = depth = 0
    quantifiable, branch_empty, last_bar = False, True, False
    while i < n:
        c = p[i]
        if c == "\\":
            if i + 1 >= n or p[i + 1] not in _SPECIAL:
                return False
            i += 2
            quantifiable, branch_empty, last_bar = True, False, False
        elif c == "[":
            j = i + 1
            if j < n and p[j] == ":":  # ICU reads [:alpha:] as a property
                return False
            if j < n and p[j] == "^":
                j += 1
            start, items = j, 0
            while j < n and p[j] != "]":
                ch = p[j]
                if ch in "\\[" or (ch in "&-" and j + 1 < n and p[j + 1] == ch):  # ICU: && and -- are set operations
                    return False
                if j + 2 < n and p[j + 1] == "-" and p[j + 2] != "]":
                    hi = p[j + 2]
                    if not (ch.isascii() and hi.isascii()) or "-" in (ch, hi) or hi in "\\[" or hi < ch:
                        return False
                    j += 3
                else:
                    if ch == "-" and j != start and j + 1 < n and p[j + 1] != "]":
                        return False
                    j += 1
                items += 1
            if j >= n or items == 0:
                return False
            i = j + 1
            quantifiable, branch_empty, last_bar = True, False, False
        elif c == "(":
            if i + 1 < n and p[i + 1] == ")":
                return False
            depth += 1
            i += 1
            quantifiable, branch_empty, last_bar = False, True, False
        elif c == ")":
            if depth == 0 or branch_empty:
                return False
            depth -= 1
            i += 1
            quantifiable, branch_empty, last_bar = True, False, False
        elif c == "|":
            if branch_empty:
                return False
            i += 1
            quantifiable, branch_empty, last_bar = False, True, True
        elif c in "*+?":
            if not quantifiable:
                return False
            i += 1
            quantifiable = False
        elif c == "{":
            end = _bounds(p, i + 1) if quantifiable else None
            if end is None:
                return False
            i = end
            quantifiable = False
        elif c in "}]":
            return False
        elif c in "^$":
            i += 1
            quantifiable, branch_empty, last_bar = False, False, False
        else:
            i += 1
            quantifiable, branch_empty, last_bar = True, False, False
    return depth == 0 and not last_bar


def _bounds(p: str, start: int) -> int | None:
    """``m}``, ``m,}`` or ``m,n}`` from ``start`` (just after ``{``), m <= n <= 255: the index after
    ``}``, else None."""

    def number(at: int) -> tuple[int | None, int]:
        digits = ""
        while at < len(p) and p[at] in "0123456789":
            digits += p[at]
            if len(digits) > 3:
                return None, at
            at += 1
        return (int(digits) if digits else None), at

    m, j = number(start)
    if m is None or m > 255 or j >= len(p):
        return None
    if p[j] == "}":
        return j + 1
    if p[j] != ",":
        return None
    j += 1
    if j >= len(p):
        return None
    if p[j] == "}":
        return j + 1
    upper, j = number(j)
    if upper is None or upper > 255 or upper < m or j >= len(p) or p[j] != "}":
        return None
    return j + 1


def _op_match(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    if not isinstance(actual, str):
        return "not a string"
    return None if re.search(arg, actual) else ""


def _op_contains(expect: dict[str, Any], arg: Any, actual: Any) -> str | None:
    if not isinstance(actual, list):
        return "not an array"
    candidates = [[j for j, got in enumerate(actual) if _mismatch(item, got, "") is None] for item in arg]
    for index, fits in enumerate(candidates):
        if not fits:
            return f"no element matches $contains[{index}]"
    return None if _assignable(candidates) else "no distinct element for each item"


def _assignable(candidates: list[list[int]]) -> bool:
    """Whether each item can have a different element (bipartite matching, augmenting paths)."""
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

    return all(assign(i, set()) for i in range(len(candidates)))


_OPERATORS = {
    "$any": _op_any,
    "$len": _op_len,
    "$approx": _op_approx,
    "$time": _op_time,
    "$match": _op_match,
    "$contains": _op_contains,
}

_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_rfc3339(text: str) -> int | None:
    """Nanoseconds since the epoch of an RFC 3339 timestamp, or None if it is not one.

    ``YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)``, ``T`` and ``Z`` in either case, a real
    date, seconds 00-59; fraction digits after the ninth are ignored."""
    match = _RFC3339.fullmatch(text)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= month <= 12 or not 1 <= day <= (29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]):
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    zone = match.group(8)
    offset = 0
    if zone not in ("Z", "z"):
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        offset = (hours * 3600 + minutes * 60) * (1 if zone[0] == "+" else -1)
    fraction = int((match.group(7) or "")[:9].ljust(9, "0"))
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds * 1_000_000_000 + fraction


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


# --------------------------------------------------------------------------- save and substitute

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[0-9]+\])*)")


def parse_path(path: str) -> list[str | int]:
    """``"result.effects[0].runId"`` → ``["result", "effects", 0, "runId"]``."""
    steps: list[str | int] = []
    for piece in path.split("."):
        match = _SEGMENT.fullmatch(piece)
        if not match:
            raise FixtureError(f"bad path '{path}'")
        steps.append(match.group(1))
        steps.extend(int(i) for i in re.findall(r"\[([0-9]+)\]", match.group(2)))
    return steps


def lookup(value: Any, path: str) -> Any:
    """The value at a dotted path with ``[i]`` indices; MISSING if it is not there."""
    for step in parse_path(path):
        if isinstance(step, int):
            if not (isinstance(value, list) and step < len(value)):
                return MISSING
        elif not (isinstance(value, dict) and step in value):
            return MISSING
        value = value[step]
    return value


def substitute(value: Any, saved: dict[str, Any]) -> Any:
    """Replace ``${name}`` in the string values of ``value`` (not in keys), recursively.

    A reference runs from ``${`` to the next ``}``. A string that is exactly one reference
    becomes the saved value with its type; inside a longer string the value is spliced in
    as text (strings verbatim, others as compact JSON). ``${}`` and a ``${`` with no ``}``
    are plain text. An unknown name is a FixtureError.
    """
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    if not isinstance(value, str):
        return value
    references = _references(value)
    if len(references) == 1 and references[0][1:] == (0, len(value)):
        return copy.deepcopy(_saved(saved, references[0][0]))
    out, cursor = [], 0
    for name, start, end in references:
        found = _saved(saved, name)
        out += [value[cursor:start], found if isinstance(found, str) else compact(found)]
        cursor = end
    return "".join(out) + value[cursor:]


def _references(text: str) -> list[tuple[str, int, int]]:
    """Every ``${name}`` of ``text`` as (name, start, end); ``${}`` is skipped."""
    found: list[tuple[str, int, int]] = []
    at = text.find("${")
    while at >= 0:
        close = text.find("}", at + 2)
        if close < 0:
            break
        if close > at + 2:
            found.append((text[at + 2 : close], at, close + 1))
        at = text.find("${", close + 1)
    return found


def _saved(saved: dict[str, Any], name: str) -> Any:
    if name not in saved:
        raise FixtureError(f"unknown saved name '{name}'")
    return saved[name]


def save(outcome: dict[str, Any], spec: dict[str, str], saved: dict[str, Any]) -> None:
    """Store each ``name: path`` of a step's (checked) ``save`` from ``outcome`` into ``saved``."""
    for name, path in spec.items():
        value = lookup(outcome, path)
        if value is MISSING:
            raise FixtureError(f"save '{name}': {path} is not in the outcome")
        saved[name] = copy.deepcopy(value)


# --------------------------------------------------------------------------- running


@dataclass
class FixtureResult:
    """The verdict on one fixture, and its report line."""

    name: str
    passed: bool
    detail: str = ""

    @property
    def line(self) -> str:
        """``PASS name`` or ``FAIL name: detail``; line feeds as ``\n``, returns as ``\r``."""
        text = f"PASS {self.name}" if self.passed else f"FAIL {self.name}: {self.detail}"
        return text.replace("\n", "\\n").replace("\r", "\\r")


class _StepFailure(Exception):
    def __init__(self, number: int, label: str, what: str) -> None:
        super().__init__(f"step {number} ({label}): {what}")


def outcome_of(engine: Engine, op: str, args: Any) -> dict[str, Any]:
    """Call ``op`` and describe what came back as a FORMAT.md outcome.

    ``args`` that is not an object goes to the engine as JSON text (``wf_call_text``), which
    names it ``args_json`` in its refusal; the outcome names it ``args``, as ``wf_call`` (the C
    runner) and the Swift runner do, so the three hosts report the same outcome.
    """
    try:
        if args is None or isinstance(args, dict):
            result = engine.call(op, args)
        else:
            try:
                result = engine.call_json(op, json.dumps(args))
            except WorkflowError as error:
                if error.code == "invalidArgument" and error.details == {"argument": "args_json"}:
                    error.message = "args" + error.message.removeprefix("args_json")
                    error.details = {"argument": "args"}
                raise
    except WorkflowError as error:
        return {
            "ok": False,
            "error": {"status": error.status, "code": error.code, "message": error.message, "details": error.details},
        }
    return {"ok": True, "result": result}


def _error_note(outcome: dict[str, Any]) -> str:
    error = outcome["error"]
    return f"{error['code']}: {error['message']}"


_NO_EXPECT: Any = object()


def _check_outcome(expect: Any, outcome: dict[str, Any]) -> str | None:
    """What is wrong with an op step's outcome, or None (``expect`` is checked)."""
    if expect is _NO_EXPECT:
        return None if outcome["ok"] else f"unexpected error {_error_note(outcome)}"
    # A wrong "ok" says more than any detail under it: report it first, with the error or result.
    wanted = expect.get("ok") if isinstance(expect, dict) else None
    if isinstance(wanted, bool) and wanted != outcome["ok"]:
        if wanted:
            return f"ok: expected true, got false ({_error_note(outcome)})"
        return f"ok: expected false, got true (result {render(outcome['result'])})"
    return _mismatch(expect, outcome, "")


class _Run:
    """One fixture being replayed: its config, its live engine, its saved values."""

    def __init__(self, fixture: dict[str, Any]) -> None:
        self.config, self.store = _engine_config(fixture.get("engine", {}))
        self.saved: dict[str, Any] = {}
        self.engine: Engine | None = None

    def open(self, context: str) -> None:
        """Open the engine; on failure raise ``context`` + "code: message"."""
        try:
            self.engine = Engine(self.config)
        except WorkflowError as error:
            self.engine = None
            raise FixtureError(f"{context}{error.code}: {error.message}") from error

    def reopen(self, number: int, how: str) -> None:
        if self.engine is not None:
            if how == "clean":
                self.engine.close()
            else:
                _ABANDONED.append(self.engine)  # neither closed nor freed, ever
        self.engine = None
        try:
            self.open("reopening the engine: ")
        except FixtureError as error:
            raise _StepFailure(number, "reopen", str(error)) from error

    def op_step(self, number: int, step: dict[str, Any]) -> None:
        op = step["op"]
        try:
            args = substitute(step.get("args"), self.saved)
            expect = substitute(step["expect"], self.saved) if "expect" in step else _NO_EXPECT
            if expect is not _NO_EXPECT:
                check_expectation(expect)
            assert self.engine is not None
            outcome = outcome_of(self.engine, op, args)
            problem = _check_outcome(expect, outcome)
            if problem is None and "save" in step:
                save(outcome, step["save"], self.saved)
        except FixtureError as error:
            problem = str(error)
        if problem:
            raise _StepFailure(number, op, problem)

    def step(self, number: int, step: dict[str, Any]) -> None:
        if "reopen" in step:
            self.reopen(number, step["reopen"])
        else:
            self.op_step(number, step)

    def finish(self) -> None:
        """Close the live engine and delete a temporary store with its journal and side files."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None
        if self.store is not None:
            for suffix in ("", "-wal", "-shm", "-journal", "-wfjournal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.store + suffix)


def _engine_config(config: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The fixture's engine config with a "$tempfile" store made real, and that path."""
    config = copy.deepcopy(config)
    if config.get("store") != TEMPFILE:
        return config, None
    handle, path = tempfile.mkstemp(prefix="wf-conformance-", suffix=".sqlite")
    os.close(handle)
    os.unlink(path)  # the engine creates it
    config["store"] = path
    return config, path


def _guarded_step(run: _Run, number: int, step: dict[str, Any]) -> None:
    """One step; a bug in the runner or binding fails the fixture instead of the run."""
    try:
        run.step(number, step)
    except _StepFailure:
        raise
    except Exception as error:  # reported, with its type, as the step's failure
        label = step["op"] if "op" in step else "reopen"
        raise _StepFailure(number, label, f"runner error: {type(error).__name__}: {error}") from error


def run_fixture(fixture: Any, default_name: str = "fixture") -> FixtureResult:
    """Check one parsed fixture, then replay it on a fresh engine. An invalid fixture is
    reported under its name, or ``default_name`` (its path) when it has none."""
    # Substitution and matching recurse a few frames per level of a fixture nested up to
    # MAX_DEPTH deep: more than Python's default limit of 1,000 frames.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8 * MAX_DEPTH + 1000))
    try:
        return _run_checked(fixture, default_name)
    finally:
        sys.setrecursionlimit(limit)


def _run_checked(fixture: Any, default_name: str) -> FixtureResult:
    try:
        check_fixture(fixture)
    except FixtureError as error:
        return FixtureResult(fixture_name(fixture) or default_name, False, f"invalid fixture: {error}")
    name = fixture["name"]
    run = _Run(fixture)
    try:
        try:
            run.open("opening the engine: ")
        except FixtureError as error:
            return FixtureResult(name, False, str(error))
        for number, step in enumerate(fixture["steps"], start=1):
            _guarded_step(run, number, step)
    except _StepFailure as failure:
        return FixtureResult(name, False, str(failure))
    finally:
        run.finish()
    return FixtureResult(name, True)


def run_file(path: str | os.PathLike[str]) -> FixtureResult:
    """Load and replay one fixture file."""
    try:
        fixture = load_fixture(path)
    except FixtureError as error:
        return FixtureResult(os.fspath(path), False, f"invalid fixture: {error}")
    return run_fixture(fixture, default_name=os.fspath(path))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run every fixture named, print the report, return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python3 -m workflow_engine.conformance",
        description="Replay workflow engine conformance fixtures, sorted by path.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="fixture file or folder (every *.json below it)")
    options = parser.parse_args(argv)
    try:
        files = fixture_files(options.paths)
    except FileNotFoundError as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    failed = 0
    for path in files:
        result = run_file(path)
        failed += not result.passed
        print(result.line, flush=True)
    print(f"{len(files) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
