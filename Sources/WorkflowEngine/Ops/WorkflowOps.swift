import WorkflowCore
import WorkflowStore

extension Engine {
    static let workflowOps: [String: OpHandler] = [
        // workflow.create {templateId, title?, params?: {nodeId: {...}}, bindings?: {nodeId: {port: asset}}, autoRun?}
        // → {workflowId, status}. A binding is an asset {type, uri, …} or {assetId} of an existing one.
        "workflow.create": OpHandler(mutates: true, args: ["templateId", "title", "params", "bindings", "autoRun"]) { (_, uow, args) throws(EngineError) -> JSON in
            let t = try requireTemplate(uow, args)
            let graph = t.graph
            let params = try nodeParams(args, graph)
            let bindings = try nodeBindings(uow, args, graph)
            let seq = uow.nextNumber("wf")
            let id = "wf-\(seq)"
            let title = try args.optionalString("title").flatMap { $0.isEmpty ? nil : $0 } ?? t.template.name
            let executor = Executor(graph: graph, ctx: uow)
            var wf = try executor.newWorkflow(id: id, seq: seq, templateId: t.templateId, title: title, params: params,
                                              bindings: bindings)
            if try args.optionalBool("autoRun") == true {
                wf.autoRun = true
                try executor.reconcile(&wf)
            }
            uow.putWorkflow(wf)
            uow.log(.info, "workflow created", ["workflowId": "\(id)", "templateId": "\(t.templateId)"])
            return ["workflowId": .string(id), "status": .string(wf.status.rawValue)]
        },

        // workflow.get {workflowId} → the workflow with its nodes (graph order) and awaits.
        "workflow.get": OpHandler(mutates: false, args: ["workflowId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let wf = try uow.requireWorkflow(try args.string("workflowId"))
            return try uow.executor(for: wf).workflowJSON(wf)
        },

        // workflow.detail {workflowId} → {workflowId, title, status, stepsDone, stepsTotal, pollingPaused,
        // toolbar, cards}: the ToolCards in graph order (DESIGN §7), computed from persisted state.
        "workflow.detail": OpHandler(mutates: false, args: ["workflowId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let wf = try uow.requireWorkflow(try args.string("workflowId"))
            let executor = try uow.executor(for: wf)
            var cards: [JSON] = []
            cards.reserveCapacity(wf.nodes.count)
            let taints = executor.taints(wf)
            let produced = executor.producedAssetsByNode(wf)
            for n in executor.graph.order { cards.append(try executor.card(wf, n, taints: taints, produced: produced)) }
            return ["workflowId": .string(wf.workflowId), "title": .string(wf.title), "status": .string(wf.status.rawValue),
                    "stepsDone": JSON(wf.nodes.filter { $0.state == .succeeded || $0.state == .skipped }.count),
                    "stepsTotal": JSON(wf.nodes.count), "pollingPaused": .bool(wf.pollingPaused),
                    "updatedAt": JSON(wf.updatedAt), "toolbar": try executor.toolbar(wf), "cards": .array(cards)]
        },

        // workflow.list {search?, filter?: all|active|done|failed, sort?: recent|name, includeArchived?} → {rows}
        "workflow.list": OpHandler(mutates: false, args: ["search", "filter", "sort", "includeArchived", "limit"]) { (engine, uow, args) throws(EngineError) -> JSON in
            try listWorkflows(engine, uow, args)
        },

        // workflow.duplicate {workflowId, title?} → {workflowId}: same template, params and bindings; fresh state.
        "workflow.duplicate": OpHandler(mutates: true, args: ["workflowId", "title"]) { (_, uow, args) throws(EngineError) -> JSON in
            let source = try uow.requireWorkflow(try args.string("workflowId"))
            guard let t = uow.template(source.templateId) else { throw .internal("template of \(source.workflowId) missing") }
            let seq = uow.nextNumber("wf")
            let id = "wf-\(seq)"
            let title = try args.optionalString("title").flatMap { $0.isEmpty ? nil : $0 } ?? "\(source.title) (copy)"
            var params: [String: JSONObject] = [:]
            var bindings: [String: [String: String]] = [:]
            for node in source.nodes {
                if !node.params.isEmpty { params[node.nodeId] = node.params }
                if !node.bindings.isEmpty { bindings[node.nodeId] = node.bindings }
            }
            let wf = try Executor(graph: t.graph, ctx: uow).newWorkflow(
                id: id, seq: seq, templateId: t.templateId, title: title, params: params, bindings: bindings)
            uow.putWorkflow(wf)
            return ["workflowId": .string(id), "status": .string(wf.status.rawValue)]
        },

        // workflow.archive {workflowId, archived?: true} → {workflowId, status}. Archived workflows
        // leave the list (unless asked for); their work is not touched.
        "workflow.archive": OpHandler(mutates: true, args: ["workflowId", "archived"]) { (_, uow, args) throws(EngineError) -> JSON in
            let archived = try args.optionalBool("archived") ?? true
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                if wf.archived != archived {
                    wf.archived = archived
                    wf.updatedAt = uow.now
                    executor.refreshStatus(&wf)
                }
                return ["workflowId": .string(wf.workflowId), "status": .string(wf.status.rawValue)]
            }
        },

        // workflow.delete {workflowId} → {workflowId, deleted: true}: live jobs are cancelled, open
        // awaits withdrawn, and its assets become collectable.
        "workflow.delete": OpHandler(mutates: true, args: ["workflowId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let id = try args.string("workflowId")
            var wf = try uow.requireWorkflow(id)
            let executor = try uow.executor(for: wf)
            // Every remote run a submit went out for and no job id came back: the host may still
            // be sending it (a retry wait, a run cancelled meanwhile too), and a job the provider
            // accepts for it then is cancelled (job.submitted).
            var submitting = uow.submitsOfDeletedWorkflows
            for run in wf.runs where run.mode == .remote && run.jobId == nil && run.submitAttempts > 0 {
                submitting[run.runId] = ["workflowId": .string(id), "nodeId": .string(run.nodeId)]
            }
            for n in wf.nodes.indices {
                let run = wf.run(wf.nodes[n].currentRunId)
                if wf.nodes[n].state.isInFlight || (run.map { !$0.status.isTerminal } ?? false) {
                    try executor.cancel(&wf, n, because: NodeError(code: "workflowDeleted", message: "The workflow was deleted."))
                }
            }
            // A cancel waiting to go again (it did not reach the provider) goes now: its run's
            // record, which held the wait, is going.
            executor.sendWaitingCancels(&wf)
            for assetId in wf.referencedAssetIds.sorted() {
                guard var asset = try uow.asset(assetId) else { continue }
                asset.orphanedAt = uow.now
                uow.putAsset(asset)
            }
            if submitting != uow.submitsOfDeletedWorkflows { uow.setSubmitsOfDeletedWorkflows(submitting) }
            // Keep the effects the cancellation produced; drop everything else on record for it.
            uow.putWorkflow(wf)
            uow.deleteWorkflow(id)
            if uow.activeWorkflow == id { uow.setActiveWorkflow(nil) }
            uow.log(.info, "workflow deleted", ["workflowId": "\(id)"])
            return ["workflowId": .string(id), "deleted": true]
        },

        // workflow.runAllReady {workflowId} → {workflowId, started: [nodeId]}: starts every ready
        // node, and from now on nodes start by themselves as they become ready.
        "workflow.runAllReady": OpHandler(mutates: true, args: ["workflowId"]) { (_, uow, args) throws(EngineError) -> JSON in
            try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                let before = Set(wf.runs.map(\.runId))
                wf.autoRun = true
                wf.updatedAt = uow.now
                try executor.reconcile(&wf)
                let started = wf.runs.filter { !before.contains($0.runId) }.map(\.nodeId)
                return ["workflowId": .string(wf.workflowId), "started": JSON(started)]
            }
        },

        // workflow.setPolling {workflowId, paused} → {workflowId, pollingPaused}: pauses status
        // checks only; remote jobs keep running.
        "workflow.setPolling": OpHandler(mutates: true, args: ["workflowId", "paused"]) { (_, uow, args) throws(EngineError) -> JSON in
            let paused = try args.bool("paused")
            return try withWorkflow(uow, args) { (wf, executor) throws(EngineError) -> JSON in
                executor.setPolling(&wf, paused: paused)
                return ["workflowId": .string(wf.workflowId), "pollingPaused": .bool(wf.pollingPaused)]
            }
        },

        // workflow.setActive {workflowId | null} → {activeWorkflowId}: the workflow on screen is served first.
        "workflow.setActive": OpHandler(mutates: true, args: ["workflowId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let id = try args.optionalNonEmptyString("workflowId")
            if let id { _ = try uow.requireWorkflow(id) }
            uow.setActiveWorkflow(id)
            return ["activeWorkflowId": JSON(id)]
        },

        // scheduler.stats → {remote: {running, queued, cap}, local: {running, queued, cap}}
        "scheduler.stats": OpHandler(mutates: false, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            var o = JSONObject()
            for (name, c, cap) in [("remote", ResourceClass.remote, engine.config.remoteConcurrency),
                                   ("local", ResourceClass.local, engine.config.localConcurrency)] {
                o[name] = ["running": JSON(engine.scheduler.running(uow, c)), "queued": JSON(engine.scheduler.queued(uow, c)),
                           "cap": JSON(cap)]
            }
            o["online"] = .bool(uow.isOnline)
            o["activeWorkflowId"] = JSON(uow.activeWorkflow)
            return .object(o)
        },
    ]

    static func nodeParams(_ args: Args, _ graph: TemplateGraph) throws(EngineError) -> [String: JSONObject] {
        guard let given = try args.optionalObject("params") else { return [:] }
        var params: [String: JSONObject] = [:]
        for (nodeId, value) in given {
            guard graph.index[nodeId] != nil else {
                throw .notFound("unknownNode", "params.\(nodeId): the template has no node '\(nodeId)'",
                                details: ["nodeId": .string(nodeId), "argument": .string("params.\(nodeId)")])
            }
            if value.isNull { continue }
            guard case let .object(o) = value else {
                throw Args.wrong("params.\(nodeId)", "an object", value)
            }
            // As in `node.setParams`: a `null` value is no override, so the defaults show through.
            var overrides = o
            for (name, v) in o where v.isNull { overrides[name] = nil }
            if !overrides.isEmpty { params[nodeId] = overrides }
        }
        return params
    }

    /// Bindings: per node, per input port, a new asset `{type, uri, …}` or `{assetId}`.
    static func nodeBindings(_ uow: UnitOfWork, _ args: Args, _ graph: TemplateGraph) throws(EngineError)
        -> [String: [String: String]]
    {
        guard let given = try args.optionalObject("bindings") else { return [:] }
        var bindings: [String: [String: String]] = [:]
        for (nodeId, value) in given {
            guard let n = graph.index[nodeId] else {
                throw .notFound("unknownNode", "bindings.\(nodeId): the template has no node '\(nodeId)'",
                                details: ["nodeId": .string(nodeId), "argument": .string("bindings.\(nodeId)")])
            }
            if value.isNull { continue }
            guard case let .object(ports) = value else { throw Args.wrong("bindings.\(nodeId)", "an object", value) }
            for (port, assetJSON) in ports {
                let path = "bindings.\(nodeId).\(port)"
                guard let spec = graph.nodes[n].inputs.port(named: port) else {
                    throw .notFound("unknownPort", "\(path): '\(nodeId)' has no input port '\(port)'",
                                    details: ["nodeId": .string(nodeId), "port": .string(port), "argument": .string(path)])
                }
                if assetJSON.isNull { continue }  // no binding, as if the port were not named
                let asset = try resolveAsset(uow, assetJSON, path: path, expectedType: spec.type)
                bindings[nodeId, default: [:]][port] = asset.assetId
            }
        }
        return bindings
    }

    /// An existing asset `{assetId}`, or a new imported one `{type, uri, …}`, checked against a port type.
    static func resolveAsset(_ uow: UnitOfWork, _ json: JSON, path: String, expectedType: String?) throws(EngineError)
        -> Asset
    {
        if case let .object(o) = json, o.count == 1, case let .string(id)? = o["assetId"] {
            guard let asset = try uow.asset(id) else {
                throw .notFound("unknownAsset", "\(path): no asset '\(id)'", details: ["assetId": .string(id), "argument": .string(path)])
            }
            if let expectedType, asset.type != expectedType {
                throw .invalid("portTypeMismatch", "\(path): asset \(id) is \(asset.type) but the port expects \(expectedType)",
                               details: ["argument": .string(path), "expected": .string(expectedType), "got": .string(asset.type)])
            }
            return asset
        }
        let draft = try AssetDraft.decode(json, path: path)
        let type = draft.type ?? expectedType
        guard let type else {
            let field = path.isEmpty ? "type" : "\(path).type"
            throw .invalid("invalidAsset", "\(field) is required", details: ["argument": .string(field)])
        }
        if let expectedType, type != expectedType {
            throw .invalid("portTypeMismatch", "\(path): asset is \(type) but the port expects \(expectedType)",
                           details: ["argument": .string(path), "expected": .string(expectedType), "got": .string(type)])
        }
        let (meta, defaulted) = draft.versionedMeta()
        let asset = Asset(assetId: uow.newId("as"), type: type, uri: draft.uri, bytes: draft.bytes, hash: draft.hash,
                          meta: meta, createdAt: uow.now)
        if defaulted {
            uow.warn("asset metadata has no providerSchema; stored as v1", ["assetId": asset.assetId])
        }
        uow.putAsset(asset)
        return asset
    }
}
