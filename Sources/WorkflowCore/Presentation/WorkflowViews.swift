/// The shapes hosts read (DESIGN §6): workflows, nodes, runs and awaits as JSON.
extension Executor {
    /// `{workflowId, templateId, title, status, nodes, awaits, createdAt, updatedAt, autoRun, pollingPaused}`,
    /// nodes in graph order.
    public func workflowJSON(_ wf: Workflow) throws(EngineError) -> JSON {
        var o = JSONObject(minimumCapacity: 12)
        o["workflowId"] = .string(wf.workflowId)
        o["templateId"] = .string(wf.templateId)
        o["title"] = .string(wf.title)
        o["status"] = .string(wf.status.rawValue)
        o["archived"] = .bool(wf.archived)
        o["autoRun"] = .bool(wf.autoRun)
        o["pollingPaused"] = .bool(wf.pollingPaused)
        o["createdAt"] = JSON(wf.createdAt)
        o["updatedAt"] = JSON(wf.updatedAt)
        o["stepsDone"] = JSON(wf.nodes.filter { $0.state == .succeeded || $0.state == .skipped }.count)
        o["stepsTotal"] = JSON(wf.nodes.count)
        var nodes: [JSON] = []
        nodes.reserveCapacity(wf.nodes.count)
        for n in graph.order { nodes.append(try nodeJSON(wf, n)) }
        o["nodes"] = .array(nodes)
        o["awaits"] = .array(wf.awaits.filter { !$0.cleared }.map { awaitJSON($0, in: wf) })
        return .object(o)
    }

    /// `{nodeId, kind, state, blockedReason?, runId?, jobId?, progress?, outputs, lastError?, attempts, …}`.
    public func nodeJSON(_ wf: Workflow, _ n: Int) throws(EngineError) -> JSON {
        let node = wf.nodes[n]
        let t = graph.nodes[n]
        var o = JSONObject(minimumCapacity: 20)
        o["nodeId"] = .string(node.nodeId)
        o["title"] = .string(t.displayTitle)
        o["kind"] = .string(t.kind)
        o["state"] = .string(node.state.rawValue)
        if let r = node.blockedReason, node.state == .blocked { o["blockedReason"] = r.json }
        let run = wf.run(node.currentRunId)
        if let run {
            o["runId"] = .string(run.runId)
            if let j = run.jobId { o["jobId"] = .string(j) }
            if !run.status.isTerminal || run.status == .succeeded { o["progress"] = run.progress.map { .double($0) } ?? .null }
            o["runStatus"] = .string(run.status.rawValue)
            if run.reconnecting, !run.status.isTerminal { o["reconnecting"] = true }
            if let t = run.nextAttemptAt, run.status == .retryWait { o["retryAt"] = JSON(t) }
        }
        o["outputs"] = .object(JSONObject(uniqueKeysWithValues: node.outputs.sorted { $0.key < $1.key }
            .map { ($0.key, JSON.string($0.value)) }))
        if let e = node.lastError { o["lastError"] = e.json }
        o["attempts"] = JSON(node.attempts)
        o["resourceClass"] = .string(shownResourceClass(wf, n).rawValue)
        o["interactive"] = .bool(t.isInteractive)
        if let a = wf.awaits.last(where: { $0.nodeId == node.nodeId && $0.isOpen }) { o["awaitId"] = .string(a.awaitId) }
        if node.state == .blocked || node.state == .ready, case let .blocked(_, missing, _) = try gate(wf, n),
            !missing.isEmpty
        {
            o["missingInputs"] = JSON(missing)
        }
        o["params"] = .object(effectiveParams(wf, n))
        o["updatedAt"] = JSON(node.updatedAt)
        return .object(o)
    }

