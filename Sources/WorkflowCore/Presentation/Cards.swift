/// Colour roles of the UI specification's state table (Appendix B §6). Shells map them to
/// their palette; the engine only says which.
public enum Tone: String, Sendable {
    case orange, blue, green, red, gray, neutral
}

/// What a ToolCard shows (DESIGN §7), computed entirely from persisted state: a shell renders it
/// and decides nothing. Times are absolute; "updated 2m ago" is the shell's arithmetic.
extension Executor {
    /// The card of node `n`. `taints` are the workflow's (``taints(_:)``) and `produced` its
    /// ``producedAssetsByNode(_:)``: pass them when building every card of a workflow, so they
    /// are computed once, not once per card.
    public func card(_ wf: Workflow, _ n: Int, taints: [Taint?]? = nil,
                     produced: [String: [String: [String]]]? = nil) throws(EngineError) -> JSON {
        let node = wf.nodes[n]
        let t = graph.nodes[n]
        let run = wf.run(node.currentRunId)
        let openAwait = wf.awaits.last { $0.nodeId == node.nodeId && $0.isOpen }
        let gate = try self.gate(wf, n, taints: taints)
        let look = appearance(node, run: run, t: t, pollingPaused: wf.pollingPaused)
        var o = JSONObject(minimumCapacity: 24)
        o.append(uniqueKey: "nodeId", .string(node.nodeId))
        o.append(uniqueKey: "title", .string(t.displayTitle))
        o.append(uniqueKey: "kind", .string(t.kind))
        o.append(uniqueKey: "state", .string(node.state.rawValue))
        o.append(uniqueKey: "chip", ["text": .string(look.chip), "tone": .string(look.tone.rawValue)])
        o.append(uniqueKey: "border", .string(look.border.rawValue))
        o.append(uniqueKey: "fill", .string(look.fill))
        o.append(uniqueKey: "progress", look.progress.map { .double($0) } ?? .null)
        // "Est. remaining" when the provider gives an ETA (seed 002's RunBar): the time, as every
        // time on a card; the remaining minutes are the shell's arithmetic, as "updated 2m ago" is.
        let inProviderHands = node.state == .queuedRemote || node.state == .runningRemote
        o.append(uniqueKey: "estimatedEndAt", inProviderHands ? JSON(run?.estimatedEndAt) : .null)
        o.append(uniqueKey: "statusText", .string(look.status))
        o.append(uniqueKey: "blockedReason", node.state == .blocked ? (node.blockedReason?.json ?? .null) : .null)
        var missing: [String] = []
        if case let .blocked(_, m, _) = gate, !node.state.isInFlight { missing = m }
        o.append(uniqueKey: "missingInputs", JSON(missing))
        o.append(uniqueKey: "inputs", try inputsPanel(wf, n, run: run, gate: gate, produced: produced ?? producedAssetsByNode(wf)))
        o.append(uniqueKey: "paramDigest", .string(paramDigest(wf, n)))
        o.append(uniqueKey: "lastResult", lastResult(wf, node))
        if let e = node.lastError {
            var error = e.json.objectValue ?? [:]
            error["hint"] = JSON(e.hint ?? Executor.hint(forCode: e.code))
            o.append(uniqueKey: "lastError", .object(error))
        } else {
            o.append(uniqueKey: "lastError", .null)
        }
        o.append(uniqueKey: "actions", .object(try actions(wf, n, run: run, gate: gate, openAwait: openAwait)))
        o.append(uniqueKey: "hasRun", .bool(lastRunWithInputs(wf, n) != nil))
        o.append(uniqueKey: "logTail", JSON(Array((run?.logTail ?? []).suffix(6))))
        o["outputs"] = .object(JSONObject(uniqueKeysWithValues: node.outputs.sorted { $0.key < $1.key }
            .map { ($0.key, JSON.string($0.value)) }))
        o.append(uniqueKey: "history", .array(wf.runs(of: node.nodeId).suffix(3).reversed().map(historyEntry)))
        o.append(uniqueKey: "awaitId", JSON(openAwait?.awaitId))
        o.append(uniqueKey: "interactive", .bool(t.isInteractive))
        o.append(uniqueKey: "resourceClass", .string(shownResourceClass(wf, n).rawValue))
        o.append(uniqueKey: "attempts", JSON(node.attempts))
        o.append(uniqueKey: "updatedAt", JSON(node.updatedAt))
        return .object(o)
    }

    struct Appearance {
        enum Border: String { case orange, blue, clear, red, gray, none }
        var chip: String
        var tone: Tone
        var border: Border
        var fill: String
        var progress: Double?
        var status: String
    }

