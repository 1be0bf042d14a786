/// What a person (or a host) asks of a node: Run, Retry (same inputs), Re-run with latest,
/// parameter edits, input and output selection.
extension Executor {
    /// Run: a ready node starts; a node with a result (or blocked because an input changed) runs
    /// again with its latest inputs. Not ready → `WF_ESTATE notReady` listing the missing ports.
    public func run(_ wf: inout Workflow, _ n: Int) throws(EngineError) -> String {
        try refuseIfBusy("run", wf, n)
        return try rerunLatest(&wf, n, verb: "run")
    }

    /// Re-run with latest: current edges and the newest upstream assets, current params.
    public func rerunLatest(_ wf: inout Workflow, _ n: Int, verb: String = "re-run") throws(EngineError) -> String {
        let node = wf.nodes[n]
        try refuseIfBusy(verb, wf, n)
        switch try gate(wf, n, ignoreNetwork: resourceClass(of: n) != .remote) {
        case let .blocked(reason, missing, _):
            var details: JSONObject = ["nodeId": .string(node.nodeId), "missing": JSON(missing),
                                       "reason": reason.json]
            details["state"] = .string(node.state.rawValue)
            throw .state("notReady", "'\(node.nodeId)' is not ready: \(reason.message)", details: details)
        case let .ready(inputs):
            let runId = try startRun(&wf, n, trigger: .run, inputs: inputs, params: effectiveParams(wf, n))
            try reconcile(&wf)
            return runId
        }
    }

    /// Retry (same inputs): the previous run's frozen input assets and params. If one of those
    /// assets was deleted the retry never starts (`inputAssetGone`).
    public func retry(_ wf: inout Workflow, _ n: Int) throws(EngineError) -> String {
        let node = wf.nodes[n]
        try refuseIfBusy("retry", wf, n)
        guard let previous = lastRunWithInputs(wf, n) else {
            throw .state("noPreviousRun", "'\(node.nodeId)' has not run yet; use Run", details: ["nodeId": .string(node.nodeId)])
        }
        for port in previous.inputs.keys.sorted() {
            let id = previous.inputs[port]!
            if try ctx.asset(id) == nil {
                throw .state("inputAssetGone", "cannot retry: the \(port) input (\(id)) of the previous run was deleted; use Re-run with latest",
                             details: ["nodeId": .string(node.nodeId), "port": .string(port), "assetId": .string(id)])
            }
        }
        if resourceClass(of: n) == .remote, !graph.nodes[n].isInteractive, !ctx.isOnline {
            throw .state("offline", "cannot retry a remote step while offline", details: ["nodeId": .string(node.nodeId)])
        }
        let runId = try startRun(&wf, n, trigger: .retry, inputs: previous.inputs, params: previous.params)
        try reconcile(&wf)
        return runId
    }

    /// The node's last run that actually used inputs (not an interactive confirmation that
    /// preceded a tool run).
    func lastRunWithInputs(_ wf: Workflow, _ n: Int) -> Run? {
        let id = wf.nodes[n].nodeId
        return wf.runs.last { $0.nodeId == id && $0.status.isTerminal }
    }

    /// A run waiting for a slot.
    func isQueued(_ wf: Workflow, _ n: Int) -> Bool {
        guard let run = wf.run(wf.nodes[n].currentRunId) else { return false }
        return !run.status.isTerminal
    }

    /// Refuses a run-starting command (`verb`) while work is in flight for node `n`, or its run
    /// waits in the local queue: the node then reads `ready`, and "cannot run when state is
    /// ready" alone would contradict itself, so the message says why (`details.queued`).
    func refuseIfBusy(_ verb: String, _ wf: Workflow, _ n: Int) throws(EngineError) {
        let node = wf.nodes[n]
        if node.state.isInFlight { throw Executor.notAllowed(verb, node) }
        guard isQueued(wf, n) else { return }
        throw .state("invalidState",
                     "cannot \(verb) when state is \(node.state.rawValue) (a run is already queued for a local slot)",
                     details: ["nodeId": .string(node.nodeId), "state": .string(node.state.rawValue), "queued": true])
    }

    // MARK: Params

    /// Merges `params` into the person's changes (persisted at once). `null` values remove a change.
    public func setParams(_ wf: inout Workflow, _ n: Int, _ params: JSONObject) {
        var merged = wf.nodes[n].params
        for (k, v) in params {
            if v.isNull { merged[k] = nil } else { merged[k] = v }
        }
        wf.nodes[n].params = merged
        wf.nodes[n].updatedAt = ctx.now
        wf.updatedAt = ctx.now
    }

    /// Back to the defaults: the tool's, the provider's and the template's.
    public func resetParams(_ wf: inout Workflow, _ n: Int) {
        wf.nodes[n].params = [:]
        wf.nodes[n].updatedAt = ctx.now
        wf.updatedAt = ctx.now
    }

    /// Applies a template preset as a delta over the current params.
    public func applyPreset(_ wf: inout Workflow, _ n: Int, name: String) throws(EngineError) {
        guard let preset = graph.nodes[n].presets.first(where: { $0.name == name }) else {
            throw .notFound("unknownPreset", "'\(graph.nodes[n].id)' has no preset '\(name)'",
                            details: ["preset": .string(name), "presets": JSON(graph.nodes[n].presets.map(\.name))])
        }
        setParams(&wf, n, preset.params)
    }

    // MARK: Selection

    /// The assets a node produced on `port` in runs that succeeded, newest first (a remote run
    /// cancelled or failed while its other outputs downloaded made nothing to use).
    public func producedAssets(_ wf: Workflow, _ n: Int, port: String) -> [String] {
        producedAssetsByNode(wf)[wf.nodes[n].nodeId]?[port] ?? []
    }

