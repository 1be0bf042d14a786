import Foundation
import WorkflowConformance
import WorkflowCore
import XCTest

/// Replays every fixture in Tests/Conformance/fixtures through the Swift host.
final class FixtureReplayTests: XCTestCase {
    static let fixturesFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/fixtures").path

    func testEveryFixturePassesOnTheSwiftHost() throws {
        let files = try ConformanceSuite.fixtureFiles([Self.fixturesFolder])
        let tally = ConformanceSuite.run(files: files, host: SwiftHost()) { result in
            if !result.passed { XCTFail(result.line) }
        }
        XCTAssertGreaterThanOrEqual(files.count, 150, "fixtures missing from \(Self.fixturesFolder)")
        XCTAssertEqual(tally.passed, files.count)
    }

    /// Each fixture is named after its file and says what it checks.
    func testFixturesFollowTheConventions() throws {
        var names = Set<String>()
        for path in try ConformanceSuite.fixtureFiles([Self.fixturesFolder]) {
            let fixture = try ConformanceSuite.load(path)
            let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            XCTAssertEqual(fixture.name, stem, "\(path): name must match the file name")
            XCTAssertFalse((fixture.description ?? "").isEmpty, "\(path): a description is required")
            XCTAssertTrue(names.insert(fixture.name).inserted, "\(fixture.name) is used twice")
        }
    }
}
