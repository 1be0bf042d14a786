import WorkflowCore

/// A registered template as stored: its canonical text is the source of truth.
public struct StoredTemplate: Sendable, Equatable {
    public var templateId: String
    public var seq: Int64
    public var name: String
    public var createdAt: Timestamp
    /// Canonical v2 text (``TemplateEncoder/canonicalText(_:)``).
    public var canonicalText: String
    /// The schema the template was written in (v1 input is upgraded on import).
    public var sourceSchema: String

    public init(templateId: String, seq: Int64, name: String, createdAt: Timestamp, canonicalText: String,
                sourceSchema: String) {
        self.templateId = templateId
        self.seq = seq
        self.name = name
        self.createdAt = createdAt
        self.canonicalText = canonicalText
        self.sourceSchema = sourceSchema
    }
}

public struct StoredTool: Sendable, Equatable {
    public var spec: ToolSpec
    public var registeredAt: Timestamp
    public init(spec: ToolSpec, registeredAt: Timestamp) {
        self.spec = spec
        self.registeredAt = registeredAt
    }
}

/// What the engine keeps about every workflow without loading it: enough for the list, the
/// timers and the scheduler.
///
/// Its fields live in one shared object, copied on the first write to a copy (as ``Asset``'s and
/// `Workflow`'s): a call copies a summary a score of times between making it and keeping it
/// (staged, compared with the committed one, handed to the store, kept), and each copy of the
/// plain struct retained its four strings.
public struct WorkflowSummary: Sendable, Equatable {
    @usableFromInline
    final class Storage: @unchecked Sendable {  // written only while uniquely referenced
        @usableFromInline @exclusivity(unchecked) var workflowId: String
        @usableFromInline @exclusivity(unchecked) var seq: Int64
        @usableFromInline @exclusivity(unchecked) var templateId: String
        @usableFromInline @exclusivity(unchecked) var title: String
        @usableFromInline @exclusivity(unchecked) var status: WorkflowStatus
        @usableFromInline @exclusivity(unchecked) var archived: Bool
        @usableFromInline @exclusivity(unchecked) var createdAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var updatedAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var stepsDone: Int
        @usableFromInline @exclusivity(unchecked) var stepsTotal: Int
        @usableFromInline @exclusivity(unchecked) var awaitCount: Int
        @usableFromInline @exclusivity(unchecked) var hasBlockingAwait: Bool
        @usableFromInline @exclusivity(unchecked) var searchText: String
        @usableFromInline @exclusivity(unchecked) var nextDeadline: Timestamp?
        @usableFromInline @exclusivity(unchecked) var queuedRemote: Int
        @usableFromInline @exclusivity(unchecked) var queuedLocal: Int
        @usableFromInline @exclusivity(unchecked) var runningRemote: Int
        @usableFromInline @exclusivity(unchecked) var runningLocal: Int
        @usableFromInline @exclusivity(unchecked) var inboxCount: Int

        @inlinable init(workflowId: String, seq: Int64, templateId: String, title: String, status: WorkflowStatus, archived: Bool, createdAt: Timestamp, updatedAt: Timestamp, stepsDone: Int, stepsTotal: Int, awaitCount: Int, hasBlockingAwait: Bool, searchText: String, nextDeadline: Timestamp?, queuedRemote: Int, queuedLocal: Int, runningRemote: Int, runningLocal: Int, inboxCount: Int) {
            self.workflowId = workflowId
            self.seq = seq
            self.templateId = templateId
            self.title = title
            self.status = status
            self.archived = archived
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.stepsDone = stepsDone
            self.stepsTotal = stepsTotal
            self.awaitCount = awaitCount
            self.hasBlockingAwait = hasBlockingAwait
            self.searchText = searchText
            self.nextDeadline = nextDeadline
            self.queuedRemote = queuedRemote
            self.queuedLocal = queuedLocal
            self.runningRemote = runningRemote
            self.runningLocal = runningLocal
            self.inboxCount = inboxCount
        }

