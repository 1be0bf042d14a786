import Foundation
import WorkflowConformance
import WorkflowCore
import XCTest

/// Replays every fixture in Tests/Conformance/fixtures through the Swift host.
final class FixtureReplayTests: XCTestCase {
    static let fixturesFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/fixtures").path

    func testEveryFixturePassesOnTheSwiftHost() {
        let tally = ConformanceSuite.run([Self.fixturesFolder], host: SwiftHost()) { result in
            if !result.passed { XCTFail(result.line) }
        }
        XCTAssertGreaterThanOrEqual(tally.passed + tally.failed, 18, "fixtures missing from \(Self.fixturesFolder)")
    }

    /// Each fixture is named after its file and says what it checks.
    func testFixturesFollowTheConventions() throws {
        var names = Set<String>()
        for entry in ConformanceSuite.fixtureFiles([Self.fixturesFolder]) {
            guard case let .file(path) = entry else { return XCTFail("\(entry)") }
            let fixture = try ConformanceSuite.load(path)
            XCTAssertEqual(fixture.name, ConformanceSuite.fallbackName(path), "\(path): name must match the file name")
            XCTAssertFalse((fixture.description ?? "").isEmpty, "\(path): a description is required")
            XCTAssertTrue(names.insert(fixture.name).inserted, "\(fixture.name) is used twice")
        }
    }
}
