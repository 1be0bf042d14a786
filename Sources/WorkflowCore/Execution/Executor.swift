/// The execution rules for one workflow: gating, the node state machine, runs and their
/// lifecycle, invalidation, cancellation and the error policies. Sans-IO: everything outside
/// the workflow comes through ``RulesContext``; nothing here reads a clock or does I/O.
public struct Executor {
    public let graph: TemplateGraph
    public let ctx: RulesContext

    public init(graph: TemplateGraph, ctx: RulesContext) {
        self.graph = graph
        self.ctx = ctx
    }

    var template: Template { graph.template }

    /// The position of node `nodeId` in `wf`: nodes are in template order, so the template's
    /// index finds it without reading every node (a scan remains the fallback).
    /// An id names a node only with the same bytes: another spelling of the same text (the Kelvin
    /// sign for `K`) names none, as in templates.
    public func nodeIndex(_ wf: Workflow, _ nodeId: String) -> Int? {
        if let n = graph.index[nodeId], n < wf.nodes.count, wf.nodes[n].nodeId.hasSameBytes(as: nodeId) { return n }
        return wf.nodeIndex(nodeId)
    }

    // MARK: Creating

    /// A new workflow of `graph`'s template: person-set params and bound assets per node, every
    /// node gated.
    public func newWorkflow(id: String, seq: Int64, templateId: String, title: String,
                            params: [String: JSONObject], bindings: [String: [String: String]]) throws(EngineError)
        -> Workflow
    {
        let nodes = graph.nodes.map { t in
            NodeInstance(nodeId: t.id, params: params[t.id] ?? [:], bindings: bindings[t.id] ?? [:],
                         updatedAt: ctx.now)
        }
        var wf = Workflow(workflowId: id, seq: seq, templateId: templateId, title: title, createdAt: ctx.now,
                          nodes: nodes)
        // Every node starts blocked until gated; the first reconcile moves it on legally.
        for i in wf.nodes.indices {
            wf.nodes[i].blockedReason = BlockedReason(code: BlockedReason.waitingForInput, message: "Not gated yet")
        }
        try reconcile(&wf)
        return wf
    }

    // MARK: The state machine

    /// Moves node `n` to `state`, refusing any transition the table does not allow.
    func setState(_ wf: inout Workflow, _ n: Int, _ state: NodeState, reason: BlockedReason? = nil) throws(EngineError) {
        let from = wf.nodes[n].state
        guard NodeStateMachine.canTransition(from: from, to: state) else {
            throw .internal("illegal transition of node '\(wf.nodes[n].nodeId)' from \(from.rawValue) to \(state.rawValue)")
        }
        let newReason = state == .blocked ? reason : nil
        guard from != state || wf.nodes[n].blockedReason != newReason else { return }
        wf.nodes[n].state = state
        wf.nodes[n].blockedReason = newReason
        wf.nodes[n].updatedAt = ctx.now
        wf.updatedAt = ctx.now
    }

    /// A command that the node's state does not allow: `WF_ESTATE` "cannot X when state is Y".
    public static func notAllowed(_ verb: String, _ node: NodeInstance, code: String = "invalidState") -> EngineError {
        .state(code, "cannot \(verb) when state is \(node.state.rawValue)",
               details: ["nodeId": .string(node.nodeId), "state": .string(node.state.rawValue)])
    }

    // MARK: Reconcile

    /// Brings every node that is not in flight up to date with its inputs, in graph order:
    /// gates nodes that never ran, blocks consumers whose inputs changed since their last run
    /// (`inputChanged`), files awaits for interactive nodes that became ready, and starts ready
    /// nodes of a workflow running all ready steps.
    public func reconcile(_ wf: inout Workflow) throws(EngineError) {
        // Taints are settled in graph order too: a node's producers are final before it is gated.
        var taints = TaintMap()
        for n in graph.order {
            try reconcileNode(&wf, n, taints: taints)
            taints.set(n, taint(wf, n, given: taints), count: wf.nodes.count)
        }
        refreshStatus(&wf)
        ctx.markReconciled(wf.workflowId)
    }

