import Foundation
import WorkflowCore

/// Finds fixture files, runs them through a host, and tallies the report.
public enum ConformanceSuite {
    /// The fixture files named by `paths`: files as given, folders as every `*.json` under them
    /// (recursively), sorted by path. A path that does not exist is reported, not skipped.
    public static func fixtureFiles(_ paths: [String]) -> [Entry] {
        var out: [Entry] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                out.append(.missing(path))
                continue
            }
            guard isDirectory.boolValue else {
                out.append(.file(path))
                continue
            }
            let base = path.hasSuffix("/") ? String(path.dropLast()) : path
            let found = (fm.enumerator(atPath: path)?.compactMap { $0 as? String } ?? [])
                .filter { $0.hasSuffix(".json") }
                .map { "\(base)/\($0)" }
                .filter { p in var d: ObjCBool = false; return fm.fileExists(atPath: p, isDirectory: &d) && !d.boolValue }
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            out.append(contentsOf: found.map { .file($0) })
        }
        return out
    }

    /// A fixture file to run, or a path that named nothing.
    public enum Entry: Sendable, Equatable {
        case file(String)
        case missing(String)
    }

    /// Reads and parses one fixture file.
    public static func load(_ path: String) throws(FixtureError) -> Fixture {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureError("\(path): cannot be read")
        }
        let json: JSON
        do {
            json = try JSONParser.parse(bytes: [UInt8](data))
        } catch {
            throw FixtureError("\(path): not JSON: \(error)")
        }
        do {
            return try Fixture(json: json)
        } catch {
            throw FixtureError("\(path): \(error.message)")
        }
    }

    /// The name a fixture is reported under when it cannot be read: its file name without `.json`.
    public static func fallbackName(_ path: String) -> String {
        let file = (path as NSString).lastPathComponent
        return file.hasSuffix(".json") ? String(file.dropLast(5)) : file
    }

    /// Runs every fixture under `paths`, calling `report` with each line as it is decided.
    public static func run<Host: ConformanceHost>(_ paths: [String], host: Host,
                                                  report: (FixtureResult) -> Void) -> Tally {
        let runner = FixtureRunner(host: host)
        var tally = Tally()
        for entry in fixtureFiles(paths) {
            let result: FixtureResult
            switch entry {
            case let .missing(path):
                result = .fail(path, .fixture, "no such file or folder")
            case let .file(path):
                do {
                    result = runner.run(try load(path))
                } catch {
                    result = .fail(fallbackName(path), .fixture, error.message)
                }
            }
            tally.add(result)
            report(result)
        }
        return tally
    }

    /// Passes and failures, and the closing line.
    public struct Tally: Sendable, Equatable {
        public var passed = 0
        public var failed = 0
        public var results: [FixtureResult] = []

        public init() {}

        mutating func add(_ r: FixtureResult) {
            if r.passed { passed += 1 } else { failed += 1 }
            results.append(r)
        }

        /// `N passed, N failed`.
        public var line: String { "\(passed) passed, \(failed) failed" }
    }
}
