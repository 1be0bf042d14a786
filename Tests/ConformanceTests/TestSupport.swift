import WorkflowConformance
import WorkflowCore
import XCTest

/// JSON from text, for readable test data.
func j(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSON {
    do {
        return try JSONParser.parse(text)
    } catch {
        XCTFail("bad test JSON \(text): \(error)", file: file, line: line)
        return .null
    }
}

/// Asserts that `actual` matches `expected`.
func assertMatches(_ expected: String, _ actual: String?, file: StaticString = #filePath, line: UInt = #line) {
    let m = Matcher.match(j(expected, file: file, line: line), actual.map { j($0, file: file, line: line) })
    XCTAssertNil(m, "\(expected) should match \(actual ?? "nothing"): \(m.map(\.description) ?? "")", file: file, line: line)
}

/// Asserts that `actual` does not match `expected`, and (when given) the report says `says`.
func assertMismatch(_ expected: String, _ actual: String?, path: String? = nil, says: String? = nil,
                    file: StaticString = #filePath, line: UInt = #line) {
    let m = Matcher.match(j(expected, file: file, line: line), actual.map { j($0, file: file, line: line) })
    guard let m else {
        XCTFail("\(expected) should not match \(actual ?? "nothing")", file: file, line: line)
        return
    }
    if let path { XCTAssertEqual(m.path, path, file: file, line: line) }
    if let says {
        XCTAssertTrue(m.description.contains(says), "\(m.description) should say \(says)", file: file, line: line)
    }
}