    /// Applies `change` to node `n`, then does what ``reconcile(_:)`` would, gating only what
    /// can see the change: a node is gated again when one of its producers moved in what gating
    /// reads of it (its state, outputs, error code or taint), and moves in turn when gating moves
    /// it. For changes to one node and nothing outside the workflow: a completion. That is only the
    /// full reconcile's result if the workflow was up to date before (``RulesContext/
    /// isReconciled(_:)``: reconciled in full since tools or the network last changed, in this
    /// process); otherwise this reconciles every node. Changes to assets, tools or the network
    /// reconcile every node. Debug builds check that a full reconcile of the result changes
    /// nothing.
    public func reconcile(_ wf: inout Workflow, changing n: Int,
                          _ change: (inout Workflow) throws(EngineError) -> Void) throws(EngineError)
    {
        guard ctx.isReconciled(wf.workflowId) else {
            try change(&wf)
            try reconcile(&wf)
            return
        }
        let old = taintMap(wf)
        try change(&wf)
        var taints = TaintMap()
        // Which nodes moved: as bits in a small workflow (the usual case: no array to allocate,
        // and a node's producers are looked at with one AND), else as an array.
        let bits = graph.predecessorBits
        var movedBits: UInt64 = bits == nil ? 0 : UInt64(1) << UInt64(n)
        var moved = bits == nil ? [Bool](repeating: false, count: wf.nodes.count) : []
        if bits == nil { moved[n] = true }
        func hasMoved(_ m: Int) -> Bool { bits == nil ? moved[m] : movedBits & (UInt64(1) << UInt64(m)) != 0 }
        func markMoved(_ m: Int) { if bits == nil { moved[m] = true } else { movedBits |= UInt64(1) << UInt64(m) } }
        // With no node able to start a taint before the change (no array in `old`), every taint
        // stays nil until a node the reconcile looks at can start one (a node it does not look at
        // is as it was): until then no taint is worked out at all. Taints flow down the graph
        // order, so the nodes before the first origin keep nil either way.
        var taintsMayExist = old.values != nil
        for m in graph.order {
            let producerMoved = if let bits { bits[m] & movedBits != 0 } else { graph.predecessors[m].contains(where: { moved[$0] }) }
            if hasMoved(m) || producerMoved {
                // What gating a consumer reads of its producer, compared before and after: its
                // state as gating tells states apart (``gatingClass(_:)``: a producer going
                // from blocked to ready, or ready to running, leaves its consumers waiting as
                // they were), its outputs, and whether its failure is an interruption (its taint
                // is compared below). Not its blocked message or error text: a consumer waiting
                // on it waits the same way whatever they say.
                let before = (Self.gatingClass(wf.nodes[m].state), wf.nodes[m].outputs, wf.nodes[m].lastError?.isInterruption)
                try reconcileNode(&wf, m, taints: taints)
                if Self.gatingClass(wf.nodes[m].state) != before.0 || wf.nodes[m].outputs != before.1
                    || wf.nodes[m].lastError?.isInterruption != before.2
                {
                    markMoved(m)
                }
                if !taintsMayExist, mayOriginateTaint(wf, m) { taintsMayExist = true }
            }
            guard taintsMayExist else { continue }
            taints.set(m, taint(wf, m, given: taints), count: wf.nodes.count)
            if taints[m] != old[m] { markMoved(m) }
        }
        refreshStatus(&wf)
        #if DEBUG
        // The full reconcile of the result changes nothing (it would start runs, with new ids, if
        // a ready node had been missed).
        var full = wf
        try reconcile(&full)
        assert(full == wf, "the incremental reconcile after a change to '\(wf.nodes[n].nodeId)' missed what the full one does")
        #endif
    }

    /// A producer's state as gating its consumers reads it (``gate(_:_:taints:ignoreNetwork:)``):
    /// succeeded (its outputs count), skipped, failed, cancelled, or anything else (its consumers
    /// wait for it, whatever it is doing).
    static func gatingClass(_ state: NodeState) -> UInt8 {
        switch state {
        case .succeeded: 1
        case .skipped: 2
        case .failed: 3
        case .cancelled: 4
        default: 0
        }
    }