    /// A run as history shows it, with the params diff against `currentParams`.
    public func runJSON(_ run: Run, currentParams: JSONObject?) -> JSON {
        var o = JSONObject(minimumCapacity: 18)
        o["runId"] = .string(run.runId)
        o["nodeId"] = .string(run.nodeId)
        o["number"] = JSON(run.number)
        o["mode"] = .string(run.mode.rawValue)
        o["trigger"] = .string(run.trigger.rawValue)
        o["status"] = .string(run.status.rawValue)
        o["createdAt"] = JSON(run.createdAt)
        o["startedAt"] = JSON(run.startedAt)
        o["finishedAt"] = JSON(run.finishedAt)
        o["durationSeconds"] = run.durationSeconds.map { .double($0) } ?? .null
        if let j = run.jobId { o["jobId"] = .string(j) }
        o["params"] = .object(run.params)
        if let currentParams { o["paramsDiff"] = .object(Executor.paramsDiff(run.params, currentParams)) }
        o["inputs"] = .object(JSONObject(uniqueKeysWithValues: run.inputs.sorted { $0.key < $1.key }
            .map { ($0.key, JSON.string($0.value)) }))
        o["outputs"] = .object(JSONObject(uniqueKeysWithValues: run.outputs.sorted { $0.key < $1.key }
            .map { ($0.key, JSON.string($0.value)) }))
        if let e = run.error { o["error"] = e.jsonWithDetails }
        if run.submitAttempts > 1 { o["submitAttempts"] = JSON(run.submitAttempts) }
        return .object(o)
    }

    /// `{key: {then, now}}` for every parameter that differs (absent on one side reads as null).
    public static func paramsDiff(_ then: JSONObject, _ now: JSONObject) -> JSONObject {
        var keys = Set(then.keys)
        keys.formUnion(now.keys)
        var diff = JSONObject()
        for k in keys.sorted() where then[k] != now[k] {
            diff.append(uniqueKey: k, ["then": then[k] ?? .null, "now": now[k] ?? .null])
        }
        return diff
    }

    /// The await shape of DESIGN §6.
    public func awaitJSON(_ a: AwaitRequest, in wf: Workflow) -> JSON {
        var o = JSONObject(minimumCapacity: 26)
        o["awaitId"] = .string(a.awaitId)
        o["workflowId"] = .string(a.workflowId)
        o["workflowTitle"] = .string(wf.title)
        o["nodeId"] = .string(a.nodeId)
        o["runId"] = .string(a.runId)
        o["type"] = .string(a.type.rawValue)
        o["title"] = .string(a.title)
        // What an editor is handed (seed 000 App. D: the expected output type) and an Action
        // Center cell shows (App. B: the node's title, a preview of what the request is about).
        if let n = nodeIndex(wf, a.nodeId) {
            let t = graph.nodes[n]
            o["nodeTitle"] = .string(t.displayTitle)
            o["outputs"] = .array(t.outputs.map { ["port": .string($0.name), "type": .string($0.type)] })
        }
        o["inputs"] = .object(JSONObject(uniqueKeysWithValues: (wf.run(a.runId)?.inputs ?? [:]).sorted { $0.key < $1.key }
            .map { ($0.key, JSON.string($0.value)) }))
        if let d = a.detail { o["detail"] = .string(d) }
        o["urgency"] = .string(a.urgency.rawValue)
        o["blocking"] = .bool(a.blocking)
        o["status"] = .string(a.status.rawValue)
        o["createdAt"] = JSON(a.createdAt)
        o["expiresAt"] = JSON(a.expiresAt)
        o["snoozeUntil"] = JSON(a.snoozeUntil)
        o["snoozeCount"] = JSON(a.snoozeCount)
        if let c = liveClaim(a) {
            o["claim"] = ["claimant": .string(c.claimant), "leaseExpiresAt": JSON(c.leaseExpiresAt)]
        }
        o["deepLink"] = .string(a.deepLink)
        var policy: JSONObject = ["onTimeout": .string(a.onTimeout.rawValue)]
        if let c = a.onCancel { policy["onCancel"] = .string(c.rawValue) }
        o["resumePolicy"] = .object(policy)
        o["skippable"] = .bool(a.skippable)
        o["category"] = .string(a.type.notificationCategory)
        // A done await has no notification, and nothing left to act on; nor has one past its
        // expiry, which its timeout answers at the next tick (`awaitExpired`).
        o["actions"] = a.isOpen && a.expiry(reachedAt: ctx.now) == nil ? JSON(a.offeredActions(maxSnoozes: ctx.settings.maxSnoozes)) : .array([])
        if a.type == .selectAsset {
            o["candidates"] = .array(a.candidates.map { ["port": .string($0.port), "assetId": .string($0.assetId)] })
        }
        if let r = a.resolution { o["resolution"] = .string(r.rawValue) }
        if let d = a.doneAt { o["doneAt"] = JSON(d) }
        return .object(o)
    }
}
