public enum AwaitStatus: String, Sendable, Equatable, CaseIterable {
    case pending, snoozed, done
}

/// How a done await ended.
public enum AwaitResolution: String, Sendable, Equatable, CaseIterable {
    case completed, cancelled, skipped, expired, autoDefault
    /// The node moved on without it (cancelled, re-run, workflow deleted).
    case withdrawn
}

public struct AwaitClaim: Sendable, Equatable {
    public var claimant: String
    public var claimedAt: Timestamp
    public var leaseExpiresAt: Timestamp

    public init(claimant: String, claimedAt: Timestamp, leaseExpiresAt: Timestamp) {
        self.claimant = claimant
        self.claimedAt = claimedAt
        self.leaseExpiresAt = leaseExpiresAt
    }
}

/// A request for a person's input, filed by an interactive node (DESIGN §4 Awaits). Unique per
/// (workflow, node, run).
public struct AwaitRequest: ChangeTrackedRecord {
    public let awaitId: String
    public let workflowId: String
    public let nodeId: String
    public let runId: String
    public var type: AwaitType
    public var title: String
    public var detail: String?
    public var urgency: Urgency
    public var blocking: Bool
    public var status: AwaitStatus
    public var createdAt: Timestamp
    public var expiresAt: Timestamp?
    public var snoozeUntil: Timestamp?
    public var snoozeCount: Int
    public var claim: AwaitClaim?
    public var deepLink: String
    public var onTimeout: ResumeAction
    public var onCancel: ResumeAction?
    public var skippable: Bool
    public var notificationTitle: String
    public var notificationBody: String
    public var resolution: AwaitResolution?
    public var doneAt: Timestamp?
    /// The input assets the request was filed with (port → asset id): the candidates of a
    /// select-asset request.
    public var inputs: [String: String]
    /// A done await past its retention: gone from the Action Center, kept for history.
    public var cleared: Bool

    public init(awaitId: String, workflowId: String, nodeId: String, runId: String, type: AwaitType, title: String,
                detail: String?, urgency: Urgency, blocking: Bool, createdAt: Timestamp, expiresAt: Timestamp?,
                deepLink: String, onTimeout: ResumeAction, onCancel: ResumeAction?, skippable: Bool,
                notificationTitle: String, notificationBody: String) {
        self.awaitId = awaitId
        self.workflowId = workflowId
        self.nodeId = nodeId
        self.runId = runId
        self.type = type
        self.title = title
        self.detail = detail
        self.urgency = urgency
        self.blocking = blocking
        self.status = .pending
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.snoozeUntil = nil
        self.snoozeCount = 0
        self.claim = nil
        self.deepLink = deepLink
        self.onTimeout = onTimeout
        self.onCancel = onCancel
        self.skippable = skippable
        self.notificationTitle = notificationTitle
        self.notificationBody = notificationBody
        self.resolution = nil
        self.doneAt = nil
        self.cleared = false
        self.inputs = [:]
    }

    public var isOpen: Bool { status != .done }

    /// Its `expiresAt`, once that has come at `now`: its timeout is due (it fires in the tick or
    /// advance that reaches it; until then the await is refused to anyone acting on it).
    public func expiry(reachedAt now: Timestamp) -> Timestamp? {
        guard let expiresAt, expiresAt <= now else { return nil }
        return expiresAt
    }

    /// The actions a notification and an Action Center cell offer: the category's, with one
    /// "Choose …" per candidate there is (A and B at most), and Skip where allowed.
    public var actions: [String] {
        var actions = type.notificationActions
        if type == .selectAsset {
            let letters = ["Choose A", "Choose B"].prefix(min(2, inputs.count))
            actions = Array(letters) + actions.filter { !$0.hasPrefix("Choose ") }
        }
        if skippable { actions.append("Skip") }
        return actions
    }

    /// The actions `await.respond` takes: the await's own (``actions``) and every action of its
    /// category as DESIGN §5 names them. A shell registers a category's actions once (iOS
    /// notification categories are fixed), so a notification may show "Choose B" for a request
    /// with one candidate: pressed, it is answered as that choice would be (`invalidChoice`),
    /// not as an action the category does not have.
    public var respondableActions: [String] {
        type.notificationActions + actions.filter { !type.notificationActions.contains($0) }
    }

    /// The actions a notification or a list offers now: without Snooze once the await was
    /// snoozed `maxSnoozes` times (a Snooze pressed anyway is refused, `snoozeLimitReached`).
    public func offeredActions(maxSnoozes: Int) -> [String] {
        snoozeCount >= maxSnoozes ? actions.filter { $0 != "Snooze" } : actions
    }

    /// Candidates in order ("Choose A" is the first): the input assets sorted by port.
    public var candidates: [(port: String, assetId: String)] {
        inputs.keys.sorted().map { ($0, inputs[$0]!) }
    }
}

extension AwaitRequest {
    /// Whether the await could give its workflow a deadline (``Executor/nextDeadline(_:online:settings:)``):
    /// any not cleared from the inbox (a done one is cleared once its retention ends; an open one
    /// may expire, wake from a snooze or lose its claim). Read in place.
    public static func mayHoldTimer(_ a: UnsafePointer<AwaitRequest>) -> Bool { !a.pointee.cleared }

    /// What a write to an await nearly always changes: its status, its snoozes.
    @inlinable public static func differsCheaply(_ a: UnsafePointer<AwaitRequest>, _ b: UnsafePointer<AwaitRequest>) -> Bool {
        a.pointee.status != b.pointee.status || a.pointee.snoozeCount != b.pointee.snoozeCount
            || a.pointee.snoozeUntil != b.pointee.snoozeUntil
    }
}
