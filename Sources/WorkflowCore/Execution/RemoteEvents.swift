/// What a provider reports about a job (`job.update`).
public struct JobUpdate: Sendable {
    public enum Status: String, Sendable, CaseIterable { case queued, running, succeeded, failed, cancelled }
    public var status: Status
    /// 0…1; nil when the provider gives none (an indeterminate bar).
    public var progress: Double?
    /// Seconds until the provider expects the job to end, from the report's time.
    public var etaSeconds: Double?
    public var logTail: [String]?
    /// For `succeeded`: per output port, either `{url}` to download or an asset `{type, uri, …}`.
    public var outputs: JSONObject?
    public var error: NodeError?

    public init(status: Status, progress: Double? = nil, etaSeconds: Double? = nil, logTail: [String]? = nil,
                outputs: JSONObject? = nil, error: NodeError? = nil) {
        self.status = status
        self.progress = progress
        self.etaSeconds = etaSeconds
        self.logTail = logTail
        self.outputs = outputs
        self.error = error
    }
}

/// A transport failure reported by the host (`job.transportError`).
public struct TransportError: Sendable {
    public var httpStatus: Int?
    public var retryAfterSeconds: Double?
    public var offline: Bool

    public init(httpStatus: Int? = nil, retryAfterSeconds: Double? = nil, offline: Bool = false) {
        self.httpStatus = httpStatus
        self.retryAfterSeconds = retryAfterSeconds
        self.offline = offline
    }

    /// For logs: "HTTP 503", "offline" (no connection), or "no response" (a timeout).
    public var reason: String {
        if let httpStatus { return "HTTP \(httpStatus)" }
        return offline ? "offline" : "no response"
    }
}

/// How an event was applied: changed something, or ignored (stale, duplicate) with a reason.
public enum EventOutcome: Equatable, Sendable {
    case applied
    case ignored(String)

    public var json: JSONObject {
        switch self {
        case .applied: return ["applied": true]
        case let .ignored(reason): return ["applied": false, "ignored": .string(reason)]
        }
    }
}

extension Executor {
    /// Keeps the last six log lines, each redacted.
    static func tail(_ lines: [String]) -> [String] { Array(lines.suffix(6)).map(Redaction.redact) }

    /// Provider reports naming a run (`job.submitted`, `job.transportError`, `job.downloaded`)
    /// are about remote runs only: one naming a local or interactive run is refused, like
    /// `local.completed` naming a remote run (`notLocal`). (`job.update` names a job, and only
    /// remote runs have one.)
    func requireRemote(_ run: Run) throws(EngineError) {
        guard run.mode == .remote else {
            throw .invalid("notRemote", "run \(run.runId) is a \(run.mode.rawValue) run, not a remote one",
                           details: ["runId": .string(run.runId), "mode": .string(run.mode.rawValue)])
        }
    }

    /// The provider accepted the job: the run gets its job id (once: a run with a job id is never
    /// resubmitted) and polling starts. A second, different job id for the same run is a
    /// duplicate job, cancelled at once.
    public func jobSubmitted(_ wf: inout Workflow, runIndex r: Int, jobId: String) throws(EngineError) -> EventOutcome {
        let run = wf.runs[r]
        try requireRemote(run)
        ctx.settle(answerKey: AnswerKey.submit(run.runId))
        if let existing = run.jobId {
            if existing == jobId { return .ignored("duplicate: the run already has this job id") }
            // The same report again (a host re-sending it) asks for no second cancel.
            if ctx.effects(answerKey: AnswerKey.cancel(jobId)).isEmpty {
                var body = effectBody(wf, run)
                body["jobId"] = .string(jobId)
                body["reason"] = "duplicateJob"
                ctx.emit(EffectType.remoteCancel, body, answerKey: AnswerKey.cancel(jobId))
                ctx.warn("second job id for one run; cancelling the duplicate", ["runId": run.runId, "jobId": jobId])
            }
            return .ignored("duplicate job: run already has job \(existing); \(jobId) is being cancelled")
        }
        if run.status.isTerminal {
            // The run was cancelled (or failed) before the provider answered: drop the job.
            wf.runs[r].jobId = jobId
            var body = effectBody(wf, run)
            body["jobId"] = .string(jobId)
            ctx.emit(EffectType.remoteCancel, body, answerKey: AnswerKey.cancel(jobId))
            return .ignored("the run is \(run.status.rawValue); the job is being cancelled")
        }
        guard run.status == .submitting || run.status == .retryWait else {
            return .ignored("the run is \(run.status.rawValue), not submitting")
        }
        wf.runs[r].jobId = jobId
        wf.runs[r].status = .submitted
        wf.runs[r].nextAttemptAt = nil
        schedulePoll(&wf, runIndex: r)
        touch(&wf, node: nodeIndex(wf, run.nodeId))  // "Submitting…" is now "Queued at the provider"
        ctx.note("job submitted", ["workflowId": wf.workflowId, "runId": run.runId, "jobId": jobId])
        return .applied
    }

