"""The fixture matcher, substitution and save rules of the conformance runner (pure Python)."""

from __future__ import annotations

from typing import Any

import pytest

from workflow_engine.conformance import (
    MISSING,
    FixtureError,
    check_expectation,
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
    assert mismatch({"zz": 1}, actual, "result") == "result.zz: missing (expected 1)"
    assert not matches({}, [1])
    assert not matches({"a": 1}, "a")


def test_arrays_match_same_length_elementwise() -> None:
    assert matches([1, {"a": 2}], [1, {"a": 2, "b": 3}])
    assert mismatch([1, 2], [1, 3], "r") == "r[1]: expected 2, got 3"
    assert mismatch([1, 2], [1, 2, 3], "r") == "r: expected [1,2], got [1,2,3] (expected 2 elements, got 3)"
    assert mismatch([1], "x") == 'outcome: expected [1], got "x"'
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
    assert not matches("\u00e9", "e\u0301")  # code points, no normalisation
    assert not matches("a", "A")
    assert matches(None, None)
    assert not matches(None, False)
    assert not matches(None, MISSING)
    assert not matches("", None)


def test_mismatch_message_names_path_and_both_values() -> None:
    actual = {"result": {"nodes": [{"state": "ready"}]}}
    expect = {"result": {"nodes": [{"state": "queuedRemote"}]}}
    assert mismatch(expect, actual) == 'result.nodes[0].state: expected "queuedRemote", got "ready"'


def test_paths_join_keys_as_written() -> None:
    assert mismatch({"a b": 1}, {"a b": 2}, "r") == "r.a b: expected 1, got 2"


def test_long_values_are_cut_after_300_code_points() -> None:
    assert mismatch("y", "é" * 400, "r") == 'r: expected "y", got "' + "é" * 299 + "…"


# --------------------------------------------------------------------------- $any and $absent


def test_any_needs_presence_only() -> None:
    assert matches({"k": {"$any": True}}, {"k": None})
    assert matches({"k": {"$any": True}}, {"k": [1]})
    assert mismatch({"k": {"$any": True}}, {}, "r") == 'r.k: missing (expected {"$any":true})'


def test_absent_means_missing_or_null() -> None:
    assert matches({"k": {"$absent": True}}, {})
    assert matches({"k": {"$absent": True}}, {"k": None})
    assert mismatch({"k": {"$absent": True}}, {"k": 0}, "r") == 'r.k: expected {"$absent":true}, got 0'
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
        {"$not": {"$unknown": 1}},
        {"$not": {"a": {"$len": "x"}}},
        {"$contains": [{"$any": False}]},
    ):
        with pytest.raises(FixtureError, match="^malformed expectation: "):
            mismatch(bad, [1])
    with pytest.raises(FixtureError, match="^malformed expectation: k: \\$len takes a non-negative integer, not -1$"):
        mismatch({"k": {"$len": -1}}, {})  # even where the outcome has no member


def test_malformed_expectations_name_their_place_in_expect() -> None:
    cases = [
        ({"r": {"$bogus": 1}}, "r: unknown operator $bogus"),
        ({"r": {"$len": "x", "$bogus": 1}}, "r: unknown operator $bogus"),
        ({"r": {"$not": {"$bogus": 1}}}, "r.$not: unknown operator $bogus"),
        ({"r": {"$contains": [1, {"k": {"$bogus": 1}}]}}, "r.$contains[1].k: unknown operator $bogus"),
        ({"r": [{"$absent": False}]}, "r[0]: $absent takes only true, not false"),
        ({"$tol": 1}, "outcome: $tol needs $approx or $time"),
        ({"r": {"$match": "("}}, "r: $match takes a regular expression of the runners' shared subset, not \"(\""),
        ({"r": {"$match": "a{,2}"}}, "r: $match takes a regular expression of the runners' shared subset, not \"a{,2}\""),
        ({"r": {"$time": "2026-02-30T00:00:00Z"}}, 'r: $time takes an RFC 3339 timestamp, not "2026-02-30T00:00:00Z"'),
    ]
    for expect, why in cases:
        with pytest.raises(FixtureError) as caught:
            check_expectation(expect)
        assert str(caught.value) == f"malformed expectation: {why}"


# --------------------------------------------------------------------------- $not


def test_not_inverts() -> None:
    assert matches({"$not": "a"}, "b")
    assert not matches({"$not": "a"}, "a")
    assert matches({"$not": {"$len": 2}}, [1])
    assert mismatch({"$not": 1}, 1, "r") == 'r: expected {"$not":1}, got 1'


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
    assert mismatch({"$len": 2}, [0], "r") == 'r: expected {"$len":2}, got [0] (length 1)'
    assert mismatch({"$len": 2}, 5, "r") == 'r: expected {"$len":2}, got 5 (not an array, object or string)'


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
    assert matches({"$time": "2026-01-01t00:00:00z"}, "2026-01-01T00:00:00.000Z")
    assert not matches({"$time": "2026-01-01T00:00:00Z"}, "2026-01-01 00:00:00Z")
    assert not matches({"$time": "2026-01-01T00:00:00Z"}, "not a time")
    assert not matches({"$time": "2026-01-01T00:00:00Z"}, 1767225600)


