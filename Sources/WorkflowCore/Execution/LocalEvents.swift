extension Executor {
    /// A local tool finished run `r`, with outputs (checked against the node's output ports) or
    /// an error. A report for a run that is no longer running (cancelled, interrupted) is ignored.
    public func localCompleted(_ wf: inout Workflow, runIndex r: Int, outputs: JSONObject?, error: NodeError?)
        throws(EngineError) -> EventOutcome
    {
        // The run's fields are read in place: a binding would copy the whole record.
        guard wf.runs[r].mode == .local else {
            throw .invalid("notLocal", "run \(wf.runs[r].runId) is a \(wf.runs[r].mode.rawValue) run, not a local one",
                           details: ["runId": .string(wf.runs[r].runId)])
        }
        guard wf.runs[r].status == .running else { return .ignored("the run is \(wf.runs[r].status.rawValue), not running") }
        let runId = wf.runs[r].runId
        let n = nodeIndex(wf, wf.runs[r].nodeId)!
        if let error {
            ctx.settle(answerKey: AnswerKey.local(runId))
            try fail(&wf, runIndex: r, error: error)
            try reconcile(&wf)
            return .applied
        }
        let t = graph.info[n]
        let given = outputs ?? [:]
        var drafts: [(port: String, draft: AssetDraft)] = []
        for port in t.outputs {
            guard let value = given[port.name] else {
                throw .invalid("missingOutput", "outputs.\(port.name) is required: '\(t.id)' declares an output '\(port.name)' (\(port.type))",
                               details: ["port": .string(port.name), "argument": .string("outputs.\(port.name)")])
            }
            let draft = try AssetDraft.decode(value, path: "outputs.\(port.name)")
            if let type = draft.type, type != port.type {
                throw .invalid("resultTypeMismatch",
                               "outputs.\(port.name) is \(type) but '\(t.id)'.\(port.name) is \(port.type)",
                               details: ["port": .string(port.name), "expected": .string(port.type), "got": .string(type)])
            }
            drafts.append((port.name, draft))
        }
        for member in given.members where t.outputs.port(named: member.key) == nil {
            let key = member.key
            throw .notFound("unknownPort", "outputs.\(key): '\(t.id)' has no output port '\(key)'",
                           details: ["port": .string(key), "argument": .string("outputs.\(key)")])
        }
        ctx.settle(answerKey: AnswerKey.local(runId))
        let ids = registerOutputs(wf, runIndex: r, drafts)
        try reconcile(&wf, changing: n) { (wf) throws(EngineError) in try succeed(&wf, runIndex: r, node: n, outputs: ids) }
        return .applied
    }

    /// On reopen, a local run that was running when the process died never silently succeeds:
    /// it fails as interrupted, with Retry offered. The error policy does not apply.
    public func interruptLocalRuns(_ wf: inout Workflow) throws(EngineError) -> Int {
        var count = 0
        for r in wf.runs.indices where wf.runs[r].mode == .local && wf.runs[r].status == .running {
            ctx.settle(answerKey: AnswerKey.local(wf.runs[r].runId))
            try fail(&wf, runIndex: r, error: .interrupted, applyPolicy: false)
            count += 1
        }
        if count > 0 { try reconcile(&wf) }
        return count
    }
}
