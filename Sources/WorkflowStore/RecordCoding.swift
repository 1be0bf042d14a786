import WorkflowCore

/// How core records are written into the `data` columns: compact JSON, timestamps as
/// milliseconds, absent values left out. Decoding is forgiving (missing fields take defaults,
/// legacy names map to today's), so an older store always loads.
enum RecordCoding {
    // MARK: Helpers

    static func ms(_ t: Timestamp?) -> JSON { t.map { .int($0.milliseconds) } ?? .null }
    /// A stored count (attempts, failures, polls), kept within 0 … 2^31 − 1 like every count the
    /// engine writes: a damaged record's huge value must not overflow the next `+ 1`.
    static func count(_ j: JSON?, default value: Int = 0) -> Int {
        guard let v = j?.intValue else { return value }
        return Int(min(max(v, 0), Int64(Int32.max)))
    }
    static func time(_ j: JSON?) -> Timestamp? {
        guard let j, let v = j.intValue else {
            if let s = j?.stringValue { return Timestamp(rfc3339: s) }
            return nil
        }
        return Timestamp(milliseconds: v)
    }
    static func portMap(_ m: [String: String]) -> JSON {
        if m.count == 1, let (k, v) = m.first { return .object([k: .string(v)]) }  // most ports: nothing to sort
        return .object(JSONObject(uniqueKeysWithValues: m.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }))
    }
    static func portMap(_ j: JSON?) -> [String: String] {
        guard case let .object(o)? = j else { return [:] }
        var m: [String: String] = [:]
        for (k, v) in o { if let s = v.stringValue { m[k] = s } }
        return m
    }
    /// An error's record. `interruption` is written only where it differs from what records
    /// written before the flag existed imply, the code being `interrupted`: those records read
    /// back as they always did, and a host's failure coded `interrupted` reads back as a failure.
    static func error(_ e: NodeError?) -> JSON {
        guard let e else { return .null }
        var o: JSONObject = ["code": .string(e.code), "message": .string(e.message)]
        if let h = e.hint { o["hint"] = .string(h) }
        if !e.details.isEmpty { o["details"] = .object(e.details) }
        if e.isInterruption != impliesInterruption(e.code) { o["interruption"] = .bool(e.isInterruption) }
        return .object(o)
    }
    static func error(_ j: JSON?) -> NodeError? {
        guard case let .object(o)? = j, let code = o["code"]?.stringValue else { return nil }
        return NodeError(code: code, message: o["message"]?.stringValue ?? code, hint: o["hint"]?.stringValue,
                         details: o["details"]?.objectValue ?? [:],
                         isInterruption: o["interruption"]?.boolValue ?? impliesInterruption(code))
    }
    static func impliesInterruption(_ code: String) -> Bool { code == NodeError.interrupted.code }

    // MARK: Nodes

    static func encode(_ n: NodeInstance) -> JSON {
        var o = JSONObject(minimumCapacity: 12)
        o.append(uniqueKey: "state", .string(n.state.rawValue))
        if let r = n.blockedReason { o.append(uniqueKey: "blockedReason", blockedReason(r)) }
        if !n.params.isEmpty { o.append(uniqueKey: "params", .object(n.params)) }
        if !n.bindings.isEmpty { o.append(uniqueKey: "bindings", portMap(n.bindings)) }
        if !n.inputSelections.isEmpty { o.append(uniqueKey: "inputSelections", portMap(n.inputSelections)) }
        if !n.outputs.isEmpty { o.append(uniqueKey: "outputs", portMap(n.outputs)) }
        if let r = n.currentRunId { o.append(uniqueKey: "currentRunId", .string(r)) }
        if let e = n.lastError { o.append(uniqueKey: "lastError", error(e)) }
        o.append(uniqueKey: "attempts", JSON(n.attempts))
        o.append(uniqueKey: "updatedAt", ms(n.updatedAt))
        return .object(o)
    }

    static func blockedReason(_ r: BlockedReason) -> JSON {
        var b: JSONObject = ["code": .string(r.code), "message": .string(r.message)]
        if !r.details.isEmpty { b["details"] = .object(r.details) }
        return .object(b)
    }

    static func decodeNode(nodeId: String, _ j: JSON) -> NodeInstance {
        let o = j.objectValue ?? [:]
        var reason: BlockedReason?
        if case let .object(b)? = o["blockedReason"], let code = b["code"]?.stringValue {
            reason = BlockedReason(code: code, message: b["message"]?.stringValue ?? code,
                                   details: b["details"]?.objectValue ?? [:])
        }
        return NodeInstance(
            nodeId: nodeId, state: NodeState(persisted: o["state"] ?? .null), blockedReason: reason,
            params: o["params"]?.objectValue ?? [:], bindings: portMap(o["bindings"]),
            inputSelections: portMap(o["inputSelections"]), outputs: portMap(o["outputs"]),
            currentRunId: o["currentRunId"]?.stringValue, lastError: error(o["lastError"]) ?? legacyFailure(o["state"]),
            attempts: count(o["attempts"]), updatedAt: time(o["updatedAt"]) ?? Timestamp(milliseconds: 0))
    }

    /// The reason the step-1 shim of 003 kept in the state itself (`{"failed": "reason"}`), as
    /// the node's error when its record has none: a card shows it rather than a bare "Failed".
    /// The shim wrote `.failed("interrupted")` for a local run a kill cut short (003 §7): that
    /// reads as the engine's own interruption, so the node's consumers wait for its Retry.
    static func legacyFailure(_ state: JSON?) -> NodeError? {
        guard case let .object(o)? = state, let reason = o["failed"]?.stringValue, !reason.isEmpty else { return nil }
        if reason == NodeError.interrupted.code { return NodeError.interrupted }
        return NodeError(code: NodeError.legacyFailureCode, message: reason)
    }

    // MARK: Runs

    /// A run's record: first the members that never change after the run is made (so their
    /// text can be kept and written again as it is, ``writeRun(_:_:)``), then the rest.
    static func encode(_ r: Run) -> JSON {
        var o = JSONObject(minimumCapacity: 24)
        o.append(uniqueKey: "number", JSON(r.number))
        o.append(uniqueKey: "mode", .string(r.mode.rawValue))
        o.append(uniqueKey: "kind", .string(r.kind))
        o.append(uniqueKey: "trigger", .string(r.trigger.rawValue))
        o.append(uniqueKey: "params", .object(r.params))
        o.append(uniqueKey: "inputs", portMap(r.inputs))
        o.append(uniqueKey: "idempotencyKey", .string(r.idempotencyKey))
        o.append(uniqueKey: "createdAt", ms(r.createdAt))
        o.append(uniqueKey: "status", .string(r.status.rawValue))
        if let j = r.jobId { o.append(uniqueKey: "jobId", .string(j)) }
        if r.submitAttempts > 0 { o.append(uniqueKey: "submitAttempts", JSON(r.submitAttempts)) }
        if r.submitFailures > 0 { o.append(uniqueKey: "submitFailures", JSON(r.submitFailures)) }
        if let t = r.nextAttemptAt { o.append(uniqueKey: "nextAttemptAt", ms(t)) }
        if let t = r.nextPollAt { o.append(uniqueKey: "nextPollAt", ms(t)) }
        if r.pollCount > 0 { o.append(uniqueKey: "pollCount", JSON(r.pollCount)) }
        if r.pollFailures > 0 { o.append(uniqueKey: "pollFailures", JSON(r.pollFailures)) }
        if let p = r.progress { o.append(uniqueKey: "progress", .double(p)) }
        if let t = r.estimatedEndAt { o.append(uniqueKey: "estimatedEndAt", ms(t)) }
        if !r.logTail.isEmpty { o.append(uniqueKey: "logTail", JSON(r.logTail)) }
        if !r.outputs.isEmpty { o.append(uniqueKey: "outputs", portMap(r.outputs)) }
        if !r.pendingDownloads.isEmpty { o.append(uniqueKey: "pendingDownloads", portMap(r.pendingDownloads)) }
        if r.downloadFailures > 0 { o.append(uniqueKey: "downloadFailures", JSON(r.downloadFailures)) }
        if let t = r.nextDownloadAt { o.append(uniqueKey: "nextDownloadAt", ms(t)) }
        if r.cancelFailures > 0 { o.append(uniqueKey: "cancelFailures", JSON(r.cancelFailures)) }
        if let t = r.nextCancelAt { o.append(uniqueKey: "nextCancelAt", ms(t)) }
        if r.holdsSlot { o.append(uniqueKey: "holdsSlot", true) }
        if let t = r.startedAt { o.append(uniqueKey: "startedAt", ms(t)) }
        if let t = r.finishedAt { o.append(uniqueKey: "finishedAt", ms(t)) }
        if let e = r.error { o.append(uniqueKey: "error", error(e)) }
        return .object(o)
    }

    static func decodeRun(runId: String, nodeId: String, _ j: JSON) -> Run {
        let o = j.objectValue ?? [:]
        var r = Run(runId: runId, nodeId: nodeId, number: count(o["number"], default: 1),
                    mode: RunMode(rawValue: o["mode"]?.stringValue ?? "") ?? .local,
                    kind: o["kind"]?.stringValue ?? "",
                    trigger: RunTrigger(rawValue: o["trigger"]?.stringValue ?? "") ?? .run,
                    status: RunStatus(persisted: o["status"]?.stringValue ?? ""),
                    params: o["params"]?.objectValue ?? [:], inputs: portMap(o["inputs"]),
                    idempotencyKey: o["idempotencyKey"]?.stringValue ?? runId,
                    createdAt: time(o["createdAt"]) ?? Timestamp(milliseconds: 0))
        r.jobId = o["jobId"]?.stringValue
        r.submitAttempts = count(o["submitAttempts"])
        r.submitFailures = count(o["submitFailures"])
        r.nextAttemptAt = time(o["nextAttemptAt"])
        r.nextPollAt = time(o["nextPollAt"])
        r.pollCount = count(o["pollCount"])
        r.pollFailures = count(o["pollFailures"])
        r.progress = o["progress"]?.doubleValue
        r.estimatedEndAt = time(o["estimatedEndAt"])
        r.logTail = o["logTail"]?.arrayValue?.compactMap(\.stringValue) ?? []
        r.outputs = portMap(o["outputs"])
        r.pendingDownloads = portMap(o["pendingDownloads"])
        r.downloadFailures = count(o["downloadFailures"])
        r.nextDownloadAt = time(o["nextDownloadAt"])
        r.cancelFailures = count(o["cancelFailures"])
        r.nextCancelAt = time(o["nextCancelAt"])
        r.holdsSlot = o["holdsSlot"]?.boolValue ?? false
        r.startedAt = time(o["startedAt"])
        r.finishedAt = time(o["finishedAt"])
        r.error = error(o["error"])
        return r
    }

    // MARK: Awaits

    static func encode(_ a: AwaitRequest) -> JSON {
        var o = JSONObject(minimumCapacity: 24)
        o.append(uniqueKey: "type", .string(a.type.rawValue))
        o.append(uniqueKey: "title", .string(a.title))
        if let d = a.detail { o.append(uniqueKey: "detail", .string(d)) }
        o.append(uniqueKey: "urgency", .string(a.urgency.rawValue))
        o.append(uniqueKey: "blocking", .bool(a.blocking))
        o.append(uniqueKey: "status", .string(a.status.rawValue))
        o.append(uniqueKey: "createdAt", ms(a.createdAt))
        if let t = a.expiresAt { o.append(uniqueKey: "expiresAt", ms(t)) }
        if let t = a.snoozeUntil { o.append(uniqueKey: "snoozeUntil", ms(t)) }
        o.append(uniqueKey: "snoozeCount", JSON(a.snoozeCount))
        if let c = a.claim {
            o.append(uniqueKey: "claim", ["claimant": .string(c.claimant), "claimedAt": ms(c.claimedAt),
                                          "leaseExpiresAt": ms(c.leaseExpiresAt)])
        }
        o.append(uniqueKey: "deepLink", .string(a.deepLink))
        o.append(uniqueKey: "onTimeout", .string(a.onTimeout.rawValue))
        if let c = a.onCancel { o.append(uniqueKey: "onCancel", .string(c.rawValue)) }
        o.append(uniqueKey: "skippable", .bool(a.skippable))
        o.append(uniqueKey: "notificationTitle", .string(a.notificationTitle))
        o.append(uniqueKey: "notificationBody", .string(a.notificationBody))
        if let r = a.resolution { o.append(uniqueKey: "resolution", .string(r.rawValue)) }
        if let t = a.doneAt { o.append(uniqueKey: "doneAt", ms(t)) }
        if a.cleared { o.append(uniqueKey: "cleared", true) }
        if !a.inputs.isEmpty { o.append(uniqueKey: "inputs", portMap(a.inputs)) }
        return .object(o)
    }

    static func decodeAwait(awaitId: String, workflowId: String, nodeId: String, runId: String, _ j: JSON) -> AwaitRequest {
        let o = j.objectValue ?? [:]
        let type = AwaitType(rawValue: o["type"]?.stringValue ?? "") ?? .confirmParams
        var a = AwaitRequest(
            awaitId: awaitId, workflowId: workflowId, nodeId: nodeId, runId: runId, type: type,
            title: o["title"]?.stringValue ?? type.defaultTitle, detail: o["detail"]?.stringValue,
            urgency: Urgency(rawValue: o["urgency"]?.stringValue ?? "") ?? .normal,
            blocking: o["blocking"]?.boolValue ?? true, createdAt: time(o["createdAt"]) ?? Timestamp(milliseconds: 0),
            expiresAt: time(o["expiresAt"]), deepLink: o["deepLink"]?.stringValue ?? "",
            onTimeout: ResumeAction(rawValue: o["onTimeout"]?.stringValue ?? "") ?? .cancel,
            onCancel: ResumeAction(rawValue: o["onCancel"]?.stringValue ?? ""),
            skippable: o["skippable"]?.boolValue ?? false,
            notificationTitle: o["notificationTitle"]?.stringValue ?? type.defaultTitle,
            notificationBody: o["notificationBody"]?.stringValue ?? "")
        a.status = AwaitStatus(rawValue: o["status"]?.stringValue ?? "") ?? .pending
        a.snoozeUntil = time(o["snoozeUntil"])
        a.snoozeCount = count(o["snoozeCount"])
        if case let .object(c)? = o["claim"], let claimant = c["claimant"]?.stringValue,
            let lease = time(c["leaseExpiresAt"])
        {
            a.claim = AwaitClaim(claimant: claimant, claimedAt: time(c["claimedAt"]) ?? lease, leaseExpiresAt: lease)
        }
        a.resolution = AwaitResolution(rawValue: o["resolution"]?.stringValue ?? "")
        a.doneAt = time(o["doneAt"])
        a.cleared = o["cleared"]?.boolValue ?? false
        a.inputs = portMap(o["inputs"])
        return a
    }

    // MARK: Workflows

    static func encodeWorkflowData(_ w: Workflow) -> JSON { workflowData(autoRun: w.autoRun, pollingPaused: w.pollingPaused) }

    private static func workflowData(autoRun: Bool, pollingPaused: Bool) -> JSON {
        ["autoRun": .bool(autoRun), "pollingPaused": .bool(pollingPaused)]
    }

    /// ``encodeWorkflowData(_:)`` as bytes: two booleans, so four texts, written once.
    static func workflowDataBytes(_ w: Workflow) -> [UInt8] {
        workflowDataTexts[(w.autoRun ? 2 : 0) + (w.pollingPaused ? 1 : 0)]
    }

    private static let workflowDataTexts: [[UInt8]] = (0..<4).map { i in
        JSONWriter.bytes(workflowData(autoRun: i & 2 != 0, pollingPaused: i & 1 != 0))
    }

    // MARK: Assets

    static func encode(_ a: Asset) -> JSON {
        var o = JSONObject(minimumCapacity: 8)
        o.append(uniqueKey: "uri", .string(a.uri))
        if let b = a.bytes { o.append(uniqueKey: "bytes", .int(b)) }
        if let h = a.hash { o.append(uniqueKey: "hash", .string(h)) }
        o.append(uniqueKey: "meta", .object(a.meta))
        if let p = a.provenance { o.append(uniqueKey: "provenance", p.json) }
        return .object(o)
    }

    static func decodeAsset(assetId: String, type: String, createdAt: Int64, pinned: Bool, _ j: JSON) -> Asset {
        let o = j.objectValue ?? [:]
        var provenance: Provenance?
        if case let .object(p)? = o["provenance"], let w = p["workflowId"]?.stringValue,
            let n = p["nodeId"]?.stringValue, let r = p["runId"]?.stringValue, let port = p["port"]?.stringValue
        {
            provenance = Provenance(workflowId: w, nodeId: n, runId: r, port: port)
        }
        return Asset(assetId: assetId, type: type, uri: o["uri"]?.stringValue ?? "", bytes: o["bytes"]?.intValue,
                     hash: o["hash"]?.stringValue, meta: o["meta"]?.objectValue ?? [:],
                     createdAt: Timestamp(milliseconds: createdAt), provenance: provenance, pinned: pinned)
    }

    // MARK: Tools

    static func encode(_ t: ToolSpec) -> JSON { t.json }

    static func decodeTool(_ j: JSON) -> ToolSpec? { ToolSpec.decode(j).spec }
}
