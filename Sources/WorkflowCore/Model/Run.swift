/// Where a run executes.
public enum RunMode: String, Sendable, Equatable, CaseIterable {
    case remote, local
    /// A person answers (an await); no job runs.
    case interactive
}

/// What started a run.
public enum RunTrigger: String, Sendable, Equatable, CaseIterable {
    /// Run, or Re-run with latest: current edges and newest assets.
    case run
    /// Retry (same inputs): the frozen input assets and params of the previous run.
    case retry
    /// Started by itself in a workflow set to run all ready steps.
    case auto
}

/// The lifecycle of one run.
public enum RunStatus: String, Sendable, Equatable, CaseIterable {
    /// Waiting for a slot in its queue.
    case queued
    /// `remote.submit` emitted; no job id yet.
    case submitting
    /// A submit failed transiently; the next attempt is at `nextAttemptAt`.
    case retryWait
    /// The provider accepted the job and has not started it.
    case submitted
    /// The provider (or the local tool) is running it.
    case running
    /// Outputs are being fetched.
    case downloading
    /// An interactive run waiting for a person.
    case awaiting
    case succeeded, failed, cancelled, skipped

    public var isTerminal: Bool {
        switch self {
        case .succeeded, .failed, .cancelled, .skipped: return true
        default: return false
        }
    }

    /// Status that, on a remote run, still has a live job to poll (a local run runs too:
    /// ``Run/hasLiveJob`` asks both).
    public var hasLiveJob: Bool { self == .submitted || self == .running }

    /// Decodes stored and legacy names; an unknown value reads as `failed`, never as success.
    public init(persisted raw: String) {
        if let s = RunStatus(rawValue: raw) {
            self = s
            return
        }
        switch raw {
        case "pending", "waiting": self = .queued
        case "queuedAtProvider", "accepted": self = .submitted
        case "done", "completed", "success": self = .succeeded
        case "canceled", "aborted": self = .cancelled
        default: self = .failed
        }
    }
}

/// One execution of a node: its frozen inputs and params, the job, progress and outputs.
public struct Run: ChangeTrackedRecord {
    public let runId: String
    public let nodeId: String
    // The fields the scheduler, the timers and the summaries read of every run come first, so
    // they share the record's first cache lines (declaration order is memory order).
    public var status: RunStatus
    public let mode: RunMode
    /// Counts against its queue's caps.
    public var holdsSlot: Bool
    public var nextAttemptAt: Timestamp?
    public var nextPollAt: Timestamp?
    public var nextDownloadAt: Timestamp?
    /// When `remote.cancel` goes again for the job of a run that ended (cancelled, or ended
    /// before the provider accepted the job): the last one did not reach the provider.
    public var nextCancelAt: Timestamp?
    /// 1 for the node's first run, 2 for the second, …
    public let number: Int
    public let kind: String
    public let trigger: RunTrigger
    /// Effective params, frozen when the run was created.
    public let params: JSONObject
    /// Input assets by port, frozen when the run was created.
    public let inputs: [String: String]
    /// Sent with every submit of this run; providers use it to drop duplicates.
    public let idempotencyKey: String
    public var jobId: String?
    /// `remote.submit` effects emitted for this run.
    public var submitAttempts: Int
    /// Transient submit failures so far (each one schedules an automatic retry, at most 3).
    public var submitFailures: Int
    /// Regular polls scheduled so far (numbers the jitter draws).
    public var pollCount: Int
    /// Consecutive transport errors while polling ("Reconnecting…").
    public var pollFailures: Int
    public var progress: Double?
    /// When the provider expects the job to end (`job.update`'s `etaSeconds` from the report's
    /// time): a card's "Est. remaining" (seed 002). Only while the job is queued or running.
    public var estimatedEndAt: Timestamp?
    /// Last lines of the job's log, redacted, at most 6.
    public var logTail: [String]
    public var outputs: [String: String]
    /// Outputs still to fetch: port → url.
    public var pendingDownloads: [String: String]
    public var downloadFailures: Int
    /// Consecutive transport errors sending `remote.cancel` for the run's job.
    public var cancelFailures: Int
    public let createdAt: Timestamp
    public var startedAt: Timestamp?
    public var finishedAt: Timestamp?
    public var error: NodeError?
    /// The store's text of the fields above that never change after the run is made (its mode,
    /// number, kind, trigger, params, inputs, idempotency key and creation time: `let`s), shared
    /// by every copy of the run. Not part of its value.
    package let textCache: RecordTextCache

    /// A remote run whose provider job is live (accepted or running): what polls are for.
    public var hasLiveJob: Bool { mode == .remote && status.hasLiveJob }

