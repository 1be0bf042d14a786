import Foundation
import Logging
import WorkflowCore
import WorkflowStore

/// The engine: core rules + store + clock, behind one entry point, ``call(_:_:)``: an op name
/// and a JSON object in, a JSON object (or a structured error) out.
///
/// Calls are serialised: an engine may be called from any thread. A call that changes state
/// commits it in one store transaction before it returns; a call that fails changes nothing.
public final class Engine: @unchecked Sendable {
    public let config: EngineConfig
    let store: EngineStore
    let state = EngineState()
    let logger: Logger
    let settings: RuleSettings
    let scheduler = Scheduler()
    private let lock = NSLock()
    private var closed = false

    /// Opens an engine from a configuration object (DESIGN §4); see ``EngineConfig``.
    public convenience init(configJSON: JSON?, logHandler: (@Sendable (String) -> LogHandler)? = nil) throws(EngineError) {
        try self.init(config: EngineConfig.parse(configJSON), logHandler: logHandler)
    }

    /// Opens an engine. `logHandler` receives the engine's log lines (default: standard error at
    /// the configured level).
    public init(config: EngineConfig, logHandler: (@Sendable (String) -> LogHandler)? = nil) throws(EngineError) {
        self.config = config
        var logger = logHandler.map { Logger(label: "workflow.engine", factory: $0) }
            ?? Logger(label: "workflow.engine", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = config.logLevel
        self.logger = logger
        var settings = RuleSettings()
        settings.pollIntervalSeconds = config.pollIntervalSeconds
        settings.seed = config.seed
        settings.deepLinkScheme = config.deepLinkScheme
        settings.doneAwaitRetentionSeconds = config.awaitRetentionDays * 86_400
        self.settings = settings
        do {
            self.store = try SQLiteStore(path: config.store, durability: config.durability, folding: config.journalFolding)
        } catch let e as StoreError {
            throw EngineError(.store, e.code, e.message, details: ["store": .string(config.store)])
        } catch {
            throw EngineError(.store, "storeOpenFailed", "cannot open the store: \(error)",
                              details: ["store": .string(config.store)])
        }
        try rehydrate()
    }

    /// The files an engine keeps for a file store at `path`: the store, SQLite's write-ahead log
    /// and shared-memory index beside it, and the store's journal (`<path>-wfjournal`), named
    /// after the file `path` names once its symbolic links are followed (as SQLite names its log).
    /// Copy them together, with no engine open on them, to copy a store; remove them together to
    /// remove it.
    public static func storeFiles(_ path: String) -> [String] { SQLiteStore.files(ofStore: path) }

    /// Runs `body` with every write of the store held (its folder's too), so that the files on
    /// disk stay as a process killed at that moment would leave them: for benchmarks and tests
    /// that copy them.
    package func withStoreWritesHeld<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let sqlite = store as? SQLiteStore else { return try body() }
        return try sqlite.withWritesHeld(body)
    }

    /// Runs `body` (which may call the engine) with the store's folder starting no fold, so that
    /// its journal fills up to its limits: for benchmarks and tests of a kill with the journal as
    /// full as it can be (``SQLiteStore/withFoldsHeld(_:)``).
    package func withStoreFoldsHeld<T>(_ body: () throws -> T) rethrows -> T {
        guard let sqlite = store as? SQLiteStore else { return try body() }
        return try sqlite.withFoldsHeld(body)
    }

    /// Rows, entries and bytes waiting in the store's journal, for benchmarks and tests.
    package var storeBacklog: (rows: Int, entries: Int, bytes: Int) {
        (store as? SQLiteStore)?.backlogCounts ?? (0, 0, 0)
    }