        @inlinable func copy() -> Storage {
            Storage(workflowId: workflowId, seq: seq, templateId: templateId, title: title, status: status, archived: archived, createdAt: createdAt, updatedAt: updatedAt, stepsDone: stepsDone, stepsTotal: stepsTotal, awaitCount: awaitCount, hasBlockingAwait: hasBlockingAwait, searchText: searchText, nextDeadline: nextDeadline, queuedRemote: queuedRemote, queuedLocal: queuedLocal, runningRemote: runningRemote, runningLocal: runningLocal, inboxCount: inboxCount)
        }
    }

    @usableFromInline var storage: Storage

    /// Makes ``storage`` this value's own before a write.
    @inlinable mutating func unique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    @inlinable public var workflowId: String {
        _read { yield storage.workflowId }
        _modify { unique(); yield &storage.workflowId }
    }

    @inlinable public var seq: Int64 {
        _read { yield storage.seq }
        _modify { unique(); yield &storage.seq }
    }

    @inlinable public var templateId: String {
        _read { yield storage.templateId }
        _modify { unique(); yield &storage.templateId }
    }

    @inlinable public var title: String {
        _read { yield storage.title }
        _modify { unique(); yield &storage.title }
    }

    @inlinable public var status: WorkflowStatus {
        _read { yield storage.status }
        _modify { unique(); yield &storage.status }
    }

    @inlinable public var archived: Bool {
        _read { yield storage.archived }
        _modify { unique(); yield &storage.archived }
    }

    @inlinable public var createdAt: Timestamp {
        _read { yield storage.createdAt }
        _modify { unique(); yield &storage.createdAt }
    }

    @inlinable public var updatedAt: Timestamp {
        _read { yield storage.updatedAt }
        _modify { unique(); yield &storage.updatedAt }
    }

    @inlinable public var stepsDone: Int {
        _read { yield storage.stepsDone }
        _modify { unique(); yield &storage.stepsDone }
    }

    @inlinable public var stepsTotal: Int {
        _read { yield storage.stepsTotal }
        _modify { unique(); yield &storage.stepsTotal }
    }

    @inlinable public var awaitCount: Int {
        _read { yield storage.awaitCount }
        _modify { unique(); yield &storage.awaitCount }
    }

    @inlinable public var hasBlockingAwait: Bool {
        _read { yield storage.hasBlockingAwait }
        _modify { unique(); yield &storage.hasBlockingAwait }
    }

    /// The lower-cased title, for search (node titles and ids are the template's).
    @inlinable public var searchText: String {
        _read { yield storage.searchText }
        _modify { unique(); yield &storage.searchText }
    }

    /// The earliest timer of the workflow (a poll, a retry, an await expiry, …).
    @inlinable public var nextDeadline: Timestamp? {
        _read { yield storage.nextDeadline }
        _modify { unique(); yield &storage.nextDeadline }
    }

    /// Runs waiting for a slot, by queue.
    @inlinable public var queuedRemote: Int {
        _read { yield storage.queuedRemote }
        _modify { unique(); yield &storage.queuedRemote }
    }

    @inlinable public var queuedLocal: Int {
        _read { yield storage.queuedLocal }
        _modify { unique(); yield &storage.queuedLocal }
    }

    /// Runs holding a slot, by queue.
    @inlinable public var runningRemote: Int {
        _read { yield storage.runningRemote }
        _modify { unique(); yield &storage.runningRemote }
    }

    @inlinable public var runningLocal: Int {
        _read { yield storage.runningLocal }
        _modify { unique(); yield &storage.runningLocal }
    }

    /// Awaits in the Action Center: open, or done and not yet cleared.
    @inlinable public var inboxCount: Int {
        _read { yield storage.inboxCount }
        _modify { unique(); yield &storage.inboxCount }
    }