    public init(runId: String, nodeId: String, number: Int, mode: RunMode, kind: String, trigger: RunTrigger,
                status: RunStatus, params: JSONObject, inputs: [String: String], idempotencyKey: String,
                createdAt: Timestamp) {
        self.runId = runId
        self.nodeId = nodeId
        self.number = number
        self.mode = mode
        self.kind = kind
        self.trigger = trigger
        self.status = status
        self.params = params
        self.inputs = inputs
        self.idempotencyKey = idempotencyKey
        self.jobId = nil
        self.submitAttempts = 0
        self.submitFailures = 0
        self.nextAttemptAt = nil
        self.nextPollAt = nil
        self.pollCount = 0
        self.pollFailures = 0
        self.progress = nil
        self.estimatedEndAt = nil
        self.logTail = []
        self.outputs = [:]
        self.pendingDownloads = [:]
        self.downloadFailures = 0
        self.nextDownloadAt = nil
        self.cancelFailures = 0
        self.nextCancelAt = nil
        self.holdsSlot = false
        self.createdAt = createdAt
        self.startedAt = nil
        self.finishedAt = nil
        self.error = nil
        self.textCache = RecordTextCache()
    }

    /// Ends the run: the terminal `status` and `error` at `time`. A finished run holds no slot and
    /// has no timers left (poll, submit retry, download retry).
    public mutating func finish(_ status: RunStatus, at time: Timestamp, error: NodeError? = nil) {
        precondition(status.isTerminal, "finish(\(status)): not a terminal status")
        self.status = status
        self.finishedAt = time
        self.error = error
        self.holdsSlot = false
        self.nextPollAt = nil
        self.nextAttemptAt = nil
        self.nextDownloadAt = nil
        self.estimatedEndAt = nil
    }

    /// The state its node is in while this run is under way, as the rules move them together
    /// (DESIGN 5): a local run waits for its slot in `ready` and runs in `runningLocal`; a remote
    /// one is `queuedRemote` until the provider starts it, then `runningRemote`, then
    /// `downloading`; an interactive one waits for its person in `awaitingUser`. Nil for a
    /// finished run, and for a status its mode never takes (a local run is never submitted): a
    /// store edited into one of those is damaged.
    public var nodeStateUnderWay: NodeState? {
        switch (mode, status) {
        case (.local, .queued): return .ready
        case (.local, .running): return .runningLocal
        case (.remote, .queued), (.remote, .submitting), (.remote, .retryWait), (.remote, .submitted): return .queuedRemote
        case (.remote, .running): return .runningRemote
        case (.remote, .downloading): return .downloading
        case (.interactive, .awaiting): return .awaitingUser
        default: return nil
        }
    }

    /// Transport errors while polling put the card in "Reconnecting…".
    public var reconnecting: Bool { pollFailures > 0 || downloadFailures > 0 }

    public var durationSeconds: Double? {
        guard let s = startedAt, let f = finishedAt else { return nil }
        return s.seconds(until: f)
    }
}

extension Run {
    /// What a write to a run nearly always changes: its status, its slot, its times, its polls
    /// and progress.
    @inlinable public static func differsCheaply(_ a: UnsafePointer<Run>, _ b: UnsafePointer<Run>) -> Bool {
        a.pointee.status != b.pointee.status || a.pointee.holdsSlot != b.pointee.holdsSlot
            || a.pointee.startedAt != b.pointee.startedAt || a.pointee.finishedAt != b.pointee.finishedAt
            || a.pointee.nextPollAt != b.pointee.nextPollAt || a.pointee.pollCount != b.pointee.pollCount
            || a.pointee.progress != b.pointee.progress
    }

    /// Whether the run could give its workflow a deadline (``Executor/nextDeadline(_:online:settings:)``):
    /// a submit retry, a download, a poll or a cancel waiting for its time. Read in place.
    public static func mayHoldTimer(_ r: UnsafePointer<Run>) -> Bool {
        r.pointee.nextPollAt != nil || r.pointee.nextAttemptAt != nil || r.pointee.nextDownloadAt != nil
            || r.pointee.nextCancelAt != nil
    }
}

/// Text a store made of a record's fields that never change, kept with the record (and every
/// copy of it) so that each later write of the record reuses it: a run is written three times or
/// more (queued, started, finished; each report of a remote job), its number, kind, params,
/// inputs, key and creation time the same every time. It is not part of the record's value: any
/// two caches compare equal. Copies of one run share it, and a run is `Sendable`: two stores on
/// two threads may write copies of it at once, so `bytes` is read and written only under the
/// store's lock for it (`RecordCoding.textCacheLock`, WorkflowStore), never anywhere else.
package final class RecordTextCache: @unchecked Sendable, Equatable {
    package var bytes: [UInt8]?

    package init() {}

    package static func == (a: RecordTextCache, b: RecordTextCache) -> Bool { true }
}
