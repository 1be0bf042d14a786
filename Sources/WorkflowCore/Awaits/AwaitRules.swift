/// A person's answer to an await (`await.complete`).
public enum AwaitAnswer: Sendable, Equatable {
    case asset(AssetDraft)
    case choice(String)
    case params(JSONObject)
    case cancel

    /// Decodes `{asset}`, `{choice}`, `{params}` or `{cancel: true}`.
    public static func decode(_ json: JSON) throws(EngineError) -> AwaitAnswer {
        guard case let .object(o) = json, o.count == 1, let key = o.keys.first, let value = o.values.first else {
            throw .invalid("invalidResult", "result must be exactly one of {asset}, {choice}, {params} or {cancel: true}",
                           details: ["argument": "result"])
        }
        switch key {
        case "asset": return .asset(try AssetDraft.decode(value, path: "result.asset"))
        case "choice":
            guard case let .string(s) = value, !s.isEmpty else {
                throw .invalid("invalidResult", "result.choice must be a non-empty string", details: ["argument": "result.choice"])
            }
            return .choice(s)
        case "params":
            guard case let .object(p) = value else {
                throw .invalid("resultTypeMismatch", "result.params must be an object of parameter values",
                               details: ["argument": "result.params"])
            }
            return .params(p)
        case "cancel":
            guard value == .bool(true) else {
                throw .invalid("invalidResult", "result.cancel must be true", details: ["argument": "result.cancel"])
            }
            return .cancel
        default:
            throw .invalid("invalidResult", "result has an unknown kind '\(key)'; use asset, choice, params or cancel",
                           details: ["argument": .string("result.\(key)")])
        }
    }

    var kindName: String {
        switch self {
        case .asset: return "asset"
        case .choice: return "choice"
        case .params: return "params"
        case .cancel: return "cancel"
        }
    }
}

extension AwaitType {
    /// The answers each kind of await takes (cancel is always accepted).
    public var acceptedAnswers: [String] {
        switch self {
        case .drawMask, .enterText: return ["asset"]
        case .selectAsset: return ["asset", "choice"]
        case .confirmParams: return ["params"]
        }
    }
}

extension Executor {
    // MARK: Filing