def test_time_tolerance_counts_whole_nanoseconds() -> None:
    assert matches({"$time": "2026-01-01T00:00:00.0000000009Z"}, "2026-01-01T00:00:00Z")  # 10th digit ignored
    assert not matches({"$time": "2026-01-01T00:00:00.000000001Z"}, "2026-01-01T00:00:00Z")
    assert matches({"$time": "2026-01-01T00:00:00.000000002Z", "$tol": 1.5e-9}, "2026-01-01T00:00:00Z")  # rounds to 2
    assert matches({"$time": "2026-01-01T00:00:00Z", "$tol": 1e12}, "9999-12-31T23:59:59Z")  # 2^63 ns or more: any


def test_parse_rfc3339() -> None:
    assert parse_rfc3339("1970-01-01T00:00:01.250Z") == 1_250_000_000
    assert parse_rfc3339("2026-01-01T00:00:00.000Z") == 1767225600 * 10**9
    assert parse_rfc3339("1970-01-01T00:00:00-00:30") == 1800 * 10**9
    assert parse_rfc3339("2024-02-29T00:00:00Z") is not None
    for bad in (
        "2026-01-01",
        "2026-01-01T00:00:00",
        "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00.Z",
        "x",
        "2026-02-29T00:00:00Z",
        "2026-01-01T00:00:60Z",
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00+24:00",
        "２０２６-01-01T00:00:00Z",
    ):
        assert parse_rfc3339(bad) is None, bad


# --------------------------------------------------------------------------- $match


def test_match_searches() -> None:
    assert matches({"$match": "cycle"}, "cycle detected: a → b → a")
    assert matches({"$match": "^a+b?$"}, "aaa")
    assert matches({"$match": "[0-9]{3}"}, "x123y")
    assert not matches({"$match": "^cycle$"}, "cycle detected")
    assert not matches({"$match": "1"}, 1)
    assert mismatch({"$match": "^z"}, "abc", "m") == 'm: expected {"$match":"^z"}, got "abc"'
    assert mismatch({"$match": "1"}, 1, "m") == 'm: expected {"$match":"1"}, got 1 (not a string)'


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
    assert message == (
        'result.effects: expected {"$contains":[{"type":"x"}]}, got [{"type":"y"}] (no element matches $contains[0])'
    )
    message = mismatch({"$contains": ["a", {"$match": "a"}]}, ["a", "b"], "r")
    assert message == (
        'r: expected {"$contains":["a",{"$match":"a"}]}, got ["a","b"] (no distinct element for each item)'
    )


def test_operators_combine_and_nest() -> None:
    assert matches({"$len": 2, "$contains": [{"$match": "^a"}]}, ["ab", "c"])
    assert not matches({"$len": 3, "$contains": [{"$match": "^a"}]}, ["ab", "c"])
    assert matches({"rows": {"$contains": [{"n": {"$approx": 2, "$tol": 0.1}}]}}, {"rows": [{"n": 2.1}]})


# --------------------------------------------------------------------------- save paths


def test_parse_path() -> None:
    assert parse_path("result.effects[0].runId") == ["result", "effects", 0, "runId"]
    assert parse_path("result.m[1][2]") == ["result", "m", 1, 2]
    for bad in ("", "a..b", "[0]", "a.[0]", "a[x]", "a[-1]", "a.", ".a", "a]b", "a[1"):
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
        assert lookup(outcome, missing) is MISSING
    with pytest.raises(FixtureError, match=r"^save 'x': result\.nope is not in the outcome$"):
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
    assert substitute("${}", saved) == "${}"  # an empty name is plain text
    assert substitute("${}${k}/${k", saved) == "${}v/${k"  # so is a ${ with no } after it


def test_spliced_reals_read_like_pythons_repr() -> None:
    saved = {"r": 1e-05, "big": 1e16, "mid": 9.1e15, "h": 100.0}
    assert substitute("${r} ${big} ${mid} ${h}", saved) == "1e-05 1e+16 9100000000000000.0 100.0"


def test_substitution_reaches_operator_operands() -> None:
    saved = {"t": "2026-01-01T00:00:00.000Z", "id": "r1"}
    expect = substitute({"at": {"$time": "${t}", "$tol": 1}, "ids": {"$contains": ["${id}"]}}, saved)
    assert expect == {"at": {"$time": "2026-01-01T00:00:00.000Z", "$tol": 1}, "ids": {"$contains": ["r1"]}}


def test_unknown_saved_name_is_a_fixture_error() -> None:
    with pytest.raises(FixtureError, match=r"^unknown saved name 'wf'$"):
        substitute({"a": ["x ${wf}"]}, {})
    with pytest.raises(FixtureError):
        substitute("${wf}", {"wff": 1})
    with pytest.raises(FixtureError, match=r"^unknown saved name 'a\$\{b'$"):  # a name runs to the next }
        substitute("${a${b}", {"b": 1})
