"""The fixture matcher, substitution and save rules of the conformance runner (pure Python)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from workflow_engine.conformance import (
    MISSING,
    FixtureError,
    lookup,
    matches,
    mismatch,
    parse_path,
    parse_rfc3339,
    save,
    substitute,
)

# --------------------------------------------------------------------------- plain values


def test_objects_match_on_named_keys_only() -> None:
    actual = {"a": 1, "b": {"c": "x", "d": [1]}, "extra": True}
    assert matches({"a": 1, "b": {"c": "x"}}, actual)
    assert matches({}, actual)
    assert mismatch({"b": {"c": "y"}}, actual, "result") == 'result.b.c: expected "y", got "x"'
    assert mismatch({"zz": 1}, actual, "result") == "result.zz: expected 1, got nothing"
    assert not matches({}, [1])
    assert not matches({"a": 1}, "a")


def test_arrays_match_same_length_elementwise() -> None:
    assert matches([1, {"a": 2}], [1, {"a": 2, "b": 3}])
    assert mismatch([1, 2], [1, 3], "r") == "r[1]: expected 2, got 3"
    assert "expected an array of 2 elements" in str(mismatch([1, 2], [1, 2, 3], "r"))
    assert not matches([1], [])
    assert not matches([], {})


def test_numbers_match_numerically() -> None:
    assert matches(1, 1.0)
    assert matches(1.0, 1)
    assert matches(-0.0, 0)
    assert not matches(1, 1.5)
    assert not matches(1, "1")


def test_booleans_are_not_numbers() -> None:
    assert matches(True, True)
    assert not matches(True, 1)
    assert not matches(1, True)
    assert not matches(0, False)
    assert not matches(False, 0.0)
    assert mismatch(1, True, "x") == "x: expected 1, got true"


def test_other_scalars_by_equality() -> None:
    assert matches("a", "a")
    assert not matches("a", "A")
    assert matches(None, None)
    assert not matches(None, False)
    assert not matches(None, MISSING)
    assert not matches("", None)


def test_mismatch_message_names_path_and_both_values() -> None:
    actual = {"result": {"nodes": [{"state": "ready"}]}}
    expect = {"result": {"nodes": [{"state": "queuedRemote"}]}}
    assert mismatch(expect, actual) == 'result.nodes[0].state: expected "queuedRemote", got "ready"'


def test_odd_keys_are_quoted_in_paths() -> None:
    assert mismatch({"a b": 1}, {"a b": 2}, "r") == 'r["a b"]: expected 1, got 2'


# --------------------------------------------------------------------------- $any and $absent


def test_any_needs_presence_only() -> None:
    assert matches({"k": {"$any": True}}, {"k": None})
    assert matches({"k": {"$any": True}}, {"k": [1]})
    assert mismatch({"k": {"$any": True}}, {}, "r") == 'r.k: expected {"$any":true}, got nothing'


def test_absent_means_missing_or_null() -> None:
    assert matches({"k": {"$absent": True}}, {})
    assert matches({"k": {"$absent": True}}, {"k": None})
    assert mismatch({"k": {"$absent": True}}, {"k": 0}, "r") == "r.k: expected nothing (absent or null), got 0"
    assert not matches({"k": {"$absent": True}}, {"k": False})


def test_missing_key_fails_every_other_operator() -> None:
    operator: dict[str, Any]
    for operator in ({"$len": 0}, {"$match": ""}, {"$approx": 0}, {"$contains": []}, {"$time": "2026-01-01T00:00:00Z"}):
        assert not matches({"k": operator}, {}), operator


def test_bad_operands_are_fixture_errors() -> None:
    bad: dict[str, Any]
    for bad in (
        {"$any": False},
        {"$absent": 1},
        {"$len": -1},
        {"$len": True},
        {"$len": 1.5},
        {"$len": float("inf")},
        {"$approx": "1"},
        {"$approx": 1, "$tol": -1},
        {"$time": "yesterday"},
        {"$match": 3},
        {"$match": "("},
        {"$contains": {}},
        {"$tol": 1},
        {"$unknown": 1},
    ):
        with pytest.raises(FixtureError):
            mismatch(bad, [1])


# --------------------------------------------------------------------------- $not


def test_not_inverts() -> None:
    assert matches({"$not": "a"}, "b")
    assert not matches({"$not": "a"}, "a")
    assert matches({"$not": {"$len": 2}}, [1])
    assert mismatch({"$not": 1}, 1, "r") == "r: expected anything but 1, got 1"


def test_not_on_a_missing_key() -> None:
    assert matches({"k": {"$not": "x"}}, {})  # the inner expectation needs presence
    assert matches({"k": {"$not": {"$any": True}}}, {})
    assert not matches({"k": {"$not": {"$absent": True}}}, {})
    assert matches({"k": {"$not": {"$absent": True}}}, {"k": 1})


# --------------------------------------------------------------------------- $len


def test_len_counts_entries_and_code_points() -> None:
    assert matches({"$len": 2}, [0, 0])
    assert matches({"$len": 1}, {"a": 1})
    assert matches({"$len": 3}, "a→b")  # three code points, five UTF-8 bytes
    assert matches({"$len": 1}, "😀")
    assert matches({"$len": 2.0}, "ab")
    assert not matches({"$len": 2}, [0])
    assert not matches({"$len": 1}, 5)
    assert mismatch({"$len": 2}, [0], "r") == "r: expected length 2, got length 1: [0]"


# --------------------------------------------------------------------------- $approx


def test_approx_relative_tolerance() -> None:
    assert matches({"$approx": 100, "$tol": 0.01}, 101)
    assert matches({"$approx": 100, "$tol": 0.01}, 99.0)
    assert not matches({"$approx": 100, "$tol": 0.01}, 101.5)
    assert matches({"$approx": 0.3}, 0.1 + 0.2)  # default 1e-9 relative
    assert not matches({"$approx": 0.3}, 0.3001)
    assert not matches({"$approx": 1}, True)
    assert not matches({"$approx": 1}, "1")


def test_approx_zero_uses_absolute_tolerance() -> None:
    assert matches({"$approx": 0, "$tol": 0.5}, -0.5)
    assert not matches({"$approx": 0, "$tol": 0.5}, 0.6)
    assert matches({"$approx": 0}, 0)
    assert not matches({"$approx": 0}, 1e-6)


# --------------------------------------------------------------------------- $time


def test_time_within_seconds() -> None:
    assert matches({"$time": "2026-01-01T00:00:30.000Z"}, "2026-01-01T00:00:30.000Z")
    assert matches({"$time": "2026-01-01T00:00:30Z"}, "2026-01-01T00:00:30.000Z")
    assert not matches({"$time": "2026-01-01T00:00:30.000Z"}, "2026-01-01T00:00:30.001Z")
    assert matches({"$time": "2026-01-01T00:00:30.100Z", "$tol": 1}, "2026-01-01T00:00:31.100Z")
    assert not matches({"$time": "2026-01-01T00:00:30.100Z", "$tol": 1}, "2026-01-01T00:00:31.101Z")
    assert matches({"$time": "2026-01-01T01:00:00+01:00"}, "2026-01-01T00:00:00.000Z")
    assert matches({"$time": "2026-01-01 00:00:00Z"}, "2026-01-01T00:00:00.000Z")
    assert not matches({"$time": "2026-01-01T00:00:00Z"}, "not a time")
    assert not matches({"$time": "2026-01-01T00:00:00Z"}, 1767225600)


def test_parse_rfc3339() -> None:
    assert parse_rfc3339("1970-01-01T00:00:01.250Z") == Decimal("1.250")
    assert parse_rfc3339("2026-01-01T00:00:00.000Z") == Decimal(1767225600)
    assert parse_rfc3339("1970-01-01T00:00:00-00:30") == Decimal(1800)
    for bad in ("2026-01-01", "2026-01-01T00:00:00", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00.Z", "x"):
        assert parse_rfc3339(bad) is None, bad


# --------------------------------------------------------------------------- $match


def test_match_searches() -> None:
    assert matches({"$match": "cycle"}, "cycle detected: a → b → a")
    assert matches({"$match": "^a+b?$"}, "aaa")
    assert matches({"$match": "[0-9]{3}"}, "x123y")
    assert not matches({"$match": "^cycle$"}, "cycle detected")
    assert not matches({"$match": "1"}, 1)
    assert mismatch({"$match": "^z"}, "abc", "m") == 'm: expected a string matching "^z", got "abc"'


# --------------------------------------------------------------------------- $contains


def test_contains_each_element_matches_a_different_element() -> None:
    effects = [{"type": "notify"}, {"type": "remote.submit", "nodeId": "a"}, {"type": "remote.submit", "nodeId": "b"}]
    assert matches({"$contains": [{"type": "remote.submit"}]}, effects)
    assert matches({"$contains": [{"type": "remote.submit"}, {"type": "remote.submit"}]}, effects)
    assert not matches({"$contains": [{"type": "notify"}, {"type": "notify"}]}, effects)
    assert matches({"$contains": []}, [])
    assert not matches({"$contains": [1]}, [])
    assert not matches({"$contains": [1]}, {"a": 1})


def test_contains_needs_a_proper_assignment_not_a_greedy_one() -> None:
    # Greedy would give the first element to {"a": 1} and leave {"a": 1, "b": 2} nothing.
    actual = [{"a": 1, "b": 2}, {"a": 1}]
    assert matches({"$contains": [{"a": 1}, {"a": 1, "b": 2}]}, actual)
    assert not matches({"$contains": [{"a": 1}, {"a": 1, "b": 2}, {"a": 1}]}, actual)


def test_contains_failure_names_the_unmatched_element() -> None:
    message = mismatch({"$contains": [{"type": "x"}]}, [{"type": "y"}], "result.effects")
    assert message == 'result.effects: expected an element matching {"type":"x"}, got [{"type":"y"}]'


def test_operators_combine_and_nest() -> None:
    assert matches({"$len": 2, "$contains": [{"$match": "^a"}]}, ["ab", "c"])
    assert not matches({"$len": 3, "$contains": [{"$match": "^a"}]}, ["ab", "c"])
    assert matches({"rows": {"$contains": [{"n": {"$approx": 2, "$tol": 0.1}}]}}, {"rows": [{"n": 2.1}]})


# --------------------------------------------------------------------------- save paths


def test_parse_path() -> None:
    assert parse_path("result.effects[0].runId") == ["result", "effects", 0, "runId"]
    assert parse_path("result.m[1][2]") == ["result", "m", 1, 2]
    for bad in ("", "a..b", "[0]", "a[x]", "a[-1]"):
        with pytest.raises(FixtureError):
            parse_path(bad)


def test_lookup_and_save() -> None:
    outcome: dict[str, Any] = {"ok": True, "result": {"effects": [{"runId": "r1", "n": 2}]}}
    assert lookup(outcome, "result.effects[0].runId") == "r1"
    saved: dict[str, Any] = {}
    save(outcome, {"run": "result.effects[0].runId", "eff": "result.effects[0]"}, saved)
    assert saved == {"run": "r1", "eff": {"runId": "r1", "n": 2}}
    saved["eff"]["n"] = 3
    assert outcome["result"]["effects"][0]["n"] == 2  # saved values are copies
    for missing in ("result.effects[1]", "result.nope", "result.effects.runId", "error.code"):
        with pytest.raises(FixtureError, match="is not in the outcome"):
            lookup(outcome, missing)
    with pytest.raises(FixtureError, match=r"save x: result\.nope"):
        save(outcome, {"x": "result.nope"}, saved)


# --------------------------------------------------------------------------- substitution


def test_whole_string_placeholder_keeps_the_type() -> None:
    saved = {"n": 3, "obj": {"a": [1]}, "s": "wf-1", "nul": None}
    assert substitute("${n}", saved) == 3
    assert substitute("${obj}", saved) == {"a": [1]}
    assert substitute("${nul}", saved) is None
    assert substitute({"id": "${s}", "list": ["${n}"]}, saved) == {"id": "wf-1", "list": [3]}


def test_placeholder_inside_a_string_is_spliced_as_text() -> None:
    saved = {"n": 3, "obj": {"a": [1, "x"]}, "s": "wf-1", "b": True}
    assert substitute("id=${s}", saved) == "id=wf-1"
    assert substitute("${s}/${n}", saved) == "wf-1/3"
    assert substitute("v ${obj}", saved) == 'v {"a":[1,"x"]}'
    assert substitute("${b}!", saved) == "true!"


def test_substitution_leaves_keys_and_non_strings_alone() -> None:
    saved = {"k": "v"}
    assert substitute({"${k}": 1, "n": 2.5, "t": True, "z": None}, saved) == {"${k}": 1, "n": 2.5, "t": True, "z": None}
    assert substitute("$k and {k} and $", saved) == "$k and {k} and $"


def test_substitution_reaches_operator_operands() -> None:
    saved = {"t": "2026-01-01T00:00:00.000Z", "id": "r1"}
    expect = substitute({"at": {"$time": "${t}", "$tol": 1}, "ids": {"$contains": ["${id}"]}}, saved)
    assert expect == {"at": {"$time": "2026-01-01T00:00:00.000Z", "$tol": 1}, "ids": {"$contains": ["r1"]}}


def test_unknown_saved_name_is_a_fixture_error() -> None:
    with pytest.raises(FixtureError, match=r"unknown saved name \$\{wf\}"):
        substitute({"a": ["x ${wf}"]}, {})
    with pytest.raises(FixtureError):
        substitute("${wf}", {"wff": 1})