    /// One node's step of the reconcile, its producers' taints known.
    private func reconcileNode(_ wf: inout Workflow, _ n: Int, taints: TaintMap) throws(EngineError) {
        let state = wf.nodes[n].state
        if state == .awaitingUser { return try reaskIfInputChanged(&wf, n, taints: taints) }
        if state.isInFlight || state == .cancelled || state == .skipped { return }
        let r = wf.nodes[n].currentRunId.flatMap { wf.runIndex($0) }
        if let r, !wf.runs[r].status.isTerminal { return }  // a local run waiting for a slot
        if state == .failed, r.map({ wf.runs[$0].startedAt }) ?? nil == nil { return }  // aborted before start
        // A request withdrawn because its input asset was deleted was never answered: like a run
        // aborted before start, the node keeps its failure until Re-run with latest.
        if state == .failed, let r, wf.runs[r].mode == .interactive, wf.runs[r].error?.code == "inputAssetGone" { return }
        let gate = try self.gate(wf, n, taints: taints)
        if let r, wf.runs[r].startedAt != nil, wf.runs[r].status == .succeeded || wf.runs[r].status == .failed {
            try reconcileRan(&wf, n, lastRun: r, gate: gate)
        } else {
            try reconcileFresh(&wf, n, gate: gate)
        }
    }

    /// A request about inputs that have since been replaced would be answered for nothing (the
    /// answer would turn `inputChanged` at once): it is withdrawn, and the node asks again with
    /// the new inputs as soon as it is ready. An input still on its way (its producer running
    /// again) leaves the request open until the new asset exists. A Retry's request is about the
    /// retried run's frozen inputs, whatever the edges bring now: it stays. A request whose
    /// input asset was deleted asks about something no one can see or choose: like a queued run
    /// whose input was deleted, it fails (`inputAssetGone`, "Use Re-run with latest").
    private func reaskIfInputChanged(_ wf: inout Workflow, _ n: Int, taints: TaintMap) throws(EngineError) {
        guard let runId = wf.nodes[n].currentRunId, let r = wf.runIndex(runId), wf.runs[r].mode == .interactive,
              !wf.runs[r].status.isTerminal, !graph.nodes[n].inputs.isEmpty
        else { return }
        if let (port, assetId) = try firstDeletedInput(wf.runs[r]) {
            try closeAwait(&wf, runId: runId, resolution: .withdrawn)
            try fail(&wf, runIndex: r, error: inputAssetGone(port, assetId, "the request was withdrawn"), applyPolicy: false)
            ctx.note("await withdrawn: input asset gone", ["workflowId": wf.workflowId, "nodeId": wf.nodes[n].nodeId,
                                                           "runId": runId, "assetId": assetId])
            return
        }
        guard wf.runs[r].trigger != .retry else { return }
        let gate = try self.gate(wf, n, taints: taints)
        let asked = wf.runs[r].inputs
        let known = gate.knownInputs
        // Only an input there now and different is a change: one on its way is not a change
        // yet, and one that became unavailable (an optional input whose producer failed since)
        // leaves the request standing, as it leaves a node's result.
        guard let changed = graph.nodes[n].inputs.first(where: { port in
            if let now = known[port.name] { now != asked[port.name] } else { false }
        }) else { return }
        try closeAwait(&wf, runId: runId, resolution: .withdrawn)
        wf.runs[r].finish(.cancelled, at: ctx.now, error: NodeError(
            code: BlockedReason.inputChanged,
            message: "The \(changed.name) input changed while the request was open; it is asked again with the new one.",
            details: ["port": .string(changed.name)]))
        ctx.note("await withdrawn: input changed", ["workflowId": wf.workflowId, "nodeId": wf.nodes[n].nodeId,
                                                    "runId": runId, "port": changed.name])
        try reconcileFresh(&wf, n, gate: gate)
    }