    /// Chip, colours, progress and status line per the state table.
    func appearance(_ node: NodeInstance, run: Run?, t: TemplateNode, pollingPaused: Bool) -> Appearance {
        let queued = run.map { $0.status == .queued } ?? false
        // The nearest whole percent, but at most 99 % while the node runs: "Running 100%" would
        // say a job is done that is not (a provider's 0.996, or 1.0 while it finishes up).
        func percent(_ p: Double?) -> String { p.map { " \(min(99, Int(($0 * 100).rounded())))%" } ?? "" }
        // A job whose status checks the person paused (workflow.setPolling): no poll goes out,
        // so it is neither Reconnecting… nor live news; the card says why nothing moves.
        let checksPaused = pollingPaused && (run?.hasLiveJob ?? false)
        switch node.state {
        case .awaitingUser:
            return Appearance(chip: "Needs your input", tone: .orange, border: .orange, fill: "orange15", progress: nil,
                              status: "Needs your input")
        case .queuedRemote:
            let status: String
            if let run, run.status == .retryWait, !ctx.isOnline {
                status = "Offline — waiting for the network"
            } else if let run, run.status == .retryWait, let at = run.nextAttemptAt {
                status = "Retrying at \(at.rfc3339) (retry \(run.submitFailures) of \(RetryPolicy.maxSubmitRetries))"
            } else if queued && !ctx.isOnline {
                status = "Offline — waiting for the network"
            } else if queued {
                status = "Waiting for a remote slot"
            } else if run?.status == .submitting {
                status = "Submitting…"
            } else if !ctx.isOnline {
                // Before Reconnecting…: offline no poll goes out, as on a running or downloading card.
                status = "Offline — status checks wait for the network"
            } else if checksPaused {
                status = "Status checks paused"
            } else if let run, run.reconnecting {
                status = "Reconnecting…"
            } else {
                status = "Queued at the provider"
            }
            return Appearance(chip: "Queued", tone: .blue, border: .blue, fill: "blue15", progress: nil, status: status)
        case .runningRemote, .runningLocal:
            let reconnecting = (run?.reconnecting ?? false) && !checksPaused
            // Offline, a remote job runs on but no status check goes out (seed 000 §6.5, §8).
            let status = node.state == .runningRemote && !ctx.isOnline ? "Offline — status checks wait for the network"
                : checksPaused ? "Status checks paused"
                : reconnecting ? "Reconnecting…" : "Running" + percent(run?.progress)
            return Appearance(chip: reconnecting ? "Reconnecting…" : "Running" + percent(run?.progress), tone: .blue,
                              border: .blue, fill: "blue15", progress: run?.progress, status: status)
        case .downloading:
            let reconnecting = run?.reconnecting ?? false
            let status = !ctx.isOnline ? "Offline — waiting for the network"
                : reconnecting ? "Reconnecting…" : "Downloading results"
            return Appearance(chip: "Downloading", tone: .blue, border: .blue, fill: "blue15", progress: nil, status: status)
        case .succeeded:
            return Appearance(chip: "Done", tone: .green, border: .clear, fill: "neutral", progress: 1, status: "Done")
        case .failed:
            let code = node.lastError?.code ?? "failed"
            return Appearance(chip: code, tone: .red, border: .red, fill: "neutral", progress: nil,
                              status: node.lastError?.message ?? "Failed")
        case .blocked:
            let reason = node.blockedReason
            return Appearance(chip: "Blocked: \(Executor.shortReason(reason?.code))", tone: .gray, border: .gray,
                              fill: "neutral", progress: nil, status: reason?.message ?? "Blocked")
        case .ready:
            return Appearance(chip: queued ? "Queued" : "Ready", tone: .neutral, border: .none, fill: "neutral",
                              progress: nil, status: queued ? "Waiting for a local slot" : "Ready to run")
        case .cancelled:
            return Appearance(chip: "Cancelled", tone: .gray, border: .none, fill: "neutral", progress: nil,
                              status: node.lastError?.message ?? "Cancelled")
        case .skipped:
            return Appearance(chip: "Skipped", tone: .gray, border: .none, fill: "neutral", progress: nil,
                              status: "Skipped; its outputs are absent")
        }
    }

    /// The reason on a blocked chip, in two or three words.
    static func shortReason(_ code: String?) -> String {
        switch code {
        case BlockedReason.inputChanged: return "Input changed"
        case BlockedReason.upstreamFailed: return "Upstream failed"
        case BlockedReason.toolNotInstalled: return "Tool not installed"
        case BlockedReason.offline: return "Offline"
        case "inputAssetGone": return "Input deleted"
        default: return "Waiting for input"
        }
    }