    /// What node `n`'s card shows of its run changed without the node changing state (its
    /// status line, progress, log tail, estimate, "Reconnecting…" starting or ending): the
    /// node's `updatedAt` ("updated Xs ago" on its Run & Status panel) and the workflow's
    /// ("Recent") say so. A report with no news moves neither.
    func touch(_ wf: inout Workflow, node n: Int?) {
        if let n { wf.nodes[n].updatedAt = ctx.now }
        wf.updatedAt = ctx.now
    }

    /// Whether a report changed what the card shows of run `r`, once `before` (as the report
    /// found it). An estimate that moved by less than a second is the same estimate: a provider
    /// counting its ETA down in whole seconds gives one end time, give or take the poll's moment.
    func cardNews(_ wf: Workflow, runIndex r: Int, before: Run) -> Bool {
        let now = wf.runs[r]
        let estimateMoved: Bool = switch (now.estimatedEndAt, before.estimatedEndAt) {
        case let (a?, b?): abs(a.milliseconds - b.milliseconds) >= 1_000
        case (nil, nil): false
        default: true
        }
        return now.status != before.status || now.progress != before.progress || now.logTail != before.logTail
            || estimateMoved || now.reconnecting != before.reconnecting
    }

    /// Schedules the next regular poll of run `r` (none while polling is paused).
    func schedulePoll(_ wf: inout Workflow, runIndex r: Int) {
        guard !wf.pollingPaused else {
            wf.runs[r].nextPollAt = nil
            return
        }
        wf.runs[r].pollCount += 1
        let delay = RetryPolicy.pollDelay(interval: ctx.settings.pollIntervalSeconds, seed: ctx.settings.seed,
                                          runId: wf.runs[r].runId, pollNumber: wf.runs[r].pollCount)
        wf.runs[r].nextPollAt = pollTime(after: delay)
    }

    /// When a poll `seconds` from now is due (`Retry-After: 0` is now): `nil` for a later poll
    /// once the clock shows the latest time there is (OPS §1, Times), where no later poll can be;
    /// one due then would be due again at once, for ever. The job goes on, and its reports are
    /// applied as they come.
    func pollTime(after seconds: Double) -> Timestamp? {
        let at = ctx.now.adding(seconds: seconds)
        return seconds > 0 && ctx.now == Timestamp.latest ? nil : at
    }