    /// A node that ran: it keeps its result while its inputs are those of its last run, and is
    /// blocked with `inputChanged` once any of them is replaced. While some inputs are
    /// unavailable (a producer running again, the network down, a tool gone), the result stands
    /// unless one of the inputs it has now differs: a result made from a replaced input is never
    /// passed on as current.
    private func reconcileRan(_ wf: inout Workflow, _ n: Int, lastRun r: Int, gate: Gate) throws(EngineError) {
        // The last run read in place (it is passed by position, not copied).
        let resultState: NodeState = wf.runs[r].status == .succeeded ? .succeeded : .failed
        let inputs = gate.knownInputs
        if gate.inputs != nil, inputs == wf.runs[r].inputs {
            if wf.nodes[n].state != resultState { try setState(&wf, n, resultState) }
            return
        }
        // An input there now and different is a change; one missing now (its producer running
        // again, failed, or the network down) is only unavailable, and the result stands.
        guard let changed = graph.nodes[n].inputs.first(where: { port in
            if let now = inputs[port.name] { now != wf.runs[r].inputs[port.name] } else { false }
        })?.name else {
            // Blocked because an input was replaced, which is now its last run's again, while the
            // gate holds for a reason that is not about inputs (the network down for a remote
            // node, its tool gone): that result is current again, as it is once the gate opens.
            if wf.nodes[n].state == .blocked, inputs == wf.runs[r].inputs, case let .blocked(reason, _, _) = gate,
               reason.code == BlockedReason.offline || reason.code == BlockedReason.toolNotInstalled
            {
                try setState(&wf, n, resultState)
                return
            }
            // Already blocked (its result was made from an input replaced since), and now held by
            // a reason that comes first in OPS §15's table (the replacing upstream failed, its
            // output was deleted or it runs again, a tool is gone): that reason is shown, as
            // `node.run` and the card's actions give it. Every reason the gate gives comes first.
            if wf.nodes[n].state == .blocked, case let .blocked(reason, _, _) = gate,
               reason.code != BlockedReason.inputChanged, wf.nodes[n].blockedReason != reason
            {
                try setState(&wf, n, .blocked, reason: reason)
            }
            return
        }
        var message = "Input \(changed) has changed."
        var details: JSONObject = ["port": .string(changed), "previous": JSON(wf.runs[r].inputs[changed]),
                                   "current": JSON(inputs[changed])]
        if wf.nodes[n].inputSelections[changed] == nil, let producer = graph.producers[n][changed] {
            let pid = graph.nodes[producer.node].id
            message = "Input from '\(pid)' has changed."
            details["upstream"] = .string(pid)
        }
        try setState(&wf, n, .blocked, reason: BlockedReason(code: BlockedReason.inputChanged, message: message,
                                                              details: details))
    }

    /// A node that never ran: ready or blocked by the gate; ready interactive nodes file their
    /// await, ready nodes of an auto-running workflow start.
    private func reconcileFresh(_ wf: inout Workflow, _ n: Int, gate: Gate) throws(EngineError) {
        switch gate {
        case let .blocked(reason, _, _):
            if wf.nodes[n].state == .failed || wf.nodes[n].state == .succeeded {
                // A node with a result (or an aborted retry) keeps it while inputs are missing.
                return
            }
            try setState(&wf, n, .blocked, reason: reason)
        case let .ready(inputs):
            if wf.nodes[n].state != .ready { try setState(&wf, n, .ready) }
            if graph.info[n].isInteractive {
                try startRun(&wf, n, trigger: wf.autoRun ? .auto : .run, inputs: inputs,
                             params: effectiveParams(wf, n))
            } else if wf.autoRun {
                try startRun(&wf, n, trigger: .auto, inputs: inputs, params: effectiveParams(wf, n))
            }
        }
    }

    // MARK: Params