    /// A plain-language hint for a failure code, when the failure brought none.
    public static func hint(forCode code: String) -> String {
        switch code {
        case "interrupted": return "Retry to run it again with the same inputs."
        case "providerUnavailable": return "The service may be overloaded; wait a few minutes, then Retry."
        case "providerRejected": return "Check the parameters and inputs, then Retry."
        case "awaitExpired": return "Re-run the step to ask again."
        case "inputAssetGone": return NodeError.inputAssetGoneHint
        case "missingOutput": return "The tool reported success without an output; Retry, or check the tool."
        case "downloadFailed": return "The result link may have expired; Retry runs the job again."
        case "providerContractMismatch": return "The provider's reply does not match the tool's outputs; check the tool's registration, then Retry."
        case "OOM", "outOfMemory": return "Try a smaller resolution."
        default: return "Retry, or Re-run with latest after changing parameters."
        }
    }

    /// `res=1024×1024 · steps=30 · cfg=4.0`: the summary params (the node's, else its tool's) with
    /// their effective values, each name once (where it is first listed).
    public func paramDigest(_ wf: Workflow, _ n: Int) -> String {
        let t = graph.nodes[n]
        let names = t.summaryParams ?? ctx.tool(t.kind)?.summaryParams ?? []
        let params = effectiveParams(wf, n)
        var shown = Set<String>()
        return names.compactMap { name in
            guard shown.insert(name).inserted else { return nil }
            return params[name].map { "\(name)=\(Executor.digestValue($0))" }
        }.joined(separator: " · ")
    }

    static func digestValue(_ v: JSON) -> String {
        switch v {
        case let .string(s): return s
        case let .int(i): return String(i)
        case let .double(d): return d.rounded() == d && abs(d) < 1e15 ? String(format1: d) : String(d)
        case let .bool(b): return b ? "on" : "off"
        case .null: return "–"
        case let .array(items):
            // A size or any list of numbers reads as dimensions: [1024, 1024] → 1024×1024; other
            // lists are comma-separated.
            if items.isEmpty { return "–" }
            let numbers = items.allSatisfy {
                if case .int = $0 { return true }
                if case .double = $0 { return true }
                return false
            }
            return items.map(digestValue).joined(separator: numbers ? "×" : ", ")
        default: return v.compactText
        }
    }

    /// The node's current output (its first port by name), which Use for next step may have set
    /// to an earlier run's, with the time the run that made it finished; without a current
    /// output, the last successful run's.
    func lastResult(_ wf: Workflow, _ node: NodeInstance) -> JSON {
        let port: String
        let assetId: String
        let at: Timestamp?
        if let first = node.outputs.keys.sorted().first, let current = node.outputs[first] {
            port = first
            assetId = current
            at = wf.runs.last(where: { $0.nodeId == node.nodeId && $0.status == .succeeded && $0.outputs[first] == current })?
                .finishedAt
        } else {
            guard let run = wf.runs.last(where: { $0.nodeId == node.nodeId && $0.status == .succeeded && !$0.outputs.isEmpty })
            else { return .null }
            port = run.outputs.keys.sorted().first!
            assetId = run.outputs[port]!
            at = run.finishedAt
        }
        let type = (try? ctx.asset(assetId))??.type
            ?? graph.node(node.nodeId)?.outputs.port(named: port)?.type ?? "FileRef"
        return ["type": .string(type), "at": JSON(at), "port": .string(port), "assetId": .string(assetId)]
    }

    /// The Inputs panel (seed 000 §7.2, 002's ToolCard: "which upstream outputs fill each port;
    /// if multiple, Select Input"): per input port, by name, its type, the edge that
    /// feeds it (`from`, or `null`), the asset that fills it now (what Run would take: the
    /// selection, the producer's current output or the asset bound at creation; `null` while it
    /// waits), the selection, the asset the current run used (`usedAssetId`), and `selectInput`,
    /// enabled when there is more than one candidate to choose from (`node.inputCandidates`, which
    /// lists the candidates that still exist).
    func inputsPanel(_ wf: Workflow, _ n: Int, run: Run?, gate: Gate, produced: [String: [String: [String]]])
        throws(EngineError) -> JSON
    {
        let filled: [String: String]
        switch gate {
        case let .ready(inputs): filled = inputs
        case let .blocked(_, _, resolved): filled = resolved
        }
        let node = wf.nodes[n]
        var panel: [JSON] = []
        panel.reserveCapacity(graph.nodes[n].inputs.count)
        for port in graph.nodes[n].inputs {
            var p = JSONObject(minimumCapacity: 9)
            p.append(uniqueKey: "port", .string(port.name))
            p.append(uniqueKey: "type", .string(port.type))
            p.append(uniqueKey: "optional", .bool(port.optional))
            if let producer = graph.producers[n][port.name] {
                p.append(uniqueKey: "from", ["nodeId": .string(wf.nodes[producer.node].nodeId), "port": .string(producer.port)])
            } else {
                p.append(uniqueKey: "from", .null)
            }
            p.append(uniqueKey: "assetId", JSON(filled[port.name]))
            p.append(uniqueKey: "selected", JSON(node.inputSelections[port.name]))
            p.append(uniqueKey: "usedAssetId", JSON(run?.inputs[port.name]))
            let candidates = try existingInputCandidates(wf, n, port: port.name, produced: produced).count
            p.append(uniqueKey: "candidates", JSON(candidates))
            p.append(uniqueKey: "selectInput", cardAction(candidates > 1, candidates > 1 ? nil : "No other input to choose"))
            panel.append(.object(p))
        }
        return .array(panel)
    }

