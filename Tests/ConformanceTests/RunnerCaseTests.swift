import Foundation
import WorkflowConformance
import XCTest

/// Replays Tests/Conformance/runner-cases through the Swift host: the `pass/` folder must print
/// the lines of `pass.expected`, and each `fail/NAME.json` the line of `fail/NAME.expected`, as the
/// C and Python runners must (see runner-cases/README.md).
final class RunnerCaseTests: XCTestCase {
    static let casesFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/runner-cases").path

    /// Lines compared byte for byte (Swift's `==` would equate canonically equivalent text). An
    /// expected line ending in `...` only has to start the output line.
    func assertLine(_ got: String, _ expected: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let matches = expected.hasSuffix("...")
            ? got.utf8.starts(with: expected.utf8.dropLast(3))
            : got.utf8.elementsEqual(expected.utf8)
        XCTAssertTrue(matches, "\(what):\n  expected \(expected)\n  got      \(got)", file: file, line: line)
    }

    func run(_ files: [String]) -> [String] {
        var lines: [String] = []
        let tally = ConformanceSuite.run(files: files, host: SwiftHost()) { lines.append($0.line) }
        return lines + [tally.line]
    }

    func testPassCasesPrintPassExpected() throws {
        let files = try ConformanceSuite.fixtureFiles([Self.casesFolder + "/pass"])
        XCTAssertGreaterThanOrEqual(files.count, 8)
        let expected = try String(contentsOfFile: Self.casesFolder + "/pass.expected", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let lines = run(files)
        XCTAssertEqual(lines.count, expected.count, lines.joined(separator: "\n"))
        for (got, want) in zip(lines, expected) { assertLine(got, want, "pass/") }
    }

    func testEachFailCasePrintsItsExpectedLine() throws {
        let folder = Self.casesFolder + "/fail"
        let files = try ConformanceSuite.fixtureFiles([folder])
        XCTAssertGreaterThanOrEqual(files.count, 30)
        let lines = run(files)
        XCTAssertEqual(lines.count, files.count + 1)
        for (path, got) in zip(files, lines) {
            let text = try String(contentsOfFile: String(path.dropLast(".json".count)) + ".expected", encoding: .utf8)
            let want = (text.hasSuffix("\n") ? String(text.dropLast()) : text).replacingOccurrences(of: "@FIXTURE@", with: path)
            assertLine(got, want, (path as NSString).lastPathComponent)
        }
        XCTAssertEqual(lines.last, "0 passed, \(files.count) failed")
    }

    func testEveryExpectedFileHasItsCase() throws {
        let folder = Self.casesFolder + "/fail"
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".expected") {
            let fixture = "\(folder)/\(name.dropLast(".expected".count)).json"
            XCTAssertTrue(FileManager.default.fileExists(atPath: fixture), "\(name) has no \(fixture)")
        }
    }
}
