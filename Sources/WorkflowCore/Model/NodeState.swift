/// The state of a node in a workflow (DESIGN §5). Only the transitions in
/// ``NodeStateMachine/transitions`` are legal.
public enum NodeState: String, Sendable, Equatable, CaseIterable {
    case blocked, ready, awaitingUser, queuedRemote, runningRemote, runningLocal, downloading
    case succeeded, failed, cancelled, skipped

    /// Work is under way for the node: a job, a local run, a download, or a person's answer.
    public var isInFlight: Bool {
        switch self {
        case .awaitingUser, .queuedRemote, .runningRemote, .runningLocal, .downloading: return true
        default: return false
        }
    }

    public var isRunning: Bool {
        switch self {
        case .queuedRemote, .runningRemote, .runningLocal, .downloading: return true
        default: return false
        }
    }

    public var isTerminal: Bool {
        switch self {
        case .succeeded, .failed, .cancelled, .skipped: return true
        default: return false
        }
    }

    /// The state's position in `allCases`, for tables indexed by state.
    public var position: Int {
        switch self {
        case .blocked: return 0
        case .ready: return 1
        case .awaitingUser: return 2
        case .queuedRemote: return 3
        case .runningRemote: return 4
        case .runningLocal: return 5
        case .downloading: return 6
        case .succeeded: return 7
        case .failed: return 8
        case .cancelled: return 9
        case .skipped: return 10
        }
    }

    /// Decodes a stored or legacy value. Older stores and fixtures used other names; they map to
    /// today's states, and an unknown future value decodes as `blocked` rather than failing the
    /// whole load (the node is re-gated on the next change).
    public init(persisted raw: JSON) {
        switch raw {
        case let .string(s):
            if let state = NodeState(rawValue: s) {
                self = state
                return
            }
            switch s {
            case "queued", "queuedLocal", "submitted", "pending": self = .queuedRemote
            case "running": self = .runningRemote
            case "awaiting", "awaitingInput", "waitingForUser": self = .awaitingUser
            case "done", "complete", "completed", "success": self = .succeeded
            case "error", "errored", "interrupted": self = .failed
            case "canceled", "aborted": self = .cancelled
            case "enabled", "idle": self = .ready
            case "disabled", "waiting": self = .blocked
            default: self = .blocked
            }
        case let .object(o):
            // The step-1 Codable shim of the implementation plan wrote `{"failed": "reason"}`.
            if o["failed"] != nil { self = .failed } else if let k = o.keys.first { self = NodeState(persisted: .string(k)) } else { self = .blocked }
        default:
            self = .blocked
        }
    }
}

/// The node state machine as data: from each state, the states it may move to.
public enum NodeStateMachine {
    public static let transitions: [NodeState: Set<NodeState>] = [
        // blocked → succeeded/failed: an input that changed is set back (Use for next step,
        // Select Input), so the node's last result is current again.
        .blocked: [.blocked, .ready, .cancelled, .failed, .succeeded],
        .ready: [.blocked, .awaitingUser, .queuedRemote, .runningLocal, .cancelled, .failed],
        .awaitingUser: [.ready, .succeeded, .failed, .cancelled, .skipped, .blocked],
        .queuedRemote: [.runningRemote, .downloading, .succeeded, .failed, .cancelled, .blocked, .queuedRemote],
        // runningRemote → queuedRemote: the provider put the job back in its queue.
        .runningRemote: [.queuedRemote, .downloading, .succeeded, .failed, .cancelled],
        .runningLocal: [.succeeded, .failed, .cancelled],
        .downloading: [.succeeded, .failed, .cancelled],
        .succeeded: [.ready, .blocked],
        // failed → succeeded: Use for next step makes an earlier run's result current again.
        .failed: [.ready, .blocked, .succeeded],
        .cancelled: [.ready, .blocked],
        .skipped: [.ready, .blocked],
    ]

    /// ``transitions`` as a bit per target state, by the source state's position in
    /// `allCases`: checking a move reads an array instead of hashing two states (a completion
    /// checks several).
    private static let allowed: [UInt32] = NodeState.allCases.map { from in
        (transitions[from] ?? []).reduce(UInt32(1) << from.position) { $0 | UInt32(1) << $1.position }
    }

    public static func canTransition(from: NodeState, to: NodeState) -> Bool {
        allowed[from.position] & UInt32(1) << to.position != 0
    }
}
