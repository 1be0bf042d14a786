import WorkflowCore

extension Engine {
    static let eventOps: [String: OpHandler] = [
        // effects.take {max?} → {effects, remaining}: pending effects, oldest first.
        "effects.take": OpHandler(mutates: true, args: ["max"]) { (_, uow, args) throws(EngineError) -> JSON in
            let max = Int(try args.optionalInt("max", min: 1, max: 1_000_000) ?? 1_000_000)
            let effects = uow.take(max: max)
            return ["effects": .array(effects.map { .object($0.body) }), "remaining": JSON(uow.pendingEffectCount)]
        },

        // job.submitted {runId, jobId} → {applied, runId, nodeId, state}
        "job.submitted": OpHandler(mutates: true, args: ["runId", "jobId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let runId = try args.string("runId")
            let jobId = try args.string("jobId")
            if case var deleted? = uow.submitsOfDeletedWorkflows[runId]?.objectValue, try uow.run(forJob: jobId) == nil {
                // The provider accepted a job for a run whose workflow was deleted while the host
                // was submitting it: nobody wants it, and it would run (and cost) for nothing. The
                // run stays remembered: a submit retried after a timeout can bring a second job,
                // cancelled the same way; a job reported again is cancelled once.
                let cancelled = deleted["jobs"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if !cancelled.contains(jobId) {
                    deleted["jobs"] = JSON(Array((cancelled + [jobId]).suffix(UnitOfWork.maxJobsOfADeletedSubmit)))
                    var runs = uow.submitsOfDeletedWorkflows
                    runs[runId] = .object(deleted)
                    uow.setSubmitsOfDeletedWorkflows(runs)
                    uow.emit(EffectType.remoteCancel, ["workflowId": deleted["workflowId"] ?? .null,
                                                       "nodeId": deleted["nodeId"] ?? .null, "runId": .string(runId),
                                                       "jobId": .string(jobId)], answerKey: AnswerKey.cancel(jobId))
                }
                return ["applied": false, "ignored": "the run's workflow was deleted; the job is cancelled",
                        "runId": .string(runId), "jobId": .string(jobId)]
            }
            return try withRun(uow, runId: runId) { (wf, executor, r) throws(EngineError) -> JSON in
                if let other = try uow.run(forJob: jobId), other.runId != runId {
                    throw .conflict("duplicateJobId", "job \(jobId) already belongs to run \(other.runId)",
                                    details: ["jobId": .string(jobId), "runId": .string(other.runId)])
                }
                let outcome = try executor.jobSubmitted(&wf, runIndex: r, jobId: jobId)
                return eventResult(outcome, wf, r, executor)
            }
        },

        // job.update {jobId, status, progress?, etaSeconds?, logTail?, outputs?, error?} → {applied, runId, nodeId, state}
        "job.update": OpHandler(mutates: true, args: ["jobId", "status", "progress", "etaSeconds", "logTail", "outputs", "error"],
                                freeTexts: ["logTail", "error"]) { (_, uow, args) throws(EngineError) -> JSON in
            let jobId = try args.string("jobId")
            let update = try jobUpdate(args)
            guard let (runId, _) = try uow.run(forJob: jobId) else {
                // A job the engine is cancelling that no run holds (a duplicate, a deleted
                // workflow's): its final status answers the cancel, on record or waiting to go again.
                let cancels = uow.effects(answerKey: AnswerKey.cancel(jobId))
                if !cancels.isEmpty || uow.jobsToCancel[jobId] != nil {
                    if update.status != .queued && update.status != .running {
                        uow.settle(answerKey: AnswerKey.cancel(jobId))
                        _ = jobEnded(uow, jobId: jobId)
                    }
                    return ["applied": false, "ignored": "a job the engine asked the provider to cancel", "jobId": .string(jobId)]
                }
                throw .notFound("unknownJob", "no run has job '\(jobId)'", details: ["jobId": .string(jobId)])
            }
            return try withRun(uow, runId: runId) { (wf, executor, r) throws(EngineError) -> JSON in
                eventResult(try executor.jobUpdated(&wf, runIndex: r, jobId: jobId, update: update), wf, r, executor)
            }
        },

        // job.transportError {runId | jobId, httpStatus?, retryAfterSeconds?, offline?} → {applied, …}
        "job.transportError": OpHandler(mutates: true, args: ["runId", "jobId", "httpStatus", "retryAfterSeconds", "offline"]) { (_, uow, args) throws(EngineError) -> JSON in
            let error = TransportError(
                httpStatus: try args.optionalInt("httpStatus", min: 100, max: 599).map { Int($0) },
                retryAfterSeconds: try args.optionalSeconds("retryAfterSeconds", min: 0, max: 86_400 * 7),
                offline: try args.optionalBool("offline") ?? false)
            let givenRun = try args.optionalNonEmptyString("runId")
            let givenJob = try args.optionalNonEmptyString("jobId")
            let runId: String
            if let jobId = givenJob {
                // About that job: its run's, or one the engine is cancelling that no run holds
                // (a duplicate, a deleted workflow's), whose cancel then goes again.
                if let found = try uow.run(forJob: jobId) {
                    if let givenRun, givenRun != found.runId {
                        throw .invalid("jobMismatch", "job '\(jobId)' is run \(found.runId)'s, not run \(givenRun)'s",
                                       details: ["jobId": .string(jobId), "runId": .string(found.runId)])
                    }
                    runId = found.runId
                } else if let outcome = jobCancelFailed(uow, jobId: jobId, error: error) {
                    return outcome
                } else if let givenRun {
                    throw .invalid("jobMismatch", "no run has job '\(jobId)', so it is not run \(givenRun)'s",
                                   details: ["jobId": .string(jobId), "runId": .string(givenRun)])
                } else {
                    throw .notFound("unknownJob", "no run has job '\(jobId)'", details: ["jobId": .string(jobId)])
                }
            } else if let givenRun {
                runId = givenRun
            } else {
                throw .invalid("missingArgument", "runId or jobId is required", details: ["argument": "runId"])
            }
            return try withRun(uow, runId: runId) { (wf, executor, r) throws(EngineError) -> JSON in
                eventResult(try executor.transportError(&wf, runIndex: r, error: error), wf, r, executor)
            }
        },

        // job.downloaded {runId, port, asset: {type?, uri, bytes?, hash?, meta?}} → {applied, assetId?, …}
        "job.downloaded": OpHandler(mutates: true, args: ["runId", "port", "asset"]) { (_, uow, args) throws(EngineError) -> JSON in
            let runId = try args.string("runId")
            let port = try args.string("port")
            let draft = try AssetDraft.decode(try args.value("asset"), path: "asset")
            return try withRun(uow, runId: runId) { (wf, executor, r) throws(EngineError) -> JSON in
                eventResult(try executor.downloaded(&wf, runIndex: r, port: port, draft: draft), wf, r, executor)
            }
        },

        // local.completed {runId, outputs | error} → {applied, …}
        "local.completed": OpHandler(mutates: true, args: ["runId", "outputs", "error"], freeTexts: ["error"]) { (_, uow, args) throws(EngineError) -> JSON in
            let runId = try args.string("runId")
            let outputs = try args.optionalObject("outputs")
            let error = try nodeError(args, default: "toolFailed")
            if outputs != nil, error != nil {
                throw .invalid("invalidArgument", "give outputs or error, not both", details: ["argument": "error"])
            }
            return try withRun(uow, runId: runId) { (wf, executor, r) throws(EngineError) -> JSON in
                eventResult(try executor.localCompleted(&wf, runIndex: r, outputs: outputs, error: error), wf, r, executor)
            }
        },

        // network.set {online} → {online}: offline holds remote work ("Offline"), local goes on;
        // back online, remote work resumes by itself.
        "network.set": OpHandler(mutates: true, args: ["online"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let online = try args.bool("online")
            guard online != uow.isOnline else { return ["online": .bool(online), "changed": false] }
            uow.setOnline(online)
            // Templates with a remote node: fixed so, or taking the class of a tool now remote.
            try engine.reconcileActive(uow) { graph in
                graph.info.contains { $0.resourceClass == .remote || (!$0.classFixed && uow.toolClass($0.kind) == .remote) }
            }
            if online {
                // Held while offline: due submit retries and downloads go now, and polls skipped
                // while offline ask for every live job's status — in every workflow with a run in
                // flight, whatever its status (an archived one's jobs go on too).
                var ids = Set(uow.touchedWorkflowIds)
                ids.formUnion(uow.state.activeRuns.values)
                var workflows: [Workflow] = []
                for id in ids {
                    if let wf = try uow.workflow(id) { workflows.append(wf) }
                }
                for var wf in workflows.sorted(by: { $0.seq < $1.seq }) {
                    if try uow.executor(for: wf).resumeOnline(&wf) { uow.putWorkflow(wf) }
                }
                resumeJobCancels(uow)
            }
            uow.log(.notice, "network changed", ["online": "\(online)"])
            return ["online": .bool(online), "changed": true]
        },
    ]

    static func eventResult(_ outcome: EventOutcome, _ wf: Workflow, _ r: Int, _ executor: Executor) -> JSON {
        var o = JSONObject(minimumCapacity: 6)
        switch outcome {
        case .applied:
            o.append(uniqueKey: "applied", true)
        case let .ignored(reason):
            o.append(uniqueKey: "applied", false)
            o.append(uniqueKey: "ignored", .string(reason))
        }
        // The run's fields read in place (a binding would copy the record).
        o.append(uniqueKey: "runId", .string(wf.runs[r].runId))
        o.append(uniqueKey: "nodeId", .string(wf.runs[r].nodeId))
        o.append(uniqueKey: "runStatus", .string(wf.runs[r].status.rawValue))
        if let n = executor.nodeIndex(wf, wf.runs[r].nodeId) { o.append(uniqueKey: "state", .string(wf.nodes[n].state.rawValue)) }
        return .object(o)
    }

    static func jobUpdate(_ args: Args) throws(EngineError) -> JobUpdate {
        let statusText = try args.string("status")
        guard let status = JobUpdate.Status(rawValue: statusText) else {
            throw .invalid("invalidArgument",
                           "status must be one of \(JobUpdate.Status.allCases.map(\.rawValue).joined(separator: ", ")), not '\(statusText)'",
                           details: ["argument": "status", "allowed": JSON(JobUpdate.Status.allCases.map(\.rawValue))])
        }
        var progress: Double?
        if let p = args["progress"] {
            guard let d = p.doubleValue else { throw Args.wrong("progress", "a number from 0 to 1", p) }
            guard d.isFinite, d >= 0, d <= 1 else {
                throw .invalid("invalidArgument", "progress must be a number from 0 to 1 (a fraction, not a percentage), not \(d)",
                               details: ["argument": "progress", "expected": "a number from 0 to 1"])
            }
            progress = d
        }
        var logTail: [String]?
        if let l = args["logTail"] {
            switch l {
            case let .string(s):
                // Lines end at `\n`, `\r\n` or `\r` (`Character.isNewline`: `\r\n` is one
                // character in Swift, which splitting at "\n" never finds); a final newline ends
                // the last line rather than opening an empty one, and no text is no lines.
                var lines = s.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
                if s.last?.isNewline ?? true { lines.removeLast() }
                logTail = lines
            case let .array(items):
                var lines: [String] = []
                for item in items {
                    guard case let .string(s) = item else { throw Args.wrong("logTail", "a string or an array of strings", l) }
                    lines.append(s)
                }
                logTail = lines
            default: throw Args.wrong("logTail", "a string or an array of strings", l)
            }
        }
        return JobUpdate(status: status, progress: progress,
                         etaSeconds: try args.optionalSeconds("etaSeconds", min: 0, max: 366 * 86_400),
                         logTail: logTail, outputs: try args.optionalObject("outputs"),
                         error: try nodeError(args, default: "providerFailed"))
    }

    /// `error: {code?, message?, hint?}` (or a string message), if given.
    static func nodeError(_ args: Args, default code: String) throws(EngineError) -> NodeError? {
        guard let e = args["error"] else { return nil }
        switch e {
        case let .string(message):
            return NodeError(code: code, message: Redaction.redact(message))
        case let .object(o):
            // Each field its type, or absent (null counts as absent); nothing else but `x-` fields.
            func field(_ key: String, _ expected: String, _ value: (JSON) -> Any?) throws(EngineError) {
                guard let v = o[key], !v.isNull else { return }
                guard value(v) != nil else { throw Args.wrong("error.\(key)", expected, v) }
            }
            try field("code", "a non-empty string") { $0.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
            try field("message", "a string") { $0.stringValue }
            try field("hint", "a string") { $0.stringValue }
            try field("details", "an object") { $0.objectValue }
            if let unknown = o.keys.first(where: { !["code", "message", "hint", "details"].contains($0) && !$0.hasPrefix("x-") }) {
                throw .invalid("invalidArgument", "error.\(unknown) is not a field of an error (code, message, hint, details)",
                               details: ["argument": .string("error.\(unknown)")])
            }
            let c = o["code"]?.stringValue ?? code
            let message = o["message"]?.stringValue ?? "The job failed (\(c))."
            return NodeError(code: c, message: Redaction.redact(message), hint: o["hint"]?.stringValue.map(Redaction.redact),
                             details: Redaction.redactStrings(o["details"]?.objectValue ?? [:]))
        default:
            throw Args.wrong("error", "an object {code, message}", e)
        }
    }
}
