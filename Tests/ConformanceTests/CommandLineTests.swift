import Foundation
import XCTest

/// The `wf-conformance` executable itself: its exit status and its arguments, as the runner
/// cases' README settles them for the three runners ("Files and the command line"). The other
/// tests call `ConformanceSuite` in process, so only these see `Sources/wf-conformance/main.swift`.
final class CommandLineTests: XCTestCase {
    /// The executable, built beside the test bundle (`swift build --build-tests` builds it).
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("wf-conformance")
    }

    static let cases = RunnerCaseTests.casesFolder

    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    func run(_ arguments: [String], in folder: String? = nil) throws -> Outcome {
        let executable = Self.executable
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            XCTFail("no wf-conformance beside the tests at \(executable.path): build it with swift build --build-tests")
            throw CocoaError(.fileNoSuchFile)
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: stderr, as: UTF8.self))
    }

    func testExitsZeroWhenEveryFixturePassesAndOneWhenOneFails() throws {
        let passed = try run([Self.cases + "/pass/contains.json"])
        XCTAssertEqual(passed.status, 0)
        XCTAssertEqual(passed.stdout, "PASS runner-contains\n1 passed, 0 failed\n")
        let failed = try run([Self.cases + "/pass/contains.json", Self.cases + "/fail/bool-mismatch.json"])
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stdout.hasSuffix("1 passed, 1 failed\n"), failed.stdout)
    }

    func testNoPathAMissingPathOrAnUnknownOptionIsAUsageErrorThatRunsNothing() throws {
        for arguments in [[], ["--"], [Self.cases + "/pass/contains.json", "/no/such/fixture.json"],
                          ["-x.json"], ["--verbose", Self.cases + "/pass/contains.json"]] {
            let outcome = try run(arguments)
            XCTAssertEqual(outcome.status, 2, "\(arguments)")
            XCTAssertEqual(outcome.stdout, "", "\(arguments): nothing runs")
            XCTAssertTrue(outcome.stderr.contains("usage: wf-conformance"), "\(arguments): \(outcome.stderr)")
        }
    }

    func testHelpPrintsTheUsageAndExitsZero() throws {
        for option in ["-h", "--help"] {
            let outcome = try run([option])
            XCTAssertEqual(outcome.status, 0)
            XCTAssertTrue(outcome.stdout.hasPrefix("usage: wf-conformance"), outcome.stdout)
        }
    }

    /// After "--" every argument is a PATH, even one that starts with "-".
    func testDoubleDashEndsTheOptionsSoAPathMayStartWithADash() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("wf-conformance-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(atPath: Self.cases + "/pass/contains.json",
                                         toPath: folder.appendingPathComponent("-x.json").path)
        let outcome = try run(["--", "-x.json"], in: folder.path)
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        XCTAssertEqual(outcome.stdout, "PASS runner-contains\n1 passed, 0 failed\n")
        XCTAssertEqual(try run(["-x.json"], in: folder.path).status, 2, "without --, an option")
    }
}