    /// Effective params: tool defaults ⊕ provider defaults ⊕ template params ⊕ the person's changes.
    public func effectiveParams(_ wf: Workflow, _ n: Int) -> JSONObject {
        let kind = graph.info[n].kind
        var params = ctx.toolDefaults(kind) ?? [:]
        if let provider = ctx.providerDefaults(kind) { params = params.merging(provider) }
        params = params.merging(graph.info[n].params)
        return params.merging(wf.nodes[n].params)
    }

    // MARK: Runs

    public func mode(of n: Int) -> RunMode {
        if graph.info[n].isInteractive { return .interactive }
        return resourceClass(of: n) == .remote ? .remote : .local
    }

    /// Where node `n`'s tool runs: the class its template fixes (``TemplateGraph/NodeInfo/classFixed``),
    /// else its tool's now, so a remote tool registered after the template runs remotely.
    public func resourceClass(of n: Int) -> ResourceClass {
        let i = graph.info[n]
        if i.classFixed { return i.resourceClass }
        return ctx.toolClass(i.kind) ?? i.resourceClass
    }

    /// The class a card shows: that of the run in flight or queued (its class was fixed when it
    /// was created, and the queues count it so), else ``resourceClass(of:)``.
    public func shownResourceClass(_ wf: Workflow, _ n: Int) -> ResourceClass {
        if let run = wf.run(wf.nodes[n].currentRunId), !run.status.isTerminal {
            switch run.mode {
            case .remote: return .remote
            case .local: return .local
            case .interactive: break
            }
        }
        return resourceClass(of: n)
    }

    /// Creates a run for node `n` with frozen inputs and params. Interactive nodes file an await;
    /// others wait in their queue for a slot.
    @discardableResult
    public func startRun(_ wf: inout Workflow, _ n: Int, trigger: RunTrigger, inputs: [String: String],
                         params: JSONObject, confirmed: Bool = false) throws(EngineError) -> String {
        if wf.nodes[n].state != .ready { try setState(&wf, n, .ready) }
        let t = graph.info[n]
        let runId = ctx.newId("run")
        // A confirm-params node whose params were just confirmed runs its tool.
        let mode: RunMode = confirmed ? (resourceClass(of: n) == .remote ? .remote : .local) : self.mode(of: n)
        var run = Run(runId: runId, nodeId: t.id, number: wf.nodes[n].attempts + 1, mode: mode, kind: t.kind,
                      trigger: trigger, status: mode == .interactive ? .awaiting : .queued, params: params,
                      inputs: inputs, idempotencyKey: ShortText.join(wf.workflowId, t.id, runId, separator: 0x2F),
                      createdAt: ctx.now)
        if mode == .interactive { run.startedAt = ctx.now }
        wf.runs.append(consume run)
        wf.nodes[n].attempts += 1
        wf.nodes[n].currentRunId = runId
        wf.nodes[n].lastError = nil
        wf.updatedAt = ctx.now
        switch mode {
        case .interactive:
            try fileAwait(&wf, n, runId: runId)
            try setState(&wf, n, .awaitingUser)
        case .remote:
            try setState(&wf, n, .queuedRemote)
        case .local:
            break  // stays ready until a local slot frees
        }
        if trigger == .retry, !confirmed { ctx.metric("node.retried", ["workflowId": .string(wf.workflowId), "nodeId": .string(t.id)]) }
        ctx.note("run created", ["workflowId": wf.workflowId, "nodeId": t.id, "runId": runId, "mode": mode.rawValue])
        return runId
    }