    /// The provider reports the job's status.
    public func jobUpdated(_ wf: inout Workflow, runIndex r: Int, jobId: String, update: JobUpdate) throws(EngineError)
        -> EventOutcome
    {
        let run = wf.runs[r]
        if update.status != .queued && update.status != .running {
            ctx.settle(answerKey: AnswerKey.cancel(jobId))  // a cancel asked for is answered
            if run.nextCancelAt != nil || run.cancelFailures > 0 {
                // The job is over: a cancel waiting to go again has nothing left to stop.
                wf.runs[r].nextCancelAt = nil
                wf.runs[r].cancelFailures = 0
            }
        }
        guard let n = nodeIndex(wf, run.nodeId) else { return .ignored("unknown node") }
        guard !run.status.isTerminal else { return .ignored("the run is already \(run.status.rawValue)") }
        guard run.status.hasLiveJob || run.status == .submitting || run.status == .retryWait else {
            return .ignored("the run is \(run.status.rawValue)")
        }
        ctx.settle(answerKey: AnswerKey.poll(run.runId))
        let wasReconnecting = run.pollFailures > 0
        wf.runs[r].pollFailures = 0
        // Progress shown is monotonic within a run (a provider starting a new phase at 0.3 after
        // 0.6 does not move the bar back) and truthful (never more than the provider reported).
        if let p = update.progress { wf.runs[r].progress = max(wf.runs[r].progress ?? 0, min(max(p, 0), 1)) }
        if let lines = update.logTail { wf.runs[r].logTail = Executor.tail(lines) }
        // The provider's estimate holds until it gives another, and only while the job waits or runs.
        if let eta = update.etaSeconds, update.status == .queued || update.status == .running {
            wf.runs[r].estimatedEndAt = ctx.now.adding(seconds: eta)
        }
        switch update.status {
        case .queued:
            if wf.runs[r].status == .submitting || wf.runs[r].status == .retryWait { wf.runs[r].status = .submitted }
            // Put back in the provider's queue (a preempted or restarted worker): queued again,
            // with the job and its slot kept (DESIGN §5, queuedRemote "queued at the provider").
            if wf.runs[r].status == .running {
                wf.runs[r].status = .submitted
                if wf.nodes[n].state == .runningRemote { try setState(&wf, n, .queuedRemote) }
            }
            // Back from "Reconnecting…": the regular cadence again, not the backoff.
            if wf.runs[r].nextPollAt == nil || wasReconnecting { schedulePoll(&wf, runIndex: r) }
            if cardNews(wf, runIndex: r, before: run) { touch(&wf, node: n) }
            return .applied
        case .running:
            wf.runs[r].status = .running
            if wf.nodes[n].state == .queuedRemote { try setState(&wf, n, .runningRemote) }
            if wf.runs[r].nextPollAt == nil || wasReconnecting { schedulePoll(&wf, runIndex: r) }
            if cardNews(wf, runIndex: r, before: run) { touch(&wf, node: n) }
            return .applied
        case .failed:
            try fail(&wf, runIndex: r, error: update.error
                        ?? NodeError(code: "providerFailed", message: "The provider reported that the job failed."))
            try reconcile(&wf)
            return .applied
        case .cancelled:
            let error = NodeError(code: "providerCancelled", message: "The provider cancelled the job.")
            wf.runs[r].finish(.cancelled, at: ctx.now, error: error)
            wf.nodes[n].lastError = error
            try setState(&wf, n, .cancelled)
            try reconcile(&wf)
            return .applied
        case .succeeded:
            return try jobSucceeded(&wf, runIndex: r, n: n, outputs: update.outputs ?? [:])
        }
    }

    private func jobSucceeded(_ wf: inout Workflow, runIndex r: Int, n: Int, outputs: JSONObject) throws(EngineError)
        -> EventOutcome
    {
        let t = graph.nodes[n]
        // The job is over at the provider: a reply that breaks the tool's contract will not get
        // better with another poll, so the node fails and says why (it is never left running).
        var ready: [(port: String, draft: AssetDraft)] = []
        var downloads: [String: String] = [:]
        var problem: NodeError?
        for port in t.outputs where problem == nil {
            guard let value = outputs[port.name] else {
                problem = NodeError(code: "missingOutput",
                                    message: "The provider reported success without the '\(port.name)' output.",
                                    details: ["port": .string(port.name)])
                break
            }
            if case let .object(o) = value, o["url"] != nil, o["uri"] == nil {
                // A download: `{url}`, a non-empty string, and `x-` members at most (as a draft).
                let url = o["url"]?.stringValue ?? ""
                let stray = o.keys.sorted().first { $0 != "url" && !$0.hasPrefix("x-") }
                guard !url.isEmpty, stray == nil else {
                    let why = url.isEmpty ? "its url is not a non-empty string" : "it has a member '\(stray ?? "")'"
                    problem = NodeError(code: "providerContractMismatch",
                                        message: Redaction.redact("The provider's '\(port.name)' output is not a download: \(why)."),
                                        details: ["port": .string(port.name), "mismatch": "invalidDownload"])
                    break
                }
                downloads[port.name] = url
                continue
            }
            let draft: AssetDraft
            do {
                draft = try AssetDraft.decode(value, path: "outputs.\(port.name)")
            } catch {
                problem = NodeError(code: "providerContractMismatch",
                                    message: Redaction.redact("The provider's '\(port.name)' output is not an asset: \(error.message)"),
                                    details: ["port": .string(port.name), "mismatch": "invalidAsset"])
                break
            }
            if let type = draft.type, type != port.type {
                problem = NodeError(code: "providerContractMismatch",
                                    message: Redaction.redact("The provider returned \(type) for '\(port.name)', which takes \(port.type)."),
                                    details: ["port": .string(port.name), "mismatch": "type", "expected": .string(port.type),
                                              "got": .string(Redaction.redact(type))])
                break
            }
            ready.append((port.name, draft))
        }
        // Outputs the tool does not declare are left out, and flagged for operators.
        for extra in outputs.keys.sorted() where t.outputs.port(named: extra) == nil {
            ctx.warn("provider output ignored: the tool does not declare the port", ["runId": wf.runs[r].runId, "port": Redaction.redact(extra)])
        }
        if let problem {
            ctx.warn("provider reply breaks the tool contract", ["runId": wf.runs[r].runId, "code": problem.code,
                                                                "port": problem.details["port"]?.stringValue ?? ""])
            try fail(&wf, runIndex: r, error: problem)
            try reconcile(&wf)
            return .applied
        }
        wf.runs[r].holdsSlot = false
        wf.runs[r].nextPollAt = nil
        let registered = registerOutputs(wf, runIndex: r, ready)
        wf.runs[r].outputs = registered
        if downloads.isEmpty {
            try reconcile(&wf, changing: n) { (wf) throws(EngineError) in try succeed(&wf, runIndex: r, node: n, outputs: registered) }
            return .applied
        }
        wf.runs[r].status = .downloading
        wf.runs[r].estimatedEndAt = nil
        wf.runs[r].pendingDownloads = downloads
        try setState(&wf, n, .downloading)
        for port in downloads.keys.sorted() { emitDownload(wf, runIndex: r, port: port) }
        return .applied
    }