    func historyEntry(_ run: Run) -> JSON {
        ["runId": .string(run.runId), "number": JSON(run.number), "status": .string(run.status.rawValue),
         "trigger": .string(run.trigger.rawValue), "startedAt": JSON(run.startedAt), "finishedAt": JSON(run.finishedAt),
         "durationSeconds": run.durationSeconds.map { .double($0) } ?? .null]
    }

    // MARK: Actions

    /// Each action a card offers, with whether it is enabled and why not (`reason`, `null` when
    /// it is enabled: DESIGN §7 gives every action both).
    func actions(_ wf: Workflow, _ n: Int, run: Run?, gate: Gate, openAwait: AwaitRequest?) throws(EngineError)
        -> JSONObject
    {
        let node = wf.nodes[n]
        let t = graph.nodes[n]
        let busy = node.state.isInFlight || isQueued(wf, n)
        var busyReason: String {
            switch node.state {
            case .awaitingUser: return "Needs your input first"
            case .runningLocal, .runningRemote: return "Running"
            case .downloading: return "Downloading results"
            default: return "Already queued"
            }
        }
        var blockedReason: String? {
            if case let .blocked(reason, _, _) = gate { return reason.message }
            return nil
        }
        var o = JSONObject()
        // Run: a ready node, or one with a result, whose inputs are available.
        if busy {
            o["run"] = cardAction(false, busyReason)
        } else if let reason = blockedReason {
            o["run"] = cardAction(false, reason)
        } else {
            o["run"] = cardAction(true, nil)
        }
        o["cancel"] = cardAction(busy, "Nothing is running")
        // Retry (same inputs).
        o["retry"] = try retryAction(wf, n, busy: busy, busyReason: busyReason)
        // Re-run with latest: the same as Run (current edges, newest inputs); shells label it so
        // once a node has run (the card's `hasRun`).
        o["rerunLatest"] = o["run"]
        // Blocked by a missing input (seed 000 §8): Open upstream and Retry upstream name the step
        // whose failure, cancel or skip left the input empty (or a producer interrupted by a
        // kill, which waits for its Retry); Replace input… names the first input the node lacks
        // or waits for (`node.selectInput` with any asset of its type). Only on a blocked card: a
        // node whose result stands while its upstream failed again shows "Done", not these.
        var missingPort: String?
        var failedUpstream: Int?
        if node.state == .blocked, case let .blocked(reason, missing, _) = gate {
            // The port an upstream failure names, else the first one missing (only ports the
            // card lists as missing: a reason may name a port for another cause).
            let named = reason.details["port"]?.stringValue
            missingPort = named.flatMap { missing.contains($0) ? $0 : nil } ?? missing.first
            if reason.code == BlockedReason.upstreamFailed, let id = reason.details["upstream"]?.stringValue {
                failedUpstream = graph.index[id]
            } else {
                for port in missing where node.inputSelections[port] == nil {
                    if let p = graph.producers[n][port], wf.nodes[p.node].state == .failed,
                       wf.nodes[p.node].lastError?.isInterruption == true
                    {
                        failedUpstream = p.node
                        break
                    }
                }
            }
        }
        if let u = failedUpstream {
            let upstreamId = JSON.string(wf.nodes[u].nodeId)
            o["openUpstream"] = cardAction(true, nil, ["nodeId": upstreamId])
            let upstreamBusy = wf.nodes[u].state.isInFlight || isQueued(wf, u)
            o["retryUpstream"] = try retryAction(wf, u, busy: upstreamBusy, busyReason: "Already running",
                                                 extra: ["nodeId": upstreamId])
        } else {
            o["openUpstream"] = cardAction(false, "No upstream step failed")
            o["retryUpstream"] = cardAction(false, "No upstream step failed")
        }
        if let missingPort {
            o["replaceInput"] = cardAction(true, nil, ["port": .string(missingPort)])
        } else {
            o["replaceInput"] = cardAction(false, "No input is missing")
        }
        // Await actions.
        if let a = openAwait, let expiresAt = a.expiry(reachedAt: ctx.now) {
            // Past its expiry, its timeout answers it at the next tick (`awaitExpired`).
            let expired = "The request expired at \(expiresAt.rfc3339)"
            o["openEditor"] = cardAction(false, expired)
            o["snooze"] = cardAction(false, expired)
            o["skip"] = cardAction(false, expired)
        } else if let a = openAwait {
            let claim = liveClaim(a)
            if let c = claim {
                // The claimant may open it again; anyone else is refused (alreadyClaimed).
                o["openEditor"] = cardAction(true, nil, ["claimedBy": .string(c.claimant),
                                                         "leaseExpiresAt": JSON(c.leaseExpiresAt)])
            } else {
                o["openEditor"] = cardAction(true, nil)
            }
            let handled = claim.map { "Being handled by \($0.claimant) until \($0.leaseExpiresAt.rfc3339)" }
            if a.snoozeCount >= ctx.settings.maxSnoozes {
                o["snooze"] = cardAction(false, "Snoozed \(ctx.settings.maxSnoozes) times already")
            } else if let handled {
                o["snooze"] = cardAction(false, handled)
            } else {
                o["snooze"] = cardAction(true, nil)
            }
            if !a.skippable {
                o["skip"] = cardAction(false, "This request cannot be skipped")
            } else if let handled {
                o["skip"] = cardAction(false, handled)
            } else {
                o["skip"] = cardAction(true, nil)
            }
        } else {
            let none = t.isInteractive ? "No request is waiting" : "This step needs no input"
            o["openEditor"] = cardAction(false, none)
            o["snooze"] = cardAction(false, none)
            o["skip"] = cardAction(false, none)
        }
        return o
    }