    /// A slot was granted to queued run `r`: the job is submitted, or the local tool starts. A
    /// run whose frozen input assets are gone never starts (`inputAssetGone`).
    /// `node` is the run's node, when the caller knows it (else it is looked up).
    public func beginRun(_ wf: inout Workflow, runIndex r: Int, node: Int? = nil) throws(EngineError) {
        // The run's fields are read in place: every start would otherwise copy the whole record.
        guard wf.runs[r].status == .queued, let n = node ?? nodeIndex(wf, wf.runs[r].nodeId) else { return }
        let inputs: JSONObject
        switch try frozenInputs(wf.runs[r].inputs) {
        case let .gone(port, id):
            let error = inputAssetGone(port, id, "the run never started")
            wf.runs[r].finish(.failed, at: ctx.now, error: error)
            wf.nodes[n].lastError = error
            try setState(&wf, n, .failed)
            ctx.note("run aborted before start: input asset gone", ["runId": wf.runs[r].runId, "assetId": id])
            return
        case let .present(assets):
            inputs = assets
        }
        wf.runs[r].startedAt = ctx.now
        wf.runs[r].holdsSlot = true
        let mode = wf.runs[r].mode
        // The effect's members in the order hosts see them, in one allocation with room for the
        // id and type the context puts first.
        var body = JSONObject(minimumCapacity: 9)
        body.append(uniqueKey: "workflowId", .string(wf.workflowId))
        body.append(uniqueKey: "nodeId", .string(wf.runs[r].nodeId))
        body.append(uniqueKey: "runId", .string(wf.runs[r].runId))
        body.append(uniqueKey: "kind", .string(wf.runs[r].kind))
        body.append(uniqueKey: "params", .object(wf.runs[r].params))
        body.append(uniqueKey: "inputs", .object(inputs))
        switch mode {
        case .local:
            wf.runs[r].status = .running
            try setState(&wf, n, .runningLocal)
            // `consume`: the context puts the id and type in place, with no copy of the body.
            ctx.emit(EffectType.localRun, consume body, answerKey: AnswerKey.local(wf.runs[r].runId))
        case .remote:
            wf.runs[r].status = .submitting
            wf.runs[r].submitAttempts += 1
            body.append(uniqueKey: "idempotencyKey", .string(wf.runs[r].idempotencyKey))
            ctx.emit(EffectType.remoteSubmit, consume body, answerKey: AnswerKey.submit(wf.runs[r].runId))
        case .interactive:
            break
        }
        wf.updatedAt = ctx.now
    }

    /// The fields every effect about a run carries.
    func effectBody(_ wf: Workflow, _ run: Run) -> JSONObject {
        ["workflowId": .string(wf.workflowId), "nodeId": .string(run.nodeId), "runId": .string(run.runId)]
    }

    enum FrozenInputs {
        /// Every input asset, as effects carry them.
        case present(JSONObject)
        /// The first port (in name order) whose asset was deleted.
        case gone(port: String, assetId: String)
    }

    /// A run's frozen input assets (its `inputs`), in port name order, or the first one that is gone.
    func frozenInputs(_ frozen: [String: String]) throws(EngineError) -> FrozenInputs {
        var inputs = JSONObject(minimumCapacity: frozen.count)
        if frozen.count == 1, let (port, id) = frozen.first {  // most runs: one input, nothing to sort
            guard let asset = try ctx.asset(id) else { return .gone(port: port, assetId: id) }
            inputs.append(uniqueKey: port, asset.json)
            return .present(inputs)
        }
        for port in frozen.keys.sorted() {
            let id = frozen[port]!
            guard let asset = try ctx.asset(id) else { return .gone(port: port, assetId: id) }
            inputs.append(uniqueKey: port, asset.json)
        }
        return .present(inputs)
    }

    /// The first port (in name order) of `run` whose frozen input asset was deleted.
    func firstDeletedInput(_ run: Run) throws(EngineError) -> (port: String, assetId: String)? {
        for port in run.inputs.keys.sorted() where try ctx.asset(run.inputs[port]!) == nil { return (port, run.inputs[port]!) }
        return nil
    }

    /// The error of a run whose input asset was deleted before it could (re)start.
    func inputAssetGone(_ port: String, _ assetId: String, _ outcome: String) -> NodeError {
        NodeError(code: "inputAssetGone", message: "The \(port) input of this run was deleted; \(outcome).",
                  hint: NodeError.inputAssetGoneHint, details: ["port": .string(port), "assetId": .string(assetId)])
    }

