import WorkflowConformance
import WorkflowCore
import XCTest

/// The matching rules of shared/conformance/FORMAT.md, each with a passing and a failing case.
final class MatcherTests: XCTestCase {
    // MARK: Plain values

    func testObjectsMatchOnNamedKeysOnly() {
        assertMatches(#"{"a": 1}"#, #"{"a": 1, "b": 2}"#)
        assertMatches(#"{}"#, #"{"a": 1}"#)
        assertMismatch(#"{"a": 1, "b": 3}"#, #"{"a": 1, "b": 2}"#, path: "b", says: "b: expected 3, got 2")
        assertMismatch(#"{"a": {"b": "x"}}"#, #"{"a": {"b": "y"}}"#, path: "a.b", says: #"expected "x", got "y""#)
        assertMismatch(#"{"a": 1}"#, #"[1]"#, path: "", says: "expected {\"a\":1}, got [1]")
    }

    func testMissingKeyFails() {
        assertMismatch(#"{"a": 1}"#, #"{"b": 1}"#, path: "a", says: "a: missing (expected 1)")
        assertMismatch(#"{"a": null}"#, #"{}"#, path: "a", says: "missing (expected null)")
        assertMatches(#"{"a": null}"#, #"{"a": null}"#)
    }

    func testArraysMatchElementWiseWithSameLength() {
        assertMatches(#"[1, "x", {"k": true}]"#, #"[1, "x", {"k": true, "other": 0}]"#)
        assertMismatch(#"[1, 2]"#, #"[1, 2, 3]"#, says: "expected 2 elements, got 3")
        assertMismatch(#"[1, 2]"#, #"[2, 1]"#, path: "[0]", says: "expected 1, got 2")
        assertMismatch(#"{"xs": [{"s": "a"}, {"s": "b"}]}"#, #"{"xs": [{"s": "a"}, {"s": "c"}]}"#,
                       path: "xs[1].s", says: #"xs[1].s: expected "b", got "c""#)
    }

    func testNumbersMatchNumerically() {
        assertMatches("1", "1.0")
        assertMatches("2.5", "2.5")
        assertMatches("-3", "-3")
        assertMismatch("1", "1.5")
        assertMismatch("1", #""1""#)
        assertMismatch("0", "false", says: "expected 0, got false")
        assertMismatch("1", "true")
    }

    func testOtherScalarsMatchByEquality() {
        assertMatches("true", "true")
        assertMatches("null", "null")
        assertMatches(#""x""#, #""x""#)
        assertMismatch("true", "false")
        assertMismatch("null", "false")
        assertMismatch(#""x""#, #""X""#)
        assertMismatch(#""null""#, "null")
        // Exact Unicode scalars: a precomposed é is not e + combining acute (Swift's == says it is).
        assertMismatch(#""\u00e9""#, #""e\u0301""#, says: "expected \"\u{e9}\", got \"e\u{301}\"")
    }

    // MARK: Operators

    func testContains() {
        assertMatches(#"{"$contains": [2, 1]}"#, "[1, 2, 3]")
        assertMatches(#"{"$contains": []}"#, "[]")
        assertMatches(#"{"$contains": [{"id": "b"}]}"#, #"[{"id": "a", "n": 1}, {"id": "b", "n": 2}]"#)
        assertMismatch(#"{"$contains": [1, 4]}"#, "[1, 2, 3]",
                       says: #"outcome: expected {"$contains":[1,4]}, got [1,2,3] (no element matches $contains[1])"#)
        assertMismatch(#"{"$contains": [1]}"#, #"{"a": 1}"#, says: "(not an array)")
        assertMismatch(#"{"$contains": [1]}"#, nil, says: #"missing (expected {"$contains":[1]})"#)
    }

    func testContainsNeedsDifferentElements() {
        // Both expectations match only the one element "a".
        assertMismatch(#"{"$contains": [{"$match": "a"}, "a"]}"#, #"["a", "b"]"#, says: "(no distinct element for each item)")
        assertMatches(#"{"$contains": ["a", "a"]}"#, #"["a", "b", "a"]"#)
    }

    func testContainsSearchesAnAssignment() {
        // Greedy would give the first element to {"$any": true} and leave "x" nothing; a proper
        // assignment gives "x" to "x" and the other to the wildcard.
        assertMatches(#"{"$contains": [{"$any": true}, "x"]}"#, #"["x", "y"]"#)
        assertMatches(#"{"$contains": [{"$match": "^a"}, {"$match": "b$"}]}"#, #"["ab", "a"]"#)
        assertMismatch(#"{"$contains": [{"$match": "^a"}, {"$match": "^a"}, "b"]}"#, #"["ab", "a", "c"]"#)
    }

    func testLen() {
        assertMatches(#"{"$len": 3}"#, "[1, 2, 3]")
        assertMatches(#"{"$len": 2}"#, #"{"a": 1, "b": 2}"#)
        assertMatches(#"{"$len": 0}"#, "[]")
        assertMatches(#"{"$len": 3}"#, #""a→b""#)  // Unicode scalars, not bytes
        assertMatches(#"{"$len": 2}"#, #""e\u0301""#)  // a decomposed é: two scalars, one character
        assertMatches(#"{"$len": 2.0}"#, "[1, 2]")
        assertMismatch(#"{"$len": 2}"#, "[1, 2, 3]", says: #"expected {"$len":2}, got [1,2,3] (length 3)"#)
        assertMismatch(#"{"$len": 1}"#, "7", says: "(not an array, object or string)")
        assertMismatch(#"{"$len": 1}"#, nil, says: "missing")
    }

    func testAny() {
        assertMatches(#"{"a": {"$any": true}}"#, #"{"a": 0}"#)
        assertMatches(#"{"a": {"$any": true}}"#, #"{"a": null}"#)
        assertMismatch(#"{"a": {"$any": true}}"#, #"{"b": 0}"#, path: "a", says: #"a: missing (expected {"$any":true})"#)
    }

    func testAbsent() {
        assertMatches(#"{"a": {"$absent": true}}"#, #"{"b": 1}"#)
        assertMatches(#"{"a": {"$absent": true}}"#, #"{"a": null}"#)
        assertMismatch(#"{"a": {"$absent": true}}"#, #"{"a": 0}"#, path: "a", says: #"a: expected {"$absent":true}, got 0"#)
        // Only true: `false` is a malformed expectation, whatever the value.
        assertMismatch(#"{"a": {"$absent": false}}"#, #"{"a": 0}"#, says: "malformed expectation: a: $absent takes only true, not false")
    }

    func testApprox() {
        assertMatches(#"{"$approx": 10, "$tol": 0.1}"#, "10.9")
        assertMatches(#"{"$approx": 10, "$tol": 0.1}"#, "9")
        assertMismatch(#"{"$approx": 10, "$tol": 0.1}"#, "11.5", says: #"expected {"$approx":10,"$tol":0.1}, got 11.5"#)
        assertMatches(#"{"$approx": 0.3}"#, "0.30000000000000004")
        assertMismatch(#"{"$approx": 0.3}"#, "0.3001")
        assertMatches(#"{"$approx": 0, "$tol": 0.01}"#, "-0.005")
        assertMismatch(#"{"$approx": 0, "$tol": 0.01}"#, "0.02")
        assertMismatch(#"{"$approx": 1}"#, "true", says: "(not a number)")
        assertMismatch(#"{"$approx": 1}"#, #""1""#)
    }

    func testTime() {
        assertMatches(#"{"$time": "2026-01-01T00:00:30.000Z"}"#, #""2026-01-01T00:00:30.000Z""#)
        assertMatches(#"{"$time": "2026-01-01T00:00:30Z"}"#, #""2026-01-01T00:00:30.000Z""#)
        assertMismatch(#"{"$time": "2026-01-01T00:00:30.000Z"}"#, #""2026-01-01T00:00:30.001Z""#)
        assertMatches(#"{"$time": "2026-01-01T00:00:30.000Z", "$tol": 3}"#, #""2026-01-01T00:00:27.000Z""#)
        assertMismatch(#"{"$time": "2026-01-01T00:00:30.000Z", "$tol": 3}"#, #""2026-01-01T00:00:33.500Z""#,
                       says: #"expected {"$time":"2026-01-01T00:00:30.000Z","$tol":3}, got "2026-01-01T00:00:33.500Z""#)
        assertMatches(#"{"$time": "2026-01-01T01:00:00+01:00"}"#, #""2026-01-01T00:00:00.000Z""#)
        assertMatches(#"{"$time": "2026-01-01t00:00:00z"}"#, #""2026-01-01T00:00:00.000Z""#)
        assertMismatch(#"{"$time": "2026-01-01T00:00:00Z"}"#, #""yesterday""#, says: "(not an RFC 3339 timestamp)")
        assertMismatch(#"{"$time": "2026-01-01T00:00:00Z"}"#, #""2026-01-01 00:00:00Z""#, says: "(not an RFC 3339 timestamp)")
    }

    func testTimeCountsWholeNanoseconds() {
        assertMatches(#"{"$time": "2026-01-01T00:00:00.0000000009Z"}"#, #""2026-01-01T00:00:00Z""#)  // 10th digit ignored
        assertMismatch(#"{"$time": "2026-01-01T00:00:00.000000001Z"}"#, #""2026-01-01T00:00:00Z""#)
        assertMatches(#"{"$time": "2026-01-01T00:00:00.000000002Z", "$tol": 1.5e-9}"#, #""2026-01-01T00:00:00Z""#)  // rounds to 2 ns
        assertMatches(#"{"$time": "2026-01-01T00:00:00Z", "$tol": 1e12}"#, #""9999-12-31T23:59:59Z""#)  // 2^63 ns or more: any
        assertMismatch(#"{"$time": "2026-02-29T00:00:00Z"}"#, #""x""#, says: "$time takes an RFC 3339 timestamp")
        assertMatches(#"{"$not": {"$time": "2024-02-29T00:00:00Z"}}"#, #""2026-01-01T00:00:00Z""#)
    }

    func testMatch() {
        assertMatches(#"{"$match": "b+"}"#, #""abbbc""#)  // search, not full match
        assertMatches(#"{"$match": "^cycle detected: A → B → A$"}"#, #""cycle detected: A → B → A""#)
        assertMatches(#"{"$match": "[0-9]{3}"}"#, #""tpl-123""#)
        assertMismatch(#"{"$match": "^b"}"#, #""abc""#, says: #"expected {"$match":"^b"}, got "abc""#)
        assertMismatch(#"{"$match": "1"}"#, "1", says: "(not a string)")
    }

    func testNot() {
        assertMatches(#"{"$not": "ready"}"#, #""blocked""#)
        assertMismatch(#"{"$not": "ready"}"#, #""ready""#, says: #"expected {"$not":"ready"}, got "ready""#)
        assertMatches(#"{"a": {"$not": {"$len": 0}}}"#, #"{"a": [1]}"#)
        // At a missing key: a $not whose inner needs a value succeeds; $not $absent fails.
        assertMatches(#"{"a": {"$not": 1}}"#, #"{}"#)
        assertMismatch(#"{"a": {"$not": {"$absent": true}}}"#, #"{}"#, path: "a", says: "missing")
        assertMatches(#"{"a": {"$not": {"$any": true}}}"#, #"{}"#)
        assertMatches(#"{"a": {"$not": {"$absent": true}}}"#, #"{"a": 2}"#)
    }

    func testOperatorsCombine() {
        assertMatches(#"{"$len": 2, "$contains": ["b"]}"#, #"["a", "b"]"#)
        assertMismatch(#"{"$len": 2, "$contains": ["c"]}"#, #"["a", "b"]"#)
        assertMismatch(#"{"$len": 3, "$contains": ["b"]}"#, #"["a", "b"]"#)
    }

    func testBadExpectationsFail() {
        assertMismatch(#"{"$bogus": 1}"#, "1", says: "malformed expectation: outcome: unknown operator $bogus")
        assertMismatch(#"{"$len": "x", "$bogus": 1}"#, "1", says: "unknown operator $bogus")  // unknown names first
        assertMismatch(#"{"$tol": 1}"#, "1", says: "$tol needs $approx or $time")
        assertMismatch(#"{"$approx": 1, "$tol": -1}"#, "1", says: "$tol takes a non-negative number, not -1")
        assertMismatch(#"{"$match": "("}"#, #""(""#, says: #"$match takes a regular expression of the runners' shared subset, not "(""#)
        assertMismatch(#"{"$match": "a{,2}"}"#, #""a""#, says: "shared subset")  // re reads {0,2}, regcomp refuses it
        assertMismatch(#"{"$len": "two"}"#, "[1, 2]", says: #"$len takes a non-negative integer, not "two""#)
        assertMismatch(#"{"$len": 1.5}"#, "[1, 2]", says: "$len takes a non-negative integer, not 1.5")
        assertMismatch(#"{"$any": 1}"#, "1", says: "$any takes only true, not 1")
        assertMismatch(#"{"$time": "soon"}"#, #""2026-01-01T00:00:00Z""#, says: "$time takes an RFC 3339 timestamp")
        // ... even where a mismatch would count as success, or where nothing would be matched.
        assertMismatch(#"{"$not": {"$bogus": 1}}"#, "1", path: "$not", says: "unknown operator $bogus")
        assertMismatch(#"{"$not": {"a": {"$len": "x"}}}"#, #"{"a": []}"#, path: "$not.a", says: "$len takes a non-negative integer")
        assertMismatch(#"{"$not": {"a": 1, "b": {"$len": "x"}}}"#, "5", path: "$not.b")
        assertMismatch(#"{"k": {"$len": "x"}}"#, "{}", path: "k", says: "malformed expectation: k: $len")
        assertMismatch(#"{"$contains": [1, {"k": {"$x": 1}}]}"#, "[1]", path: "$contains[1].k", says: "unknown operator $x")
    }

    func testMixedDollarKeysAreAPlainObject() {
        // Not every key starts with "$": an ordinary object, "$len" an ordinary key.
        assertMatches(#"{"$len": 1, "a": 2}"#, #"{"$len": 1, "a": 2}"#)
        assertMismatch(#"{"$len": 1, "a": 2}"#, #"{"a": 2}"#, path: "$len")
    }
}
