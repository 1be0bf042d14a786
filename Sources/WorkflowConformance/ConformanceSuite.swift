import Foundation
import WorkflowCore

/// Finds fixture files, runs them through a host, and tallies the report.
public enum ConformanceSuite {
    /// A PATH that names nothing: the command line's usage error (exit 2, nothing run).
    public struct UsageError: Error, Sendable, Equatable {
        public var message: String
        public init(message: String) { self.message = message }
    }

    /// The fixture files named by `paths`, sorted by the UTF-8 bytes of their names: files as given,
    /// folders as every `*.json` file below them (recursively, following links), named
    /// `folder/relative/path`. Throws for a path that does not exist.
    public static func fixtureFiles(_ paths: [String]) throws(UsageError) -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw UsageError(message: "no such file or folder: \(path)")
            }
            if isDirectory.boolValue {
                collect(folder: path, into: &out)
            } else {
                out.append(path)
            }
        }
        return out.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func collect(folder: String, into out: inout [String]) {
        let fm = FileManager.default
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] {
            let child = base + name
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: child, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                collect(folder: child, into: &out)
            } else if name.utf8.count > 5, name.hasSuffix(".json") {
                out.append(child)
            }
        }
    }

    /// Reads and checks one fixture file. The error says why (`not JSON: ...`, `unexpected key
    /// 'x'`), with the fixture's name when the document has a valid one. A string holding U+0000
    /// or an integer outside 64 bits is not JSON here, as for the C runner's parser.
    public static func load(_ path: String) throws(FixtureError) -> Fixture {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureError("cannot read the file")
        }
        let json: JSON
        do {
            json = try JSONParser.parse(bytes: [UInt8](data))
        } catch {
            throw FixtureError("not JSON: \(error)")
        }
        // What Jansson (the C runner's parser) refuses is not JSON here either.
        if holdsNUL(json) { throw FixtureError("not JSON: \\u0000 in a string") }
        if hasHugeInteger([UInt8](data)) { throw FixtureError("not JSON: an integer does not fit in 64 bits") }
        do {
            return try Fixture(json: json)
        } catch {
            throw FixtureError(error.message, name: Fixture.name(of: json))
        }
    }

    /// Whether a string or key anywhere in `value` holds U+0000.
    static func holdsNUL(_ value: JSON) -> Bool {
        switch value {
        case let .string(s): return s.utf8.contains(0)
        case let .array(items): return items.contains(where: holdsNUL)
        case let .object(members): return members.contains { $0.key.utf8.contains(0) || holdsNUL($0.value) }
        default: return false
        }
    }

    /// Whether JSON text (already parsed) has an integer literal outside 64 bits, which
    /// `JSONParser` would read as a real.
    static func hasHugeInteger(_ bytes: [UInt8]) -> Bool {
        var i = 0
        var inString = false
        while i < bytes.count {
            let b = bytes[i]
            if inString {
                if b == UInt8(ascii: "\\") { i += 1 } else if b == UInt8(ascii: "\"") { inString = false }
                i += 1
                continue
            }
            guard b == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) else {
                inString = b == UInt8(ascii: "\"")
                i += 1
                continue
            }
            let start = i
            while i < bytes.count, "0123456789+-.eE".utf8.contains(bytes[i]) { i += 1 }
            let token = bytes[start..<i]
            if !token.contains(where: { ".eE".utf8.contains($0) }), Int64(String(decoding: token, as: UTF8.self)) == nil {
                return true
            }
        }
        return false
    }

    /// Runs every fixture under `paths`, calling `report` with each line as it is decided.
    /// Throws, having run nothing, when a path does not exist.
    public static func run<Host: ConformanceHost>(_ paths: [String], host: Host,
                                                  report: (FixtureResult) -> Void) throws(UsageError) -> Tally {
        run(files: try fixtureFiles(paths), host: host, report: report)
    }

    /// Runs the given fixture files in the given order.
    public static func run<Host: ConformanceHost>(files: [String], host: Host,
                                                  report: (FixtureResult) -> Void) -> Tally {
        let runner = FixtureRunner(host: host)
        var tally = Tally()
        for path in files {
            let result: FixtureResult
            do {
                result = runner.run(try load(path))
            } catch {
                result = .fail(error.name ?? path, .fixture, error.message)
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