    /// Emits `remote.submit` again for a run whose retry wait is over (same idempotency key). If
    /// a frozen input asset was deleted meanwhile, nothing is submitted: the run fails
    /// (`inputAssetGone`), gives up its slot, and the workflow is re-gated.
    func resubmit(_ wf: inout Workflow, runIndex r: Int) throws(EngineError) {
        let inputs: JSONObject
        switch try frozenInputs(wf.runs[r].inputs) {
        case let .gone(port, id):
            let run = wf.runs[r]
            try fail(&wf, runIndex: r, error: inputAssetGone(port, id, "it was not submitted again"), applyPolicy: false)
            ctx.note("submit retry aborted: input asset gone", ["runId": run.runId, "assetId": id])
            try reconcile(&wf)
            return
        case let .present(assets):
            inputs = assets
        }
        wf.runs[r].status = .submitting
        wf.runs[r].nextAttemptAt = nil
        wf.runs[r].submitAttempts += 1
        let run = wf.runs[r]
        touch(&wf, node: nodeIndex(wf, run.nodeId))  // "Retrying at …" is now "Submitting…"
        var body = effectBody(wf, run)
        body["kind"] = .string(run.kind)
        body["params"] = .object(run.params)
        body["inputs"] = .object(inputs)
        body["idempotencyKey"] = .string(run.idempotencyKey)
        body["attempt"] = JSON(run.submitAttempts)
        ctx.emit(EffectType.remoteSubmit, body, answerKey: AnswerKey.submit(run.runId))
        ctx.metric("submit.retried", ["workflowId": .string(wf.workflowId), "nodeId": .string(run.nodeId),
                                      "runId": .string(run.runId), "attempt": JSON(run.submitAttempts)])
    }

    /// Registers run `r`'s outputs as assets with provenance; returns port → asset id.
    func registerOutputs(_ wf: Workflow, runIndex r: Int, _ outputs: [(port: String, draft: AssetDraft)]) -> [String: String] {
        var ids: [String: String] = [:]
        let (nodeId, runId) = (wf.runs[r].nodeId, wf.runs[r].runId)  // read in place, not the whole run
        for (port, draft) in outputs {
            let (meta, defaulted) = draft.versionedMeta()
            let id = ctx.newId("as")
            let type = draft.type ?? graph.index[nodeId].flatMap { graph.info[$0].outputs.port(named: port)?.type } ?? "FileRef"
            ctx.putAsset(Asset(assetId: id, type: type, uri: draft.uri, bytes: draft.bytes, hash: draft.hash, meta: meta,
                               createdAt: ctx.now,
                               provenance: Provenance(workflowId: wf.workflowId, nodeId: nodeId, runId: runId, port: port)))
            if defaulted {
                ctx.warn("asset metadata has no providerSchema; stored as v1", ["assetId": id, "runId": runId])
            }
            ids[port] = id
        }
        return ids
    }

    /// Run `r` produced `outputs`: the node succeeds and its consumers are re-gated. `node` is
    /// the run's node, when the caller knows it (else it is looked up).
    func succeed(_ wf: inout Workflow, runIndex r: Int, node: Int? = nil, outputs: [String: String]) throws(EngineError) {
        let n = node ?? nodeIndex(wf, wf.runs[r].nodeId)!
        wf.runs[r].finish(.succeeded, at: ctx.now)
        wf.runs[r].outputs = outputs
        wf.runs[r].progress = 1
        wf.nodes[n].outputs = outputs
        wf.nodes[n].lastError = nil
        try setState(&wf, n, .succeeded)
        ctx.note("run succeeded", ["workflowId": wf.workflowId, "nodeId": wf.runs[r].nodeId, "runId": wf.runs[r].runId])
    }

    /// Run `r` failed: the node fails with `error`, and the workflow's error policy applies
    /// unless the failure is an interruption.
    func fail(_ wf: inout Workflow, runIndex r: Int, error: NodeError, applyPolicy: Bool = true) throws(EngineError) {
        let n = nodeIndex(wf, wf.runs[r].nodeId)!
        wf.runs[r].finish(.failed, at: ctx.now, error: error)
        wf.nodes[n].lastError = error
        try setState(&wf, n, .failed)
        ctx.note("run failed", ["workflowId": wf.workflowId, "nodeId": wf.runs[r].nodeId, "runId": wf.runs[r].runId,
                                "code": error.code])
        if applyPolicy, template.options.errorPolicy == .failFast {
            try failFast(&wf, failedNode: wf.nodes[n].nodeId)
        }
    }