    func emitDownload(_ wf: Workflow, runIndex r: Int, port: String) {
        let run = wf.runs[r]
        guard let url = run.pendingDownloads[port] else { return }
        var body = effectBody(wf, run)
        body["port"] = .string(port)
        body["url"] = .string(url)
        if let jobId = run.jobId { body["jobId"] = .string(jobId) }
        ctx.emit(EffectType.remoteDownload, body, answerKey: AnswerKey.download(run.runId, port))
    }

    /// One output of run `r` has been fetched.
    public func downloaded(_ wf: inout Workflow, runIndex r: Int, port: String, draft: AssetDraft) throws(EngineError)
        -> EventOutcome
    {
        let run = wf.runs[r]
        try requireRemote(run)
        guard let n = nodeIndex(wf, run.nodeId), let expected = graph.nodes[n].outputs.port(named: port)?.type else {
            throw .notFound("unknownPort", "'\(run.nodeId)' has no output port '\(port)'",
                           details: ["port": .string(port), "runId": .string(run.runId)])
        }
        guard run.status == .downloading else { return .ignored("the run is \(run.status.rawValue), not downloading") }
        guard run.pendingDownloads[port] != nil else {
            if run.outputs[port] != nil { return .ignored("duplicate: '\(port)' was already downloaded") }
            throw .notFound("unknownPort", "run \(run.runId) has no download pending for port '\(port)'",
                           details: ["port": .string(port), "runId": .string(run.runId)])
        }
        if let type = draft.type, type != expected {
            // The provider's file is not what the tool declares; fetching it again will not
            // change that, so the node fails and says why (as for `job.update`).
            for pending in run.pendingDownloads.keys { ctx.settle(answerKey: AnswerKey.download(run.runId, pending)) }
            let problem = NodeError(code: "providerContractMismatch",
                                    message: Redaction.redact("The provider returned \(type) for '\(port)', which takes \(expected)."),
                                    details: ["port": .string(port), "mismatch": "type", "expected": .string(expected),
                                              "got": .string(Redaction.redact(type))])
            ctx.warn("provider reply breaks the tool contract", ["runId": run.runId, "code": problem.code, "port": port])
            try fail(&wf, runIndex: r, error: problem)
            try reconcile(&wf)
            return .applied
        }
        ctx.settle(answerKey: AnswerKey.download(run.runId, port))
        let ids = registerOutputs(wf, runIndex: r, [(port, draft)])
        wf.runs[r].pendingDownloads[port] = nil
        wf.runs[r].outputs[port] = ids[port]
        // Another port whose download a transport error put off keeps its retry (that time is the
        // only thing that will fetch it), and the run stays "Reconnecting…" until it comes.
        if wf.runs[r].pendingDownloads.isEmpty { wf.runs[r].nextDownloadAt = nil }
        if wf.runs[r].nextDownloadAt == nil { wf.runs[r].downloadFailures = 0 }
        // One of several downloads is no news on its card, unless it ends "Reconnecting…" (the
        // last one succeeds the node, which says so).
        if run.reconnecting != wf.runs[r].reconnecting { touch(&wf, node: nodeIndex(wf, run.nodeId)) }
        if wf.runs[r].pendingDownloads.isEmpty {
            try succeed(&wf, runIndex: r, outputs: wf.runs[r].outputs)
            try reconcile(&wf)
        }
        return .applied
    }

