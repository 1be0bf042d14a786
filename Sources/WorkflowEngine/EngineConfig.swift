import Logging
import WorkflowCore
import WorkflowStore

/// The configuration `wf_engine_open` takes (DESIGN §4). Every key is optional; unknown keys are
/// refused so a typo never silently falls back to a default.
public struct EngineConfig: Sendable {
    public enum ClockMode: Sendable, Equatable {
        /// Time moves only with `clock.advance`; starts at `start`, or where the store left off.
        case manual(start: Timestamp)
        /// The machine's clock; due work fires on `engine.tick`.
        case system
    }

    public var store: String = ":memory:"
    public var clock: ClockMode = .system
    public var seed: UInt64 = 0
    public var remoteConcurrency: Int = 8
    public var localConcurrency: Int = 2
    public var pollIntervalSeconds: Double = 10
    public var deepLinkScheme: String = "app"
    public var durability: Durability = .normal
    /// A file store writes its journal's rows into their tables on a thread of its own (the
    /// default), or on the calling thread (``JournalFolding``).
    public var journalFolding: JournalFolding = .background
    public var thumbnailBytes: Int64 = 209_715_200
    public var previewDays: Double = 7
    /// Unreferenced assets are collected this long after they were orphaned.
    public var assetRetentionDays: Double = 7
    /// Done awaits stay in the Action Center this long.
    public var awaitRetentionDays: Double = 7
    /// Quiet by default: an embedded library speaks when its host asks it to.
    public var logLevel: Logger.Level = .error
    /// How many done workflows (nothing in the Action Center, nothing due) stay loaded once read;
    /// beyond that the least recently used leave memory and are read from the store again when
    /// needed. Workflows with work going on always stay.
    public var doneWorkflowsInMemory: Int = 256
    /// How many telemetry events wait for `metrics.take` at most; beyond that the oldest go, so a
    /// host that never takes them does not grow its store for good.
    public var maxQueuedMetrics: Int = 100_000

    public init() {}

    public static let defaultStart = Timestamp(rfc3339: "2026-01-01T00:00:00.000Z")!

    static let knownKeys: Set<String> = ["store", "clock", "seed", "concurrency", "pollIntervalSeconds",
                                         "deepLinkScheme", "durability", "backgroundWrites", "cache", "assets", "awaits",
                                         "logLevel", "memory", "metrics"]

