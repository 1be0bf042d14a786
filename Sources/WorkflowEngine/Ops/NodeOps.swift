import WorkflowCore

extension Engine {
    static let nodeOps: [String: OpHandler] = [
        // node.get {workflowId, nodeId} → the node as workflow.get lists it.
        "node.get": OpHandler(mutates: false, args: ["workflowId", "nodeId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let wf = try uow.requireWorkflow(try args.string("workflowId"))
            let executor = try uow.executor(for: wf)
            return try executor.nodeJSON(wf, try nodeIndex(wf, executor, args))
        },

        // node.run {workflowId, nodeId} → {runId, state}. Not ready → WF_ESTATE notReady, details.missing.
        "node.run": OpHandler(mutates: true, args: ["workflowId", "nodeId"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let (workflowId, n, runId) = try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> (String, Int, String) in
                let n = try nodeIndex(wf, executor, args)
                return (wf.workflowId, n, try executor.run(&wf, n))
            }
            return try startedResult(engine, uow, workflowId, n, runId)
        },

        // node.rerunLatest {workflowId, nodeId} → {runId, state}: current edges and newest inputs.
        "node.rerunLatest": OpHandler(mutates: true, args: ["workflowId", "nodeId"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let (workflowId, n, runId) = try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> (String, Int, String) in
                let n = try nodeIndex(wf, executor, args)
                return (wf.workflowId, n, try executor.rerunLatest(&wf, n))
            }
            return try startedResult(engine, uow, workflowId, n, runId)
        },

        // node.retry {workflowId, nodeId} → {runId, state}: the previous run's frozen inputs and params.
        "node.retry": OpHandler(mutates: true, args: ["workflowId", "nodeId"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let (workflowId, n, runId) = try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> (String, Int, String) in
                let n = try nodeIndex(wf, executor, args)
                return (wf.workflowId, n, try executor.retry(&wf, n))
            }
            return try startedResult(engine, uow, workflowId, n, runId)
        },

        // node.cancel {workflowId, nodeId} → {state}: only Cancel stops a job (remote.cancel).
        "node.cancel": OpHandler(mutates: true, args: ["workflowId", "nodeId"]) { (_, uow, args) throws(EngineError) -> JSON in
            try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                try executor.cancel(&wf, n)
                try executor.reconcile(&wf)
                return ["nodeId": .string(wf.nodes[n].nodeId), "state": .string(wf.nodes[n].state.rawValue)]
            }
        },

        // node.setParams {workflowId, nodeId, params} → {params, overrides}: merged, persisted at once;
        // a null value removes a change.
        "node.setParams": OpHandler(mutates: true, args: ["workflowId", "nodeId", "params"]) { (_, uow, args) throws(EngineError) -> JSON in
            let params = try args.object("params")
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                executor.setParams(&wf, n, params)
                return paramsResult(wf, executor, n)
            }
        },

        // node.resetParams {workflowId, nodeId} → {params, overrides}: tool, provider and template defaults.
        "node.resetParams": OpHandler(mutates: true, args: ["workflowId", "nodeId"]) { (_, uow, args) throws(EngineError) -> JSON in
            try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                executor.resetParams(&wf, n)
                return paramsResult(wf, executor, n)
            }
        },

        // node.applyPreset {workflowId, nodeId, preset} → {params, overrides}: the template preset as a delta.
        "node.applyPreset": OpHandler(mutates: true, args: ["workflowId", "nodeId", "preset"]) { (_, uow, args) throws(EngineError) -> JSON in
            let preset = try args.string("preset")
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                try executor.applyPreset(&wf, n, name: preset)
                return paramsResult(wf, executor, n)
            }
        },

        // node.selectInput {workflowId, nodeId, port, assetId | null} → {node}: pins an input to a candidate.
        "node.selectInput": OpHandler(mutates: true, args: ["workflowId", "nodeId", "port", "assetId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let port = try args.string("port")
            let assetId = try args.optionalNonEmptyString("assetId")  // an id: never empty (null clears)
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                let before = wf.nodes[n].inputSelections[port]
                try executor.selectInput(&wf, n, port: port, assetId: assetId)
                // A selection dropped with no workflow deleted: the asset's retention period
                // (assets.gc) starts again now, as when a workflow referring to it is deleted,
                // so an asset selected for a while is never collected at once when let go.
                if let before, before != assetId, !wf.refers(to: before), var asset = try uow.asset(before) {
                    asset.orphanedAt = uow.now
                    uow.putAsset(asset)
                }
                return ["node": try executor.nodeJSON(wf, n)]
            }
        },

        // node.inputCandidates {workflowId, nodeId, port} → {candidates: [asset], selected}
        "node.inputCandidates": OpHandler(mutates: false, args: ["workflowId", "nodeId", "port"]) { (_, uow, args) throws(EngineError) -> JSON in
            let port = try args.string("port")
            let wf = try uow.requireWorkflow(try args.string("workflowId"))
            let executor = try uow.executor(for: wf)
            let n = try nodeIndex(wf, executor, args)
            guard executor.graph.nodes[n].inputs.port(named: port) != nil else {
                throw .notFound("unknownPort", "'\(wf.nodes[n].nodeId)' has no input port '\(port)'", details: ["port": .string(port)])
            }
            let assets = try executor.existingInputCandidates(wf, n, port: port).map(\.json)
            return ["candidates": .array(assets), "selected": JSON(wf.nodes[n].inputSelections[port])]
        },

        // node.selectOutput {workflowId, nodeId, port, assetId} → {node}: "Use for next step".
        "node.selectOutput": OpHandler(mutates: true, args: ["workflowId", "nodeId", "port", "assetId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let port = try args.string("port")
            let assetId = try args.string("assetId")
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let n = try nodeIndex(wf, executor, args)
                try executor.selectOutput(&wf, n, port: port, assetId: assetId)
                return ["node": try executor.nodeJSON(wf, n)]
            }
        },

        // node.history {workflowId, nodeId, limit?} → {runs}: newest first, with params diffs
        // against the current params.
        "node.history": OpHandler(mutates: false, args: ["workflowId", "nodeId", "limit"]) { (_, uow, args) throws(EngineError) -> JSON in
            let limit = Int(try args.optionalInt("limit", min: 1, max: 100_000) ?? 100_000)
            let wf = try uow.requireWorkflow(try args.string("workflowId"))
            let executor = try uow.executor(for: wf)
            let n = try nodeIndex(wf, executor, args)
            let current = executor.effectiveParams(wf, n)
            let runs = wf.runs(of: wf.nodes[n].nodeId).reversed().prefix(limit)
            return ["runs": .array(runs.map { executor.runJSON($0, currentParams: current) })]
        },
    ]

    /// `{runId, nodeId, state}` after the queues had their say, so `state` is where the node is
    /// when the call returns (a local run that got a slot is already `runningLocal`).
    static func startedResult(_ engine: Engine, _ uow: UnitOfWork, _ workflowId: String, _ n: Int, _ runId: String)
        throws(EngineError) -> JSON
    {
        try engine.settleTouched(uow)
        let node = try uow.requireWorkflow(workflowId).nodes[n]
        return ["runId": .string(runId), "nodeId": .string(node.nodeId), "state": .string(node.state.rawValue)]
    }

    static func paramsResult(_ wf: Workflow, _ executor: Executor, _ n: Int) -> JSON {
        ["nodeId": .string(wf.nodes[n].nodeId), "params": .object(executor.effectiveParams(wf, n)),
         "overrides": .object(wf.nodes[n].params)]
    }
}