    /// A transport failure: while submitting, the submit retry policy applies; while polling,
    /// "Reconnecting…" with backoff, never giving up; while downloading, the download is retried,
    /// unless the answer was a 4xx other than 408 and 429 (the node fails `downloadFailed`).
    public func transportError(_ wf: inout Workflow, runIndex r: Int, error: TransportError) throws(EngineError)
        -> EventOutcome
    {
        let run = wf.runs[r]
        try requireRemote(run)
        if run.status.isTerminal, let jobId = run.jobId {
            return cancelFailed(&wf, runIndex: r, jobId: jobId, error: error)
        }
        guard !run.status.isTerminal else { return .ignored("the run is already \(run.status.rawValue)") }
        switch run.status {
        case .submitting:
            touch(&wf, node: nodeIndex(wf, run.nodeId))  // "Submitting…" is now "Retrying at …", or it fails
            ctx.settle(answerKey: AnswerKey.submit(run.runId))
            let failures = run.submitFailures + 1
            wf.runs[r].submitFailures = failures
            let decision = RetryPolicy.afterSubmitFailure(
                httpStatus: error.httpStatus, retryAfterSeconds: error.retryAfterSeconds, offline: error.offline,
                failures: failures, seed: ctx.settings.seed, runId: run.runId)
            switch decision {
            case let .retry(seconds):
                wf.runs[r].status = .retryWait
                wf.runs[r].nextAttemptAt = ctx.now.adding(seconds: seconds)
                // Operators see why a job is late: a warning with the reason and the wait.
                ctx.warn("submit failed; retrying", ["runId": run.runId, "attempt": "\(failures)",
                                                    "waitSeconds": "\(Int(seconds.rounded()))",
                                                    "reason": error.reason,
                                                    "httpStatus": error.httpStatus.map(String.init) ?? "none"])
            case let .fail(nodeError):
                try fail(&wf, runIndex: r, error: nodeError)
                try reconcile(&wf)
            }
            return .applied
        case .submitted, .running:
            ctx.settle(answerKey: AnswerKey.poll(run.runId))
            // A poll in flight when polling was paused: nothing goes out again until the person
            // resumes (which polls at once), so the job is not "Reconnecting…" meanwhile.
            guard !wf.pollingPaused else { return .applied }
            if !run.reconnecting { touch(&wf, node: nodeIndex(wf, run.nodeId)) }  // "Reconnecting…" starts
            let failures = run.pollFailures + 1
            wf.runs[r].pollFailures = failures
            let delay = RetryPolicy.reconnectDelay(failures: failures,
                                                   retryAfterSeconds: error.retryAfterSeconds, seed: ctx.settings.seed,
                                                   runId: run.runId)
            wf.runs[r].nextPollAt = pollTime(after: delay)
            return .applied
        case .downloading:
            if !run.reconnecting { touch(&wf, node: nodeIndex(wf, run.nodeId)) }  // "Reconnecting…" starts
            for port in run.pendingDownloads.keys { ctx.settle(answerKey: AnswerKey.download(run.runId, port)) }
            if let status = error.httpStatus, RetryPolicy.isPermanent(status) {
                // The file is gone or refused (an expired or revoked link): fetching it again
                // will not change that, so the node fails and says why, as a submit's 4xx does,
                // instead of "Reconnecting…" for ever. Retry runs the job again.
                let ports = run.pendingDownloads.keys.sorted()
                try fail(&wf, runIndex: r, error: NodeError(
                    code: "downloadFailed",
                    message: "The provider's output could not be downloaded (HTTP \(status)).",
                    hint: Executor.hint(forCode: "downloadFailed"),
                    details: ["httpStatus": JSON(status), "ports": JSON(ports)]))
                try reconcile(&wf)
                return .applied
            }
            let failures = run.downloadFailures + 1
            wf.runs[r].downloadFailures = failures
            let delay = RetryPolicy.reconnectDelay(failures: failures,
                                                   retryAfterSeconds: error.retryAfterSeconds, seed: ctx.settings.seed,
                                                   runId: run.runId + ":download")
            wf.runs[r].nextDownloadAt = ctx.now.adding(seconds: delay)
            return .applied
        default:
            return .ignored("the run is \(run.status.rawValue); nothing is in transit")
        }
    }