    /// Closes the store. Every change was committed by the call that made it; closing writes
    /// what the store's journal still holds into its tables and puts every commit on disk.
    ///
    /// Returns `.failure` (`WF_ESTORE`, `storeWriteFailed`, or `storeCorrupt` for a file SQLite
    /// found damaged; `details.store` and `details.durability`) when the disk refused those final
    /// writes; the engine is closed all the same. With durability `full` nothing is at risk
    /// (every call's change was on disk when the call returned); with `normal` the last calls'
    /// changes may not be: a crash loses none of them (the next open replays the journal), a
    /// power cut before the system writes them may. Closing an engine closed already succeeds.
    @discardableResult
    public func close() -> Result<Void, EngineError> {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return .success(()) }
        closed = true
        guard let failure = store.close() else { return .success(()) }
        return .failure(EngineError(.store, failure.code, failure.message,
                                    details: ["store": .string(config.store),
                                              "durability": .string(config.durability.rawValue)]))
    }

    deinit { store.close() }

    /// The time the engine runs at now: the manual clock, or the machine's.
    func currentTime() -> Timestamp {
        switch config.clock {
        case .manual(let start): return state.manualNow ?? start
        case .system: return Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        }
    }

    /// Calls an op. See docs/OPS.md for every op, its arguments and its result.
    public func call(_ op: String, _ args: JSONObject = [:]) -> Result<JSON, EngineError> {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return .failure(.state("engineClosed", "the engine is closed")) }
        guard let handler = Engine.ops[op] else {
            return .failure(EngineError(.unsupported, "unknownOp", "unknown op '\(op)'", details: ["op": .string(op)]))
        }
        let uow = makeUnitOfWork()
        // Between calls, quiet workflows beyond the configured number leave memory.
        defer { state.dropQuietWorkflows(keeping: config.doneWorkflowsInMemory) }
        do throws(EngineError) {
            try handler.checkArguments(op, args)
            let result = try handler.run(self, uow, Args(args))
            if handler.mutates {
                try finish(uow)
            } else {
                uow.rollback()
            }
            return .success(result)
        } catch {
            uow.rollback()
            scheduler.rolledBack()
            return .failure(error)
        }
    }

    func makeUnitOfWork() -> UnitOfWork {
        UnitOfWork(state: state, store: store, config: config, settings: settings, now: currentTime())
    }

    /// Convenience for Swift hosts and tests: throws instead of returning a result.
    @discardableResult
    public func callOrThrow(_ op: String, _ args: JSONObject = [:]) throws(EngineError) -> JSON {
        try call(op, args).get()
    }

    /// Settles a mutating call (schedules what can start, refreshes summaries and timers) and commits it.
    func finish(_ uow: UnitOfWork) throws(EngineError) {
        try settle(uow)
        guard uow.hasChanges else {
            uow.rollback()
            scheduler.rolledBack()
            return
        }
        try uow.commit(logger: logger)
        scheduler.committed(uow)
    }
}

/// An op handler and whether it may change state.
struct OpHandler: Sendable {
    let mutates: Bool
    /// The argument names the op takes; any other is refused (`unknownArgument`), so a typo never
    /// passes silently. A handful each: looked through, which costs less than hashing the key.
    let args: [String]
    /// Takes `x-` members too (the tool catalogue keeps them, as templates do).
    let extensions: Bool
    /// Reports a string argument holding U+0000 in its own error (`tool.register`'s
    /// `invalidTool`, with every problem), so ``checkArguments(_:_:)`` leaves it to the op.
    let checksOwnTexts: Bool
    /// Arguments that are a report's free text (a log tail, an error message given as a string),
    /// kept inside a record's JSON rather than in a text column: they may hold U+0000, as the
    /// same text given as an array or inside an object may, so a final report is never refused
    /// for what the provider's log happens to contain.
    let freeTexts: [String]
    let run: @Sendable (Engine, UnitOfWork, Args) throws(EngineError) -> JSON

    init(mutates: Bool, args: [String], extensions: Bool = false, checksOwnTexts: Bool = false, freeTexts: [String] = [],
         _ run: @escaping @Sendable (Engine, UnitOfWork, Args) throws(EngineError) -> JSON) {
        self.mutates = mutates
        self.args = Array(Set(args)).sorted()
        self.extensions = extensions
        self.checksOwnTexts = checksOwnTexts
        self.freeTexts = freeTexts
        self.run = run
    }

    /// Refuses an argument the op does not take, then a string argument holding U+0000 whatever
    /// the op reads it for (docs/OPS.md §1, Types: texts inside objects and arrays may, and a
    /// report's ``freeTexts``).
    func checkArguments(_ op: String, _ given: JSONObject) throws(EngineError) {
        for member in given.members where !args.contains(member.key) && !(extensions && member.key.hasPrefix("x-")) {
            throw .invalid("unknownArgument", "\(op) has no argument '\(member.key)'",
                           details: ["argument": .string(member.key), "known": JSON(args.sorted())])
        }
        guard !checksOwnTexts else { return }
        for member in given.members {
            if case let .string(s) = member.value, s.utf8.contains(0), !freeTexts.contains(member.key) {
                throw Args.containsNUL(member.key)
            }
        }
    }
}