    /// `fail-fast`: the first failure cancels the workflow's other work and stops auto-running.
    func failFast(_ wf: inout Workflow, failedNode: String) throws(EngineError) {
        wf.autoRun = false
        for i in graph.order where wf.nodes[i].nodeId != failedNode {
            let node = wf.nodes[i]
            let run = wf.run(node.currentRunId)
            let queued = run.map { !$0.status.isTerminal } ?? false
            guard node.state.isInFlight || queued else { continue }
            try cancel(&wf, i, because: NodeError(
                code: "cancelledByFailFast", message: "Cancelled because '\(failedNode)' failed (fail-fast).",
                details: ["failedNode": .string(failedNode)]))
        }
    }

    // MARK: Cancel

    /// Cancels node `n`'s work in flight: the job (`remote.cancel`), the local run, the await, or
    /// the queued run. Anything else is `WF_ESTATE`.
    public func cancel(_ wf: inout Workflow, _ n: Int, because error: NodeError? = nil) throws(EngineError) {
        let node = wf.nodes[n]
        guard let runId = node.currentRunId, let r = wf.runIndex(runId), !wf.runs[r].status.isTerminal else {
            throw Executor.notAllowed("cancel", node)
        }
        let run = wf.runs[r]
        switch run.mode {
        case .remote:
            ctx.settle(answerKey: AnswerKey.submit(runId))
            ctx.settle(answerKey: AnswerKey.poll(runId))
            for port in run.pendingDownloads.keys { ctx.settle(answerKey: AnswerKey.download(runId, port)) }
            if let jobId = run.jobId, run.status.hasLiveJob {
                var body = effectBody(wf, run)
                body["jobId"] = .string(jobId)
                ctx.emit(EffectType.remoteCancel, body, answerKey: AnswerKey.cancel(jobId))
            }
        case .local:
            ctx.settle(answerKey: AnswerKey.local(runId))
        case .interactive:
            try closeAwait(&wf, runId: runId, resolution: .withdrawn)
        }
        wf.runs[r].finish(.cancelled, at: ctx.now, error: error)
        wf.nodes[n].lastError = error
        try setState(&wf, n, .cancelled)
        ctx.metric("node.cancelled", ["workflowId": .string(wf.workflowId), "nodeId": .string(node.nodeId),
                                      "runId": .string(runId)])
        ctx.note("run cancelled", ["workflowId": wf.workflowId, "nodeId": node.nodeId, "runId": runId])
    }

    // MARK: Workflow status

    /// `done` when every node succeeded or was skipped; `failed` when something failed or was
    /// cancelled and nothing can move any more; `archived` when archived; else `active`.
    public func refreshStatus(_ wf: inout Workflow) {
        // One pass over the nodes, reading fields in place (no record is copied).
        var allDone = true, anyFailed = false, anyGoing = false
        for i in wf.nodes.indices {
            let state = wf.nodes[i].state
            if state != .succeeded && state != .skipped { allDone = false }
            let interrupted = state == .failed && wf.nodes[i].lastError?.isInterruption == true
            if (state == .failed && !interrupted) || state == .cancelled { anyFailed = true }
            // A required input that can never come (below a skipped node, say) holds the
            // workflow as a failure does.
            if state == .blocked, wf.nodes[i].blockedReason?.code == BlockedReason.upstreamFailed { anyFailed = true }
            if state.isInFlight || state == .ready || interrupted { anyGoing = true }
        }
        let status: WorkflowStatus
        if wf.archived {
            status = .archived
        } else if allDone {
            status = .done
        } else if anyFailed, !anyGoing {
            status = .failed
        } else {
            status = .active
        }
        if wf.status != status {
            wf.status = status
            wf.updatedAt = ctx.now
        }
    }
}