    /// Retry (same inputs) of node `n`: enabled when `node.retry` would be accepted.
    /// `extra` members are added to the action (a Retry upstream names its node).
    func retryAction(_ wf: Workflow, _ n: Int, busy: Bool, busyReason: String, extra: JSONObject = [:])
        throws(EngineError) -> JSON
    {
        if busy { return cardAction(false, busyReason, extra) }
        guard let previous = lastRunWithInputs(wf, n) else { return cardAction(false, "Nothing to retry yet", extra) }
        for port in previous.inputs.keys.sorted() where try ctx.asset(previous.inputs[port]!) == nil {
            return cardAction(false, "The \(port) input of the last run was deleted", extra)
        }
        if resourceClass(of: n) == .remote, !graph.nodes[n].isInteractive, !ctx.isOnline {
            return cardAction(false, "Offline", extra)
        }
        return cardAction(true, nil, extra)
    }

    /// The detail toolbar: Run all ready, Pause/Resume polling (with its tooltip), Duplicate.
    public func toolbar(_ wf: Workflow) throws(EngineError) -> JSON {
        var anyReady = false
        for n in graph.order where wf.nodes[n].state == .ready && !isQueued(wf, n) {
            anyReady = true
            break
        }
        let hasLiveJobs = wf.runs.contains { $0.hasLiveJob }
        return [
            "runAllReady": anyReady ? ["enabled": true] : ["enabled": false, "reason": "No step is ready"],
            "polling": ["label": .string(wf.pollingPaused ? "Resume polling" : "Pause polling"),
                        "paused": .bool(wf.pollingPaused), "enabled": .bool(hasLiveJobs || wf.pollingPaused),
                        "tooltip": "Pauses status checks only; remote job continues running."],
            "duplicate": ["enabled": true],
        ]
    }
}

/// A card action: `{enabled: true, reason: null}` or `{enabled: false, reason}` (DESIGN §7 gives
/// every action both), with `extra` members after them (`nodeId`, `port`, a claim's holder).
private func cardAction(_ enabled: Bool, _ reason: String?, _ extra: JSONObject = [:]) -> JSON {
    var o: JSONObject = enabled ? ["enabled": true, "reason": .null] : ["enabled": false, "reason": JSON(reason)]
    for (key, value) in extra { o[key] = value }
    return .object(o)
}

extension String {
    /// A whole real with one decimal: `4.0`.
    init(format1 d: Double) {
        self = String(Int64(d)) + ".0"
    }
}
