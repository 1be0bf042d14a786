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

extension Effect {
    /// What a stored effect lacks to be carried out and settled, or nil: the members of its
    /// type that a host acts on (OPS section 13) and the engine settles it by, with their JSON
    /// types, and the answer key those members make. A store another program damaged can hold
    /// an effect whose body lost them: handed out, no host could act on it, and no event could
    /// settle it. A type this library never emits is a problem too (a newer library's store is
    /// refused before its effects are read).
    public static func storedProblem(type: String, body: JSONObject, answerKey: String?) -> String? {
        func string(_ key: String) -> String? { body[key]?.stringValue }
        let strings: [String]
        var objects: [String] = []
        var expectedKey: String?
        switch type {
        case EffectType.remoteSubmit:
            strings = ["runId", "kind", "idempotencyKey"]
            objects = ["params", "inputs"]
            expectedKey = string("runId").map(AnswerKey.submit)
        case EffectType.localRun:
            strings = ["runId", "kind"]
            objects = ["params", "inputs"]
            expectedKey = string("runId").map(AnswerKey.local)
        case EffectType.remotePoll:
            strings = ["runId", "jobId"]
            expectedKey = string("runId").map(AnswerKey.poll)
        case EffectType.remoteDownload:
            strings = ["runId", "jobId", "port", "url"]
            if let run = string("runId"), let port = string("port") { expectedKey = AnswerKey.download(run, port) }
        case EffectType.remoteCancel:
            strings = ["jobId"]
            expectedKey = string("jobId").map(AnswerKey.cancel)
        case EffectType.notify:
            strings = ["runId", "awaitId", "category", "title", "body", "deepLink", "urgency", "threadId"]
            expectedKey = string("awaitId").map(AnswerKey.notify)
        case EffectType.notifyWithdraw:
            strings = ["runId", "awaitId"]
        case EffectType.cacheEvict:
            strings = ["assetId", "variant", "reason"]
            if let asset = string("assetId"), let variant = string("variant") {
                expectedKey = AnswerKey.evict(asset, variant)
            }
            guard body["bytes"]?.isNumber == true else { return "its bytes is not a number" }
        default:
            return "its type '\(type)' is not one this library emits"
        }
        for key in strings where string(key) == nil { return "its \(key) is not a string" }
        for key in objects where body[key]?.objectValue == nil { return "its \(key) is not an object" }
        if type == EffectType.notify, body["actions"]?.arrayValue == nil { return "its actions is not an array" }
        guard answerKey == expectedKey else {
            return "its answer key \(answerKey.map { "'\($0)'" } ?? "null") is not \(expectedKey.map { "'\($0)'" } ?? "null")"
        }
        return nil
    }
}

/// Answer keys tie an effect to the event that settles it.
public enum AnswerKey {
    public static func submit(_ runId: String) -> String { ShortText.concat("submit:", runId) }
    public static func poll(_ runId: String) -> String { ShortText.concat("poll:", runId) }
    public static func download(_ runId: String, _ port: String) -> String { "download:\(runId):\(port)" }
    public static func local(_ runId: String) -> String { ShortText.concat("local:", runId) }
    public static func notify(_ awaitId: String) -> String { "notify:\(awaitId)" }
    /// A cancel stays on record until the provider reports the job finished (any status).
    public static func cancel(_ jobId: String) -> String { "cancel:\(jobId)" }
    /// A `cache.evict` nothing answers (the host's next take acknowledges it); the key lets a
    /// later `cache.record` of the same file drop an evict still on record, which would delete it.
    public static func evict(_ assetId: String, _ variant: String) -> String { "evict:\(assetId):\(variant)" }

    /// Whether nothing answers an effect with this key: once taken, it is delivered when the host
    /// takes effects again (or handed out again by a reopen before that).
    public static func answeredByTaking(_ key: String?) -> Bool {
        // The bytes compared: `hasPrefix` compares as Unicode text, and every take asks this.
        guard let key else { return true }
        return key.utf8.starts(with: "evict:".utf8)
    }
}
