/// Something the host (or the runtime) must do: submit a job, poll it, run a local tool, show a
/// notification, evict a cache file. Effects wait in a persisted outbox until taken.
///
/// Delivery is at-least-once: an effect whose work is answered by an event (a submit by
/// `job.submitted`, a poll by `job.update`) stays on record after it is taken, and is delivered
/// again with the same `id` when the engine is reopened before the answer arrived.
///
/// `local.run` is the one effect kept in memory only (`isDurable` is false): a local run still
/// running when the engine reopens is interrupted (DESIGN §5), and its effect settled, so a
/// stored copy would never be delivered again. Its run, with status `running`, is the record.
public struct Effect: Sendable, Equatable {
    /// Outbox order.
    public var seq: Int64
    public var id: String
    public var type: String
    /// The effect as hosts see it, including `id` and `type`.
    public var body: JSONObject
    /// Names the event that answers it (`submit:run-3`); nil when taking it is enough.
    public var answerKey: String?
    public var taken: Bool
    /// Whether the store keeps this effect: every type but `local.run`, and any effect read
    /// from a store (one written by an older version), so that settling it deletes its row.
    public var isDurable: Bool

    public init(seq: Int64, id: String, type: String, body: JSONObject, answerKey: String?, taken: Bool = false,
                isDurable: Bool? = nil) {
        self.seq = seq
        self.id = id
        self.type = type
        self.body = body
        self.answerKey = answerKey
        self.taken = taken
        self.isDurable = isDurable ?? (type != EffectType.localRun)
    }

    public var workflowId: String? { body["workflowId"]?.stringValue }

    /// Whether carrying it out needs the network (`remote.*`): `effects.take` holds these while
    /// the engine is offline.
    public var needsNetwork: Bool { type.hasPrefix("remote.") }
}

/// Effect type names (DESIGN §4).
public enum EffectType {
    public static let remoteSubmit = "remote.submit"
    public static let remotePoll = "remote.poll"
    public static let remoteCancel = "remote.cancel"
    public static let remoteDownload = "remote.download"
    public static let localRun = "local.run"
    public static let notify = "notify"
    public static let notifyWithdraw = "notify.withdraw"
    public static let cacheEvict = "cache.evict"
}

/// Answer keys tie an effect to the event that settles it.
public enum AnswerKey {
    public static func submit(_ runId: String) -> String { "submit:\(runId)" }
    public static func poll(_ runId: String) -> String { "poll:\(runId)" }
    public static func download(_ runId: String, _ port: String) -> String { "download:\(runId):\(port)" }
    public static func local(_ runId: String) -> String { "local:\(runId)" }
    public static func notify(_ awaitId: String) -> String { "notify:\(awaitId)" }
    /// A cancel stays on record until the provider reports the job finished (any status).
    public static func cancel(_ jobId: String) -> String { "cancel:\(jobId)" }
    /// A `cache.evict` nothing answers (the host's next take acknowledges it); the key lets a
    /// later `cache.record` of the same file drop an evict still on record, which would delete it.
    public static func evict(_ assetId: String, _ variant: String) -> String { "evict:\(assetId):\(variant)" }

    /// Whether nothing answers an effect with this key: once taken, it is delivered when the host
    /// takes effects again (or handed out again by a reopen before that).
    public static func answeredByTaking(_ key: String?) -> Bool { key.map { $0.hasPrefix("evict:") } ?? true }
}