    /// What every node of `wf` produced, per output port, in runs that succeeded, newest first,
    /// each asset once, read in one pass over the runs (a workflow's cards ask it of every input
    /// port: build it once and pass it on).
    public func producedAssetsByNode(_ wf: Workflow) -> [String: [String: [String]]] {
        var out: [String: [String: [String]]] = [:]
        var seen = Set<String>()  // node id, port and asset id, each ended by a NUL (never in one)
        for run in wf.runs.reversed() where run.status == .succeeded {
            for (port, asset) in run.outputs where seen.insert("\(run.nodeId)\0\(port)\0\(asset)").inserted {
                out[run.nodeId, default: [:]][port, default: []].append(asset)
            }
        }
        return out
    }

    /// Candidates for an input port: what its producer made on the feeding port (newest first),
    /// the asset bound at creation, and the asset selected now if it is none of those. `produced`
    /// is ``producedAssetsByNode(_:)`` when the caller has it.
    public func inputCandidates(_ wf: Workflow, _ n: Int, port: String,
                                produced: [String: [String: [String]]]? = nil) -> [String] {
        var out: [String] = []
        if let producer = graph.producers[n][port] {
            out = (produced ?? producedAssetsByNode(wf))[wf.nodes[producer.node].nodeId]?[producer.port] ?? []
        }
        if let bound = wf.nodes[n].bindings[port], !out.contains(bound) { out.append(bound) }
        if let selected = wf.nodes[n].inputSelections[port], !out.contains(selected) { out.append(selected) }
        return out
    }

    /// The ``inputCandidates(_:_:port:produced:)`` that still exist (one deleted since is no
    /// choice): what `node.inputCandidates` lists and a card's Inputs panel counts.
    public func existingInputCandidates(_ wf: Workflow, _ n: Int, port: String,
                                        produced: [String: [String: [String]]]? = nil) throws(EngineError) -> [Asset] {
        var out: [Asset] = []
        for id in inputCandidates(wf, n, port: port, produced: produced) {
            if let asset = try ctx.asset(id) { out.append(asset) }
        }
        return out
    }

    /// "Select Input" and "Replace input…": pins an input port to an asset instead of the
    /// producer's current output or the asset bound at creation (nil returns to those). The
    /// candidates are what a shell offers; any existing asset of the port's type is accepted, so
    /// a person can bind a port nothing produces, replace a bound asset that is gone, or go on
    /// past an upstream that failed (seed 000 §8, DESIGN §5 "the node waits for a binding").
    public func selectInput(_ wf: inout Workflow, _ n: Int, port: String, assetId: String?) throws(EngineError) {
        let t = graph.nodes[n]
        guard let spec = t.inputs.port(named: port) else {
            throw .notFound("unknownPort", "'\(t.id)' has no input port '\(port)'", details: ["port": .string(port)])
        }
        if let assetId {
            guard let type = try ctx.assetType(assetId) else {
                throw .notFound("unknownAsset", "no asset '\(assetId)'",
                                details: ["assetId": .string(assetId), "port": .string(port),
                                          "candidates": JSON(inputCandidates(wf, n, port: port))])
            }
            guard type == spec.type else {
                throw .invalid("portTypeMismatch", "asset \(assetId) is \(type) but '\(t.id)'.\(port) expects \(spec.type)",
                               details: ["assetId": .string(assetId), "port": .string(port),
                                         "expected": .string(spec.type), "got": .string(type)])
            }
        }
        wf.nodes[n].inputSelections[port] = assetId
        wf.nodes[n].updatedAt = ctx.now
        wf.updatedAt = ctx.now
        try reconcile(&wf)
    }

    /// "Use for next step": makes one of the node's earlier outputs on `port` the current one;
    /// consumers that used another become `inputChanged`. On a failed node the run that made the
    /// asset becomes the node's result again (`succeeded`, or `inputChanged` if its inputs
    /// have been replaced since), so its consumers can go on with it.
    public func selectOutput(_ wf: inout Workflow, _ n: Int, port: String, assetId: String) throws(EngineError) {
        let t = graph.nodes[n]
        guard t.outputs.port(named: port) != nil else {
            throw .notFound("unknownPort", "'\(t.id)' has no output port '\(port)'", details: ["port": .string(port)])
        }
        let produced = producedAssets(wf, n, port: port)
        guard produced.contains(assetId) else {
            throw .invalid("notACandidate", "\(assetId) was not produced by '\(t.id)'.\(port)",
                           details: ["port": .string(port), "candidates": JSON(produced)])
        }
        guard wf.nodes[n].state == .succeeded || wf.nodes[n].state == .blocked || wf.nodes[n].state == .failed else {
            throw Executor.notAllowed("select an output", wf.nodes[n])
        }
        guard try ctx.asset(assetId) != nil else {
            throw .notFound("unknownAsset", "asset \(assetId) no longer exists", details: ["assetId": .string(assetId)])
        }
        if wf.nodes[n].state == .failed,
           let made = wf.runs.lastIndex(where: { $0.nodeId == t.id && $0.status == .succeeded && $0.outputs[port] == assetId })
        {
            wf.nodes[n].currentRunId = wf.runs[made].runId
            wf.nodes[n].outputs = wf.runs[made].outputs
            wf.nodes[n].lastError = nil
            try setState(&wf, n, .succeeded)
        }
        wf.nodes[n].outputs[port] = assetId
        wf.nodes[n].updatedAt = ctx.now
        wf.updatedAt = ctx.now
        try reconcile(&wf)
    }
}