    /// Parses the config object; every problem is `WF_EINVALID` naming the key.
    public static func parse(_ json: JSON?) throws(EngineError) -> EngineConfig {
        var c = EngineConfig()
        guard let json, !json.isNull else { return c }
        guard case let .object(o) = json else {
            throw .invalid("invalidConfig", "config must be a JSON object, not \(json.typeName)",
                           details: ["argument": "config"])
        }
        for key in o.keys where !knownKeys.contains(key) {
            throw .invalid("unknownConfigKey", "config has an unknown key '\(key)'",
                           details: ["argument": .string("config.\(key)"), "known": JSON(knownKeys.sorted())])
        }
        func bad(_ key: String, _ expectation: String) -> EngineError {
            .invalid("invalidConfig", "config.\(key) must be \(expectation)", details: ["argument": .string("config.\(key)")])
        }
        if let v = o["store"] {
            // A NUL would cut the path short where the file system reads it: another file, silently.
            guard case let .string(s) = v, !s.isEmpty, !s.utf8.contains(0) else {
                throw bad("store", "\":memory:\" or a file path without NUL characters")
            }
            c.store = s
        }
        if let v = o["clock"] {
            guard case let .object(clock) = v, let mode = clock["mode"]?.stringValue else {
                throw bad("clock", "{\"mode\": \"manual\", \"start\": time} or {\"mode\": \"system\"}")
            }
            // As in every nested object, a key the mode does not take is refused: a misspelt
            // "start" would otherwise leave the clock at the default start, silently.
            switch mode {
            case "system":
                if let extra = clock.keys.sorted().first(where: { $0 != "mode" }) {
                    throw bad("clock.\(extra)", "absent: a system clock takes only mode")
                }
                c.clock = .system
            case "manual":
                if let extra = clock.keys.sorted().first(where: { $0 != "mode" && $0 != "start" }) {
                    throw bad("clock.\(extra)", "absent: only mode and start are known")
                }
                var start = defaultStart
                if let s = clock["start"] {
                    guard let text = s.stringValue, let t = Timestamp(rfc3339: text) else {
                        throw bad("clock.start", "an RFC 3339 time such as 2026-01-01T00:00:00.000Z")
                    }
                    guard t.isRecordable else {
                        throw bad("clock.start", "a time from \(Timestamp.earliest.rfc3339) to \(Timestamp.latest.rfc3339) (UTC)")
                    }
                    start = t
                }
                c.clock = .manual(start: start)
            default:
                throw bad("clock.mode", "\"manual\" or \"system\"")
            }
        }
        if let v = o["seed"] {
            guard let i = v.intValue else { throw bad("seed", "an integer") }
            c.seed = UInt64(bitPattern: i)
        }
        if let v = o["concurrency"] {
            guard case let .object(cc) = v else { throw bad("concurrency", "{\"remote\": n, \"local\": n}") }
            for key in cc.keys where key != "remote" && key != "local" {
                throw bad("concurrency.\(key)", "absent: only remote and local are known")
            }
            if let r = cc["remote"] {
                guard let i = r.intValue, i >= 1, i <= 10_000_000 else { throw bad("concurrency.remote", "a positive integer") }
                c.remoteConcurrency = Int(i)
            }
            if let l = cc["local"] {
                guard let i = l.intValue, i >= 1, i <= 10_000_000 else { throw bad("concurrency.local", "a positive integer") }
                c.localConcurrency = Int(i)
            }
        }
        if let v = o["pollIntervalSeconds"] {
            guard let d = v.doubleValue, d >= 0.1, d <= 86_400 else {
                throw bad("pollIntervalSeconds", "a number of seconds between 0.1 and 86400")
            }
            c.pollIntervalSeconds = d
        }
        if let v = o["deepLinkScheme"] {
            guard let s = v.stringValue, isValidScheme(s) else {
                throw bad("deepLinkScheme", "a URL scheme (a letter, then letters, digits, '+', '-' or '.')")
            }
            c.deepLinkScheme = s.lowercased()
        }
        if let v = o["durability"] {
            guard let s = v.stringValue, let d = Durability(rawValue: s) else { throw bad("durability", "\"normal\" or \"full\"") }
            c.durability = d
        }
        if let v = o["backgroundWrites"] {
            guard case let .bool(b) = v else { throw bad("backgroundWrites", "true or false") }
            c.journalFolding = b ? .background : .whenFull
        }
        if let v = o["cache"] {
            guard case let .object(cache) = v else { throw bad("cache", "an object") }
            for key in cache.keys where key != "thumbnailBytes" && key != "previewDays" {
                throw bad("cache.\(key)", "absent: only thumbnailBytes and previewDays are known")
            }
            if let t = cache["thumbnailBytes"] {
                guard let i = t.intValue, i >= 0 else { throw bad("cache.thumbnailBytes", "a non-negative integer") }
                c.thumbnailBytes = i
            }
            if let p = cache["previewDays"] {
                guard let d = p.doubleValue, d >= 0 else { throw bad("cache.previewDays", "a non-negative number") }
                c.previewDays = d
            }
        }
        /// `config.key` as an object whose one known member is `member`: that member, if given.
        func onlyMember(_ key: String, _ member: String) throws(EngineError) -> JSON? {
            guard let v = o[key] else { return nil }
            guard case let .object(m) = v else { throw bad(key, "an object") }
            for k in m.keys where k != member { throw bad("\(key).\(k)", "absent: only \(member) is known") }
            return m[member]
        }
        func days(_ v: JSON, _ path: String) throws(EngineError) -> Double {
            guard let d = v.doubleValue, d >= 0 else { throw bad(path, "a non-negative number") }
            return d
        }
        func count(_ v: JSON, _ path: String) throws(EngineError) -> Int {
            guard let i = v.intValue, i >= 0, i <= 10_000_000 else { throw bad(path, "an integer from 0 to 10000000") }
            return Int(i)
        }
        if let r = try onlyMember("assets", "retentionDays") { c.assetRetentionDays = try days(r, "assets.retentionDays") }
        if let r = try onlyMember("awaits", "doneRetentionDays") {
            c.awaitRetentionDays = try days(r, "awaits.doneRetentionDays")
        }
        if let d = try onlyMember("memory", "doneWorkflows") { c.doneWorkflowsInMemory = try count(d, "memory.doneWorkflows") }
        if let q = try onlyMember("metrics", "maxQueued") { c.maxQueuedMetrics = try count(q, "metrics.maxQueued") }
        if let v = o["logLevel"] {
            guard let s = v.stringValue, let level = Logger.Level(rawValue: s) else {
                throw bad("logLevel", "one of trace, debug, info, notice, warning, error, critical")
            }
            c.logLevel = level
        }
        return c
    }

    static func isValidScheme(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII, s.count <= 32 else {
            return false
        }
        return s.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == ".")
        }
    }
}