    /// Files the await of interactive node `n` for run `runId` (unique per workflow, node, run)
    /// and asks the host to notify the person. No UI is ever opened.
    func fileAwait(_ wf: inout Workflow, _ n: Int, runId: String) throws(EngineError) {
        let t = graph.nodes[n]
        guard let spec = t.awaitSpec else { return }
        guard !wf.awaits.contains(where: { $0.nodeId == t.id && $0.runId == runId }) else {
            throw .internal("an await for (\(wf.workflowId), \(t.id), \(runId)) already exists")
        }
        let awaitId = ctx.newId("aw")
        let title = spec.title ?? spec.notificationTitle ?? spec.type.defaultTitle
        let body = spec.notificationBody ?? "'\(t.displayTitle)' in '\(wf.title)' needs your input."
        let link = DeepLink(workflowId: wf.workflowId, nodeId: t.id, awaitId: awaitId)
            .url(scheme: ctx.settings.deepLinkScheme)
        var a = AwaitRequest(
            awaitId: awaitId, workflowId: wf.workflowId, nodeId: t.id, runId: runId, type: spec.type, title: title,
            detail: spec.detail, urgency: spec.urgency, blocking: spec.blocking, createdAt: ctx.now,
            expiresAt: spec.expiresInMilliseconds.map { ctx.now.adding(milliseconds: $0) }, deepLink: link,
            onTimeout: spec.onTimeout, onCancel: spec.onCancel, skippable: spec.skippable,
            notificationTitle: spec.notificationTitle ?? title, notificationBody: body)
        a.inputs = wf.run(runId)?.inputs ?? [:]
        if spec.type == .selectAsset {
            // Candidates are the inputs whose type an output port takes: one of another type
            // could only be refused (resultTypeMismatch), and must not stand in the way of the
            // single best candidate.
            let outputTypes = Set(t.outputs.map(\.type))
            let inputTypes = Dictionary(t.inputs.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
            a.inputs = a.inputs.filter { port, _ in inputTypes[port].map(outputTypes.contains) ?? false }
        }
        wf.awaits.append(a)
        emitNotify(wf, awaitIndex: wf.awaits.count - 1)
        ctx.metric("await.filed", ["workflowId": .string(wf.workflowId), "nodeId": .string(t.id),
                                   "awaitId": .string(awaitId)])
        ctx.note("await filed", ["workflowId": wf.workflowId, "nodeId": t.id, "awaitId": awaitId])
    }

    /// The `notify` effect for await `i`: category, actions, title, body and deep link.
    func emitNotify(_ wf: Workflow, awaitIndex i: Int) {
        let a = wf.awaits[i]
        ctx.settle(answerKey: AnswerKey.notify(a.awaitId))
        ctx.emit(EffectType.notify, notifyBody(a), answerKey: AnswerKey.notify(a.awaitId))
    }

    public func notifyBody(_ a: AwaitRequest) -> JSONObject {
        ["workflowId": .string(a.workflowId), "nodeId": .string(a.nodeId), "runId": .string(a.runId),
         "awaitId": .string(a.awaitId), "category": .string(a.type.notificationCategory),
         "title": .string(a.notificationTitle), "body": .string(a.notificationBody), "deepLink": .string(a.deepLink),
         "actions": JSON(a.offeredActions(maxSnoozes: ctx.settings.maxSnoozes)), "urgency": .string(a.urgency.rawValue),
         "threadId": .string(a.workflowId)]
    }

    /// Marks the await of run `runId` done and withdraws its notification.
    func closeAwait(_ wf: inout Workflow, runId: String, resolution: AwaitResolution) throws(EngineError) {
        guard let i = wf.awaits.firstIndex(where: { $0.runId == runId }), wf.awaits[i].isOpen else { return }
        wf.awaits[i].status = .done
        wf.awaits[i].resolution = resolution
        wf.awaits[i].doneAt = ctx.now
        wf.awaits[i].claim = nil
        wf.awaits[i].snoozeUntil = nil
        let a = wf.awaits[i]
        ctx.settle(answerKey: AnswerKey.notify(a.awaitId))
        ctx.emit(EffectType.notifyWithdraw, ["workflowId": .string(a.workflowId), "nodeId": .string(a.nodeId),
                                             "runId": .string(a.runId), "awaitId": .string(a.awaitId)],
                 answerKey: nil)
        wf.updatedAt = ctx.now
    }

    // MARK: Claims

    func liveClaim(_ a: AwaitRequest) -> AwaitClaim? {
        guard let c = a.claim, c.leaseExpiresAt > ctx.now else { return nil }
        return c
    }

    /// Refuses acting on a done await (`awaitNotOpen`), and, unless `expiredToo`, on one whose
    /// `expiresAt` has passed (``requireNotExpired(_:_:)``).
    func requireOpen(_ a: AwaitRequest, _ verb: String, expiredToo: Bool = false) throws(EngineError) {
        guard a.isOpen else {
            throw .state("awaitNotOpen", "cannot \(verb) when the await is \(a.status.rawValue)",
                         details: ["awaitId": .string(a.awaitId), "status": .string(a.status.rawValue),
                                   "resolution": JSON(a.resolution?.rawValue)])
        }
        if !expiredToo { try requireNotExpired(a, verb) }
    }

    /// An open await whose `expiresAt` has passed is answered by its timeout (`onTimeout`), which
    /// fires at the next `engine.tick` (time does not pass by itself, OPS §1): until then it can
    /// be read, and released, but no longer claimed, snoozed, skipped or answered, so a person's
    /// late answer never wins over the timeout the template set (`awaitExpired`).
    public func requireNotExpired(_ a: AwaitRequest, _ verb: String) throws(EngineError) {
        guard let expiresAt = a.expiry(reachedAt: ctx.now) else { return }
        throw .state("awaitExpired", "cannot \(verb): the request expired at \(expiresAt.rfc3339); engine.tick applies its timeout (\(a.onTimeout.rawValue))",
                     details: ["awaitId": .string(a.awaitId), "expiresAt": JSON(expiresAt),
                               "onTimeout": .string(a.onTimeout.rawValue)])
    }

    func requireUnclaimed(_ a: AwaitRequest, by claimant: String?) throws(EngineError) {
        if let c = liveClaim(a), c.claimant != claimant {
            throw .conflict("alreadyClaimed", "the await is being handled by \(c.claimant) until \(c.leaseExpiresAt.rfc3339)",
                            details: ["awaitId": .string(a.awaitId), "claimant": .string(c.claimant),
                                      "leaseExpiresAt": JSON(c.leaseExpiresAt)])
        }
    }

    /// Claims the await for `claimant` for the lease (300 s); the same claimant renews it.
    /// Claiming a snoozed await wakes it (and notifies again).
    public func claim(_ wf: inout Workflow, awaitIndex i: Int, claimant: String) throws(EngineError) -> Timestamp {
        let a = wf.awaits[i]
        try requireOpen(a, "claim")
        try requireUnclaimed(a, by: claimant)
        let lease = ctx.now.adding(seconds: ctx.settings.claimLeaseSeconds)
        wf.awaits[i].claim = AwaitClaim(claimant: claimant, claimedAt: a.claim?.claimant == claimant ? a.claim!.claimedAt : ctx.now,
                                        leaseExpiresAt: lease)
        if a.status == .snoozed {
            // Pending again, so notified again (snoozing withdrew the notification): if the
            // claimant releases it or the lease lapses, it is still on the person's devices.
            wf.awaits[i].status = .pending
            wf.awaits[i].snoozeUntil = nil
            emitNotify(wf, awaitIndex: i)
        }
        wf.updatedAt = ctx.now
        ctx.metric("await.claimed", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId),
                                     "claimant": .string(Redaction.redact(claimant))])  // a device, not a person's address
        return lease
    }

    /// The editor was dismissed without a result: the await is pending again, nothing written.
    public func release(_ wf: inout Workflow, awaitIndex i: Int, claimant: String?) throws(EngineError) {
        let a = wf.awaits[i]
        try requireOpen(a, "release", expiredToo: true)
        if let c = liveClaim(a), let claimant, c.claimant != claimant {
            throw .conflict("alreadyClaimed", "the await is claimed by \(c.claimant), not \(claimant)",
                            details: ["awaitId": .string(a.awaitId), "claimant": .string(c.claimant)])
        }
        wf.awaits[i].claim = nil
        wf.updatedAt = ctx.now
        ctx.metric("await.released", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId)])
    }

    // MARK: Snooze and skip

    /// Snoozes for `seconds` (default 1 h). Does not claim. The sixth snooze is refused.
    public func snooze(_ wf: inout Workflow, awaitIndex i: Int, seconds: Double?) throws(EngineError) -> Timestamp {
        let a = wf.awaits[i]
        try requireOpen(a, "snooze")
        try requireUnclaimed(a, by: nil)
        guard a.snoozeCount < ctx.settings.maxSnoozes else {
            throw .state("snoozeLimitReached", "an await can be snoozed at most \(ctx.settings.maxSnoozes) times",
                         details: ["awaitId": .string(a.awaitId), "snoozeCount": JSON(a.snoozeCount),
                                   "limit": JSON(ctx.settings.maxSnoozes)])
        }
        let until = ctx.now.adding(seconds: seconds ?? ctx.settings.defaultSnoozeSeconds)
        wf.awaits[i].status = .snoozed
        wf.awaits[i].snoozeUntil = until
        wf.awaits[i].snoozeCount += 1
        wf.awaits[i].claim = nil
        ctx.settle(answerKey: AnswerKey.notify(a.awaitId))
        ctx.emit(EffectType.notifyWithdraw, ["workflowId": .string(a.workflowId), "nodeId": .string(a.nodeId),
                                             "runId": .string(a.runId), "awaitId": .string(a.awaitId)], answerKey: nil)
        wf.updatedAt = ctx.now
        ctx.metric("await.snoozed", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId),
                                     "until": JSON(until)])
        return until
    }

    /// Skips the await where its spec allows: the node's outputs are absent.
    public func skip(_ wf: inout Workflow, awaitIndex i: Int) throws(EngineError) {
        let a = wf.awaits[i]
        try requireOpen(a, "skip")
        guard a.skippable else {
            throw .state("skipNotAllowed", "this await cannot be skipped (its template does not allow it)",
                         details: ["awaitId": .string(a.awaitId)])
        }
        try requireUnclaimed(a, by: nil)
        try skipNode(&wf, awaitIndex: i, resolution: .skipped)
        ctx.metric("await.skipped", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId)])
    }

    func skipNode(_ wf: inout Workflow, awaitIndex i: Int, resolution: AwaitResolution) throws(EngineError) {
        let a = wf.awaits[i]
        guard let r = wf.runIndex(a.runId), let n = nodeIndex(wf, a.nodeId) else { return }
        wf.runs[r].finish(.skipped, at: ctx.now)
        try closeAwait(&wf, runId: a.runId, resolution: resolution)
        wf.nodes[n].outputs = [:]
        try setState(&wf, n, .skipped)
        try reconcile(&wf)
    }

    // MARK: Completion

    /// Completes the await with a person's answer; returns warnings (`emptyMask`), never errors
    /// for them. The answer is checked against the await type and the node's output port.
    public func complete(_ wf: inout Workflow, awaitIndex i: Int, claimant: String?, answer: AwaitAnswer)
        throws(EngineError) -> [JSON]
    {
        let a = wf.awaits[i]
        try requireOpen(a, "complete")
        try requireUnclaimed(a, by: claimant)
        guard let n = nodeIndex(wf, a.nodeId), let r = wf.runIndex(a.runId), wf.nodes[n].currentRunId == a.runId,
            wf.nodes[n].state == .awaitingUser
        else {
            throw .state("staleAwait", "the await no longer matches its node's current run",
                         details: ["awaitId": .string(a.awaitId)])
        }
        if case .cancel = answer {
            try cancelAnswer(&wf, awaitIndex: i)
            return []
        }
        guard a.type.acceptedAnswers.contains(answer.kindName) else {
            throw .invalid("resultTypeMismatch",
                           "a \(a.type.rawValue) await takes \(a.type.acceptedAnswers.joined(separator: " or ")) (or cancel), not \(answer.kindName)",
                           details: ["awaitType": .string(a.type.rawValue), "accepted": JSON(a.type.acceptedAnswers),
                                     "got": .string(answer.kindName)])
        }
        let t = graph.nodes[n]
        var warnings: [JSON] = []
        switch answer {
        case let .asset(draft):
            let port = try outputPort(t, for: draft.type)
            if let type = draft.type, type != port.type {
                throw .invalid("resultTypeMismatch", "result.asset is \(type) but '\(t.id)'.\(port.name) is \(port.type)",
                               details: ["port": .string(port.name), "expected": .string(port.type), "got": .string(type)])
            }
            if a.type == .drawMask, isEmptyMask(draft) {
                warnings.append(["code": "emptyMask", "message": "The mask is empty; the step continues with it."])
            }
            var typed = draft
            typed.type = port.type
            let ids = registerOutputs(wf, runIndex: r, [(port.name, typed)])
            try finishInteractive(&wf, runIndex: r, n: n, outputs: ids)
        case let .choice(choice):
            let options = a.candidates
            guard let picked = pick(choice, from: options) else {
                throw .invalid("invalidChoice", "'\(choice)' is not one of the candidates",
                               details: ["candidates": .array(options.map { ["port": .string($0.port), "assetId": .string($0.assetId)] })])
            }
            guard let source = try ctx.asset(picked.assetId) else {
                throw .state("inputAssetGone", "the chosen asset \(picked.assetId) was deleted",
                             details: ["assetId": .string(picked.assetId)])
            }
            let port = try outputPort(t, for: source.type)
            guard source.type == port.type else {
                throw .invalid("resultTypeMismatch", "the chosen asset is \(source.type) but '\(t.id)'.\(port.name) is \(port.type)",
                               details: ["port": .string(port.name), "expected": .string(port.type), "got": .string(source.type)])
            }
            var meta = source.meta
            meta["chosenFrom"] = .string(source.assetId)
            let ids = registerOutputs(wf, runIndex: r, [(port.name, AssetDraft(type: port.type, uri: source.uri,
                                                                             bytes: source.bytes, hash: source.hash,
                                                                             meta: meta))])
            try finishInteractive(&wf, runIndex: r, n: n, outputs: ids)
        case let .params(params):
            wf.nodes[n].params = wf.nodes[n].params.merging(params)
            try confirmParams(&wf, runIndex: r, n: n, answered: params)
        case .cancel:
            break
        }
        ctx.metric("await.completed", ["workflowId": .string(wf.workflowId), "nodeId": .string(a.nodeId),
                                       "awaitId": .string(a.awaitId), "result": .string(answer.kindName)])
        return warnings
    }

    func isEmptyMask(_ draft: AssetDraft) -> Bool {
        if draft.meta["empty"] == .bool(true) { return true }
        if let c = draft.meta["coverage"]?.doubleValue, c <= 0 { return true }
        if let p = draft.meta["pixelCount"]?.intValue, p == 0 { return true }
        return draft.bytes == 0
    }

    /// The candidate a choice names: a capital letter first ("B" is the second candidate, as
    /// the notification's "Choose B" means, even beside a port named "B"), then a port name,
    /// then an asset id, then a small letter.
    func pick(_ choice: String, from options: [(port: String, assetId: String)]) -> (port: String, assetId: String)? {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        func letter(_ c: String) -> (port: String, assetId: String)? {
            guard c.count == 1, let idx = letters.firstIndex(of: Character(c)), idx < options.count else { return nil }
            return options[idx]
        }
        if let o = letter(choice) { return o }
        if let o = options.first(where: { $0.port == choice }) ?? options.first(where: { $0.assetId == choice }) { return o }
        return letter(choice.uppercased())
    }

    /// The output port an answer fills: the only one, or the one of the given type.
    func outputPort(_ t: TemplateNode, for type: String?) throws(EngineError) -> PortSpec {
        if t.outputs.count == 1 { return t.outputs[0] }
        if let type, let p = t.outputs.first(where: { $0.type == type }) { return p }
        guard let first = t.outputs.first else {
            throw .state("noOutputPort", "'\(t.id)' declares no output port to receive the answer",
                         details: ["nodeId": .string(t.id)])
        }
        return first
    }

    /// The answer is the node's output: the interactive run succeeds with it.
    func finishInteractive(_ wf: inout Workflow, runIndex r: Int, n: Int, outputs: [String: String]) throws(EngineError) {
        try closeAwait(&wf, runId: wf.runs[r].runId, resolution: .completed)
        try succeed(&wf, runIndex: r, outputs: outputs)
        try reconcile(&wf)
    }

    /// Params confirmed: the node runs its tool with them (`awaitingUser → ready → queued`), on
    /// the request's inputs. A Retry's request runs the tool on the retried run's frozen params
    /// with the person's changes (`answered`) over them; any other request on the node's params
    /// now (its defaults and the person's changes, the answer's included).
    func confirmParams(_ wf: inout Workflow, runIndex r: Int, n: Int, answered: JSONObject = [:],
                       resolution: AwaitResolution = .completed) throws(EngineError)
    {
        let inputs = wf.runs[r].inputs
        let retry = wf.runs[r].trigger == .retry
        let params = retry ? wf.runs[r].params.merging(answered) : effectiveParams(wf, n)
        try closeAwait(&wf, runId: wf.runs[r].runId, resolution: resolution)
        wf.runs[r].finish(.succeeded, at: ctx.now)
        try setState(&wf, n, .ready)
        try startRun(&wf, n, trigger: retry ? .retry : .run, inputs: inputs, params: params, confirmed: true)
        try reconcile(&wf)
    }

    /// A person cancelled from the editor: the await's cancel policy applies.
    func cancelAnswer(_ wf: inout Workflow, awaitIndex i: Int) throws(EngineError) {
        let a = wf.awaits[i]
        switch a.onCancel ?? a.onTimeout {
        case .skip:
            try skipNode(&wf, awaitIndex: i, resolution: .cancelled)
        case .autoDefault:
            try autoDefault(&wf, awaitIndex: i, resolution: .cancelled)
        case .cancel:
            guard let n = nodeIndex(wf, a.nodeId) else { return }
            try cancel(&wf, n, because: NodeError(code: "awaitCancelled", message: "Cancelled from the request."))
            if let j = wf.awaits.firstIndex(where: { $0.awaitId == a.awaitId }) { wf.awaits[j].resolution = .cancelled }
            try reconcile(&wf)
        }
        ctx.metric("await.cancelled", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId)])
    }

    // MARK: Expiry

    func fireAwaitTimers(_ wf: inout Workflow) throws(EngineError) {
        let now = ctx.now
        var i = 0
        while i < wf.awaits.count {
            let a = wf.awaits[i]
            if a.status == .done {
                if !a.cleared, let done = a.doneAt, done.adding(seconds: ctx.settings.doneAwaitRetentionSeconds) <= now {
                    wf.awaits[i].cleared = true
                }
                i += 1
                continue
            }
            if let c = a.claim, c.leaseExpiresAt <= now {
                wf.awaits[i].claim = nil  // the editor's process went away: back to pending
                ctx.metric("await.leaseExpired", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId)])
            }
            if a.status == .snoozed, let until = a.snoozeUntil, until <= now {
                wf.awaits[i].status = .pending
                wf.awaits[i].snoozeUntil = nil
                emitNotify(wf, awaitIndex: i)
            }
            if a.expiry(reachedAt: now) != nil {
                try expire(&wf, awaitIndex: i)
            }
            i += 1
        }
    }

    /// The await expired: `onTimeout` decides: cancel (the node fails with an explanation),
    /// autoDefault (default params or the single best candidate), or skip.
    func expire(_ wf: inout Workflow, awaitIndex i: Int) throws(EngineError) {
        let a = wf.awaits[i]
        ctx.metric("await.expired", ["workflowId": .string(wf.workflowId), "awaitId": .string(a.awaitId),
                                     "policy": .string(a.onTimeout.rawValue)])
        switch a.onTimeout {
        case .skip:
            try skipNode(&wf, awaitIndex: i, resolution: .expired)
        case .autoDefault:
            try autoDefault(&wf, awaitIndex: i, resolution: .autoDefault)
        case .cancel:
            try expireAsFailure(&wf, awaitIndex: i, why: "No answer before the request expired; the step was cancelled.")
        }
    }

    /// The await ends without an answer to stand in for the person's: the node fails, as
    /// expired (`awaitExpired`) or as cancelled by the person (`awaitCancelled`).
    func expireAsFailure(_ wf: inout Workflow, awaitIndex i: Int, why: String,
                         resolution: AwaitResolution = .expired) throws(EngineError) {
        let a = wf.awaits[i]
        guard let r = wf.runIndex(a.runId) else { return }
        try closeAwait(&wf, runId: a.runId, resolution: resolution)
        let code = resolution == .cancelled ? "awaitCancelled" : "awaitExpired"
        try fail(&wf, runIndex: r, error: NodeError(code: code, message: why, hint: "Re-run the step to ask again.",
                                                   details: ["awaitId": .string(a.awaitId)]))
        try reconcile(&wf)
    }

    /// Default params (confirm), or the single best candidate (select); otherwise there is no
    /// default and the step fails with that explanation.
    func autoDefault(_ wf: inout Workflow, awaitIndex i: Int, resolution: AwaitResolution) throws(EngineError) {
        let a = wf.awaits[i]
        guard let n = nodeIndex(wf, a.nodeId), let r = wf.runIndex(a.runId) else { return }
        switch a.type {
        case .confirmParams:
            try confirmParams(&wf, runIndex: r, n: n, resolution: resolution)
        case .selectAsset:
            // One asset, even offered on two ports, is a single best candidate.
            let options = a.candidates
            guard Set(options.map(\.assetId)).count == 1, let source = try ctx.asset(options[0].assetId),
                let port = graph.nodes[n].outputs.first(where: { $0.type == source.type })
            else {
                try expireAsFailure(&wf, awaitIndex: i, why: resolution == .cancelled
                                        ? "Cancelled, and there is no single best candidate to choose by default."
                                        : "No answer, and there is no single best candidate to choose by default.",
                                    resolution: resolution == .cancelled ? .cancelled : .expired)
                return
            }
            var meta = source.meta
            meta["chosenFrom"] = .string(source.assetId)
            let ids = registerOutputs(wf, runIndex: r, [(port.name, AssetDraft(type: port.type, uri: source.uri,
                                                                             bytes: source.bytes, hash: source.hash,
                                                                             meta: meta))])
            try closeAwait(&wf, runId: a.runId, resolution: resolution)
            try succeed(&wf, runIndex: r, outputs: ids)
            try reconcile(&wf)
        case .drawMask, .enterText:
            try expireAsFailure(&wf, awaitIndex: i, why: resolution == .cancelled
                                    ? "Cancelled, and a \(a.type.rawValue) request has no default to use instead."
                                    : "No answer, and a \(a.type.rawValue) request has no default to use instead.",
                                resolution: resolution == .cancelled ? .cancelled : .expired)
        }
    }
}