    public init(workflowId: String, seq: Int64, templateId: String, title: String, status: WorkflowStatus, archived: Bool, createdAt: Timestamp, updatedAt: Timestamp, stepsDone: Int, stepsTotal: Int, awaitCount: Int, hasBlockingAwait: Bool, searchText: String, nextDeadline: Timestamp?, queuedRemote: Int, queuedLocal: Int, runningRemote: Int, runningLocal: Int, inboxCount: Int) {
        storage = Storage(workflowId: workflowId, seq: seq, templateId: templateId, title: title, status: status, archived: archived, createdAt: createdAt, updatedAt: updatedAt, stepsDone: stepsDone, stepsTotal: stepsTotal, awaitCount: awaitCount, hasBlockingAwait: hasBlockingAwait, searchText: searchText, nextDeadline: nextDeadline, queuedRemote: queuedRemote, queuedLocal: queuedLocal, runningRemote: runningRemote, runningLocal: runningLocal, inboxCount: inboxCount)
    }

    public static func == (a: WorkflowSummary, b: WorkflowSummary) -> Bool {
        if a.storage === b.storage { return true }
        let (x, y) = (a.storage, b.storage)
        // The fields a call changes most (its counts, times, status) first: two summaries of one
        // workflow usually differ there.
        return x.updatedAt == y.updatedAt && x.stepsDone == y.stepsDone && x.queuedLocal == y.queuedLocal
            && x.runningLocal == y.runningLocal && x.queuedRemote == y.queuedRemote && x.runningRemote == y.runningRemote
            && x.nextDeadline == y.nextDeadline && x.status == y.status && x.awaitCount == y.awaitCount
            && x.hasBlockingAwait == y.hasBlockingAwait && x.inboxCount == y.inboxCount && x.archived == y.archived
            && x.stepsTotal == y.stepsTotal && x.seq == y.seq && x.createdAt == y.createdAt
            && x.workflowId == y.workflowId && x.templateId == y.templateId && x.title == y.title
            && x.searchText == y.searchText
    }
}

/// A telemetry event waiting for `metrics.take`.
public struct MetricEvent: Sendable, Equatable {
    public var seq: Int64
    public var body: JSONObject
    public init(seq: Int64, body: JSONObject) {
        self.seq = seq
        self.body = body
    }
}

/// Everything the engine reads when it opens: small tables whole, and for the large ones only
/// what the scheduler, the timers and the lists need. Workflows and assets load on demand.
public struct StoreSnapshot: Sendable {
    public var meta: [String: JSON] = [:]
    public var templates: [StoredTemplate] = []
    public var tools: [StoredTool] = []
    public var providerDefaults: [String: JSONObject] = [:]
    public var workflows: [WorkflowSummary] = []
    /// The outbox: untaken effects and taken ones still waiting for their answer, in order.
    public var effects: [Effect] = []
    public var cacheEntries: [CacheEntry] = []
    /// Runs not yet finished: (runId, workflowId, jobId).
    public var activeRuns: [(runId: String, workflowId: String, jobId: String?)] = []
    /// Awaits not yet done: (awaitId, workflowId).
    public var openAwaits: [(awaitId: String, workflowId: String)] = []
    /// The highest number in use under each id counter the engine numbers from: `wf`, `tpl`,
    /// `run`, `aw` and `as` from the ids (`run-12` is 12) and the sequence columns, `effect` and
    /// `metric` from theirs, `cacheUse` from the cache's use order. Numbers above 2^53
    /// (``highestIdCounted``) are left out. A counter lower than this would hand out an id in
    /// use (or, for `cacheUse`, make the newest use look the oldest).
    public var highestIds: [String: Int64] = [:]
    /// The largest id number ``highestIds`` counts: the engine's counters never go past it.
    public static let highestIdCounted: Int64 = 1 << 53
    public init() {}
}

/// One call's worth of changes, written in one transaction.
public struct ChangeSet: Sendable {
    public var meta: [String: JSON] = [:]
    public var templates: [StoredTemplate] = []
    public var tools: [StoredTool] = []
    public var providerDefaults: [String: JSONObject?] = [:]
    /// Each changed workflow (``WorkflowWrite``); the store writes only the rows that differ.
    public var workflows: [WorkflowWrite] = []
    /// New or changed assets; nil deletes.
    public var assets: [String: Asset?] = [:]
    public var effectInserts: [Effect] = []
    public var effectsTaken: [Int64] = []
    public var effectDeletes: [Int64] = []
    /// Cache entries to write; nil deletes.
    public var cacheEntries: [String: CacheEntry?] = [:]
    public var metricInserts: [MetricEvent] = []
    public var metricDeletesThrough: Int64?