    /// A transport failure for the job of a run that ended: if the host was sending the job's
    /// `remote.cancel` (taken, not answered), that cancel did not reach the provider, and it goes
    /// again after the reconnect backoff (10 s doubling to 5 min, `Retry-After` first), until the
    /// provider reports the job final: only Cancel stops a job, and a job left running costs.
    /// Anything else about an ended run (a late poll's failure) changes nothing.
    func cancelFailed(_ wf: inout Workflow, runIndex r: Int, jobId: String, error: TransportError) -> EventOutcome {
        let run = wf.runs[r]
        let cancels = ctx.effects(answerKey: AnswerKey.cancel(jobId))
        guard cancels.contains(where: \.taken), !cancels.contains(where: { !$0.taken }) else {
            return .ignored("the run is already \(run.status.rawValue)")
        }
        ctx.settle(answerKey: AnswerKey.cancel(jobId))
        wf.runs[r].cancelFailures = run.cancelFailures + 1
        let delay = cancelDelay(wf.runs[r], retryAfterSeconds: error.retryAfterSeconds)
        wf.runs[r].nextCancelAt = ctx.now.adding(seconds: delay)
        wf.updatedAt = ctx.now
        ctx.warn("cancel did not reach the provider; sending it again", [
            "runId": run.runId, "jobId": jobId, "attempt": "\(run.cancelFailures + 1)", "waitSeconds": "\(Int(delay.rounded()))",
            "reason": error.reason,
        ])
        return .applied
    }

    /// The wait before a failed cancel goes again: the reconnect backoff after its failures.
    func cancelDelay(_ run: Run, retryAfterSeconds: Double?) -> Double {
        RetryPolicy.reconnectDelay(failures: max(1, run.cancelFailures),
                                   retryAfterSeconds: retryAfterSeconds, seed: ctx.settings.seed,
                                   runId: run.runId + ":cancel")
    }

    /// Sends now every cancel waiting to go again (a workflow being deleted: its runs' records,
    /// which hold the waits, are going).
    public func sendWaitingCancels(_ wf: inout Workflow) {
        for r in wf.runs.indices where wf.runs[r].nextCancelAt != nil { resendCancel(&wf, runIndex: r) }
    }

    /// Sends the job's `remote.cancel` again (``cancelFailed(_:runIndex:jobId:error:)``).
    func resendCancel(_ wf: inout Workflow, runIndex r: Int) {
        wf.runs[r].nextCancelAt = nil
        guard let jobId = wf.runs[r].jobId, ctx.effects(answerKey: AnswerKey.cancel(jobId)).isEmpty else { return }
        var body = effectBody(wf, wf.runs[r])
        body["jobId"] = .string(jobId)
        ctx.emit(EffectType.remoteCancel, body, answerKey: AnswerKey.cancel(jobId))
    }

    /// Polling paused or resumed for the workflow: pausing drops scheduled polls and polls on
    /// record, taken or not (jobs keep running remotely); resuming polls every live job at once,
    /// then on schedule.
    public func setPolling(_ wf: inout Workflow, paused: Bool) {
        guard wf.pollingPaused != paused else { return }
        wf.pollingPaused = paused
        wf.updatedAt = ctx.now
        for r in wf.runs.indices where wf.runs[r].hasLiveJob {
            // Its card now says "Status checks paused", or no longer does.
            if let n = nodeIndex(wf, wf.runs[r].nodeId), wf.nodes[n].currentRunId == wf.runs[r].runId { touch(&wf, node: n) }
            if paused {
                // Taken ones too: a poll in flight still has its answer applied, but is not
                // handed out again after a reopen while polling is paused.
                wf.runs[r].nextPollAt = nil
                ctx.settle(answerKey: AnswerKey.poll(wf.runs[r].runId))
                // No poll goes out, so none is failing: not "Reconnecting…" while paused; resuming
                // polls at once, and a failure then backs off from the start (10 s).
                wf.runs[r].pollFailures = 0
            } else {
                pollNow(&wf, runIndex: r)
            }
        }
    }
}
