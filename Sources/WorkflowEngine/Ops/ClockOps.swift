import WorkflowCore

extension Engine {
    static let clockOps: [String: OpHandler] = [
        // clock.now → {now}
        "clock.now": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in ["now": JSON(uow.now)] },

        // clock.advance {seconds} (manual clock) → {now, fired}: fires everything due, in time order.
        "clock.advance": OpHandler(mutates: true, args: ["seconds"]) { (engine, uow, args) throws(EngineError) -> JSON in
            guard case .manual = engine.config.clock else {
                throw .state("clockNotManual", "clock.advance needs a manual clock; this engine runs on the system clock",
                             details: ["mode": "system"])
            }
            let seconds = try args.seconds("seconds", min: 0, max: 100 * 365 * 86_400)
            // Checked before anything fires: a refused advance changes nothing. (adding(seconds:)
            // would stop at the latest time; the clock must not move there silently.)
            try Engine.checkRecordable(advancing: seconds, argument: "seconds", from: uow.now)
            let target = uow.now.adding(seconds: seconds)
            let fired = try engine.fireDue(uow, upTo: target)
            uow.now = target
            uow.setMeta(MetaKey.clockNow, JSON(target))
            return ["now": JSON(target), "fired": JSON(fired)]
        },

        // engine.tick → {now, fired}: fires what is due now (system clock; with a manual clock,
        // what is due at the current manual time).
        "engine.tick": OpHandler(mutates: true, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            let fired = try engine.fireDue(uow, upTo: uow.now)
            return ["now": JSON(uow.now), "fired": JSON(fired)]
        },

        // engine.nextDeadline → {at | null}: when something is next due.
        "engine.nextDeadline": OpHandler(mutates: false, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            try engine.stageDeadlines(uow)  // a batch's earlier calls count
            return ["at": JSON(engine.nextDeadline(uow))]
        },

        // engine.info → versions, clock, config and counts.
        "engine.info": OpHandler(mutates: false, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            var clock: JSONObject = ["now": JSON(uow.now)]
            switch engine.config.clock {
            case .manual: clock["mode"] = "manual"
            case .system: clock["mode"] = "system"
            }
            return [
                "version": .string(EngineVersion.string),
                "versionNumber": JSON(EngineVersion.number),
                "store": .string(engine.config.store),
                "clock": .object(clock),
                "online": .bool(uow.isOnline),
                "ops": JSON(Engine.opNames),
            ]
        },
    ]
}

extension Engine {
    /// The latest time the engine can record: timestamps are written and read back as RFC 3339 with
    /// a four-digit year.
    static let latestRecordableTime = Timestamp.latest

    /// Refuses moving the clock `seconds` past `now` when that passes the latest time the engine
    /// can persist or format (`WF_EINVALID timeOutOfRange`), naming the argument that led to it.
    static func checkRecordable(advancing seconds: Double, argument: String, from now: Timestamp) throws(EngineError) {
        let latest = latestRecordableTime
        let roomMilliseconds = max(0, latest.milliseconds - now.milliseconds)
        // Whole milliseconds on both sides, so the maximum it reports is always accepted.
        guard (seconds * 1000).rounded() > Double(roomMilliseconds) else { return }
        let room = Double(roomMilliseconds) / 1000
        throw .invalid(
            "timeOutOfRange",
            "\(argument) would move the clock past \(latest.rfc3339), the latest time the engine can record; at \(now.rfc3339) it can advance at most \(room) seconds",
            details: ["argument": .string(argument), "now": JSON(now), "latest": JSON(latest), "maxSeconds": .double(room)])
    }
}

/// The library version; `include/workflow.h` carries the same numbers.
public enum EngineVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static var number: Int { major * 10_000 + minor * 100 + patch }
    public static var string: String { "\(major).\(minor).\(patch)" }
}