    public init() {}

    public var isEmpty: Bool {
        meta.isEmpty && templates.isEmpty && tools.isEmpty && providerDefaults.isEmpty && workflows.isEmpty
            && assets.isEmpty && effectInserts.isEmpty && effectsTaken.isEmpty && effectDeletes.isEmpty
            && cacheEntries.isEmpty && metricInserts.isEmpty && metricDeletesThrough == nil
    }

    /// Only rows written whole (meta, assets, workflows with their nodes, runs and awaits,
    /// effects): nothing deleted, no template, tool, provider default, cache entry or metric.
    public var isOnlyRows: Bool {
        templates.isEmpty && tools.isEmpty && providerDefaults.isEmpty && cacheEntries.isEmpty && metricInserts.isEmpty
            && metricDeletesThrough == nil && !assets.values.contains { $0 == nil }
            && !workflows.contains { $0.new == nil }
    }

    public static func cacheKey(_ assetId: String, _ variant: String) -> String { "\(variant):\(assetId)" }
}

/// One workflow's part of a change set: its committed version (nil when new) and its new version
/// (nil when deleted). The workflow's own row is written with `summary`; a nil summary leaves it
/// as it is (nothing in it changed). `changes` is what differs between the two versions when the
/// caller already knows it (``Workflow/changes(since:)``); the store works it out otherwise.
///
/// A class, so that the store's passes over a change set (planning the journal's entry, encoding
/// it, writing rows) hand each workflow's part along by reference instead of copying two
/// workflows and a summary every time.
public final class WorkflowWrite: Sendable {
    public let old: Workflow?
    public let new: Workflow?
    public let summary: WorkflowSummary?
    public let changes: WorkflowChanges?

    public init(_ old: Workflow?, _ new: Workflow?, _ summary: WorkflowSummary?, changes: WorkflowChanges? = nil) {
        self.old = old
        self.new = new
        self.summary = summary
        self.changes = changes
    }
}

/// The engine's persistence, behind a narrow protocol: SQLite through GRDB today; a PostgreSQL
/// store for server hosts can implement the same without touching the core.
///
/// Implementations contain no policy: they store what they are given, atomically.
public protocol EngineStore: AnyObject {
    /// Reads what the engine needs at open (see ``StoreSnapshot``).
    func loadSnapshot() throws -> StoreSnapshot
    /// The full workflow, or nil.
    func loadWorkflow(_ workflowId: String) throws -> Workflow?
    func loadAsset(_ assetId: String) throws -> Asset?
    /// The workflow that owns a run, for events naming runs the engine has not loaded.
    func workflowId(forRun runId: String) throws -> String?
    /// The run that owns a job id.
    func run(forJob jobId: String) throws -> (runId: String, workflowId: String)?
    /// Assets created before `cutoff`, not pinned, and referenced by no run, node or binding.
    func unreferencedAssets(createdBefore cutoff: Timestamp) throws -> [String]
    /// Ids of the committed workflows that refer to an asset: a run's inputs or outputs, a node's
    /// binding, output or input selection. Sorted, each once.
    func workflowIds(referencingAsset assetId: String) throws -> [String]
    /// Metric events in order after number `after`, up to `limit`.
    func metrics(after: Int64, limit: Int) throws -> [MetricEvent]
    /// Writes every change in one transaction: all of it, or (on a throw) none of it.
    func commit(_ changes: ChangeSet) throws
    /// Closes the store, every commit on disk first. Further calls fail. Returns the failure
    /// when the disk refused the final writes (``SQLiteStore/close()``), nil otherwise.
    @discardableResult
    func close() -> StoreError?
}
