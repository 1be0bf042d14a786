import WorkflowConformance
import WorkflowCore
import XCTest

/// `${name}` substitution and `save` paths.
final class SubstitutionTests: XCTestCase {
    let vars = Variables(["tpl": "tpl-1", "n": 3, "obj": ["a": 1], "flag": true, "none": .null])

    func testExactReferenceKeepsTheType() throws {
        XCTAssertEqual(try vars.substitute(.string("${n}")), .int(3))
        XCTAssertEqual(try vars.substitute(.string("${obj}")), ["a": 1])
        XCTAssertEqual(try vars.substitute(.string("${flag}")), .bool(true))
        XCTAssertEqual(try vars.substitute(.string("${none}")), .null)
        XCTAssertEqual(try vars.substitute(.string("${tpl}")), .string("tpl-1"))
    }

    func testReferenceInsideAStringIsSplicedAsText() throws {
        XCTAssertEqual(try vars.substitute(.string("id=${tpl}")), .string("id=tpl-1"))
        XCTAssertEqual(try vars.substitute(.string("${n} steps")), .string("3 steps"))
        XCTAssertEqual(try vars.substitute(.string("o=${obj};b=${flag};z=${none}")), .string(#"o={"a":1};b=true;z=null"#))
        XCTAssertEqual(try vars.substitute(.string("${tpl}${tpl}")), .string("tpl-1tpl-1"))
        XCTAssertEqual(try vars.substitute(.string("^${tpl}$")), .string("^tpl-1$"))
    }

    func testSubstitutesRecursivelyInValuesNotKeys() throws {
        let input = j(#"{"${tpl}": ["${n}", {"k": "x-${tpl}"}], "plain": 1}"#)
        let expected = j(#"{"${tpl}": [3, {"k": "x-tpl-1"}], "plain": 1}"#)
        XCTAssertEqual(try vars.substitute(input), expected)
    }

    func testTextWithoutReferencesIsUnchanged() throws {
        XCTAssertEqual(try vars.substitute(.string("$tpl {n} ${ $")), .string("$tpl {n} ${ $"))
        XCTAssertEqual(try vars.substitute(.string("${}")), .string("${}"))
        XCTAssertEqual(try vars.substitute(.string("${}${tpl}/${tpl")), .string("${}tpl-1/${tpl"))
    }

    func testSplicedRealsReadLikePythonsRepr() throws {
        let reals = Variables(["a": 1e-05, "b": 1e16, "c": 9.1e15, "d": 100.0, "e": -0.0, "f": 0.1, "g": 1234567890123456.0])
        XCTAssertEqual(try reals.substitute(.string("${a} ${b} ${c} ${d} ${e} ${f} ${g}")),
                       .string("1e-05 1e+16 9100000000000000.0 100.0 -0.0 0.1 1234567890123456.0"))
    }

    func testANameRunsToTheNextBrace() {
        XCTAssertThrowsError(try vars.substitute(.string("${a${tpl}"))) { error in
            XCTAssertEqual((error as? Variables.UnknownName)?.name, "a${tpl")
        }
    }

    func testUnknownNameIsAnError() {
        XCTAssertThrowsError(try vars.substitute(.string("${missing}"))) { error in
            XCTAssertEqual(error as? Variables.UnknownName, Variables.UnknownName(name: "missing"))
        }
        XCTAssertThrowsError(try vars.substitute(j(#"{"a": ["ok ${tpl}", "x${nope}"]}"#))) { error in
            XCTAssertEqual((error as? Variables.UnknownName)?.name, "nope")
        }
    }

    // MARK: Save paths

    let outcome = j(#"{"ok": true, "result": {"effects": [{"runId": "run-1"}, {"runId": "run-2", "ids": [[5, 6]]}], "n": null}}"#)

    func testPathsLookUpMembersAndIndices() throws {
        XCTAssertEqual(try ValuePath(parsing: "result.effects[0].runId").lookup(in: outcome), .string("run-1"))
        XCTAssertEqual(try ValuePath(parsing: "result.effects[1].ids[0][1]").lookup(in: outcome), .int(6))
        XCTAssertEqual(try ValuePath(parsing: "ok").lookup(in: outcome), .bool(true))
        XCTAssertEqual(try ValuePath(parsing: "result.n").lookup(in: outcome), .null)
        XCTAssertEqual(try ValuePath(parsing: "result.effects").lookup(in: outcome)?.arrayValue?.count, 2)
    }

    func testPathsToNothingFindNothing() throws {
        XCTAssertNil(try ValuePath(parsing: "result.effects[2].runId").lookup(in: outcome))
        XCTAssertNil(try ValuePath(parsing: "result.missing").lookup(in: outcome))
        XCTAssertNil(try ValuePath(parsing: "ok.deeper").lookup(in: outcome))
        XCTAssertNil(try ValuePath(parsing: "result[0]").lookup(in: outcome))
    }

    func testMalformedPathsAreRefused() {
        for bad in ["", "a..b", ".a", "a.", "a[", "a[x]", "a[1", "[0]", "a]b", "a[-1]"] {
            XCTAssertThrowsError(try ValuePath(parsing: bad), "'\(bad)' should be refused")
        }
    }
}
