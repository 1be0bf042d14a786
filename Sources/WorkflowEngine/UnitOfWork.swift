import Logging
import WorkflowCore
import WorkflowStore

/// One call's view of the engine: reads see committed state plus this call's own changes;
/// every change is staged here, written by the store in one transaction, and only then applied
/// to the engine's memory. A call that throws leaves nothing behind anywhere.
final class UnitOfWork {
    let state: EngineState
    let store: EngineStore
    let config: EngineConfig
    let settings: RuleSettings
    @exclusivity(unchecked) var now: Timestamp

    // Staged changes
    @exclusivity(unchecked) private(set) var meta: [String: JSON] = [:]
    /// Counters this call advanced, and their last values: a few names ("run", "as", "effect"),
    /// looked up by comparing names, which costs less than hashing them.
    @exclusivity(unchecked) private var counters: [(name: String, value: Int64)] = []
    @exclusivity(unchecked) private(set) var templates: [RegisteredTemplate] = []
    @exclusivity(unchecked) private(set) var tools: [String: StoredTool] = [:]
    @exclusivity(unchecked) private(set) var providerDefaults: [String: JSONObject?] = [:]
    /// Workflows this call touched, each with its working copy, its committed version and what
    /// the call worked out about it (``StagedWorkflow``), by id and in the order first touched.
    @exclusivity(unchecked) private var staged: [String: StagedWorkflow] = [:]
    @exclusivity(unchecked) private(set) var touched: [StagedWorkflow] = []
    /// Job ids given to runs during this call: job id → (run id, workflow id).
    @exclusivity(unchecked) private(set) var stagedJobs: [String: (runId: String, workflowId: String)] = [:]
    @exclusivity(unchecked) private(set) var assets: [String: Asset?] = [:]
    @exclusivity(unchecked) private(set) var newEffects: [Effect] = []
    @exclusivity(unchecked) private(set) var takenSeqs: Set<Int64> = []
    @exclusivity(unchecked) private(set) var deletedSeqs: Set<Int64> = []
    /// Effects nothing answers taken by this call's takes, acknowledged by its next take.
    @exclusivity(unchecked) private var takenUnanswerableInCall: [Int64] = []
    @exclusivity(unchecked) private(set) var cacheEntries: [String: CacheEntry?] = [:]
    @exclusivity(unchecked) private(set) var metrics: [MetricEvent] = []
    @exclusivity(unchecked) var metricsDeletedThrough: Int64?
    @exclusivity(unchecked) var timers = TimerQueue.Staged()
    @exclusivity(unchecked) var setAsideTimers: [TimerQueue.Entry] = []
    @exclusivity(unchecked) var cacheTimers = TimerQueue.Staged()
    @exclusivity(unchecked) var setAsideCacheTimers: [TimerQueue.Entry] = []
    @exclusivity(unchecked) private var logs: [(Logger.Level, Logger.Message, Logger.Metadata)] = []
    @exclusivity(unchecked) private(set) var online: Bool?
    @exclusivity(unchecked) private(set) var activeWorkflowId: String??
    /// Workflows this call reconciled in full, and whether something gating reads outside the
    /// workflows (tools, the network) changed: then only those reconciled since count as up to
    /// date (``isReconciled(_:)``).
    @exclusivity(unchecked) private var reconciledNow = Set<String>()
    @exclusivity(unchecked) private var gatingInputsChanged = false
    /// The sum of the touched workflows' queue counts (``StagedWorkflow/counts``) minus what was
    /// committed: the scheduler reads its totals in O(1) however many workflows a call (or a
    /// batch) touches.
    @exclusivity(unchecked) private(set) var queueDelta = QueueCounts()
    /// The workflows that started waiting in each queue during this call (nothing of theirs was
    /// queued there before), in the order they did: their place in the line among workflows
    /// served equally long ago (docs/OPS.md section 19, Scheduling).
    @exclusivity(unchecked) private(set) var startedWaiting: (remote: [String: Int], local: [String: Int]) = ([:], [:])

    init(state: EngineState, store: EngineStore, config: EngineConfig, settings: RuleSettings, now: Timestamp) {
        self.state = state
        self.store = store
        self.config = config
        self.settings = settings
        self.now = now
    }

    var hasChanges: Bool {
        !meta.isEmpty || !counters.isEmpty || !templates.isEmpty || !tools.isEmpty || !providerDefaults.isEmpty
            || !touched.isEmpty || !assets.isEmpty || !newEffects.isEmpty
            || !takenSeqs.isEmpty || !deletedSeqs.isEmpty || !cacheEntries.isEmpty || !metrics.isEmpty
            || metricsDeletedThrough != nil || online != nil || activeWorkflowId != nil
    }

    // MARK: Meta and ids

    func setMeta(_ key: String, _ value: JSON) { meta[key] = value }

    /// Runs of deleted workflows whose submit may still be in flight (``EngineState``), as this
    /// call sees them.
    var submitsOfDeletedWorkflows: JSONObject {
        meta[MetaKey.submitsOfDeletedWorkflows]?.objectValue ?? state.submitsOfDeletedWorkflows
    }

    /// At most this many are remembered; the oldest go first (a submit long unanswered is lost).
    static let maxSubmitsOfDeletedWorkflows = 1_000
    /// The jobs cancelled for one of them that are remembered (a submit goes at most four times).
    static let maxJobsOfADeletedSubmit = 16

    func setSubmitsOfDeletedWorkflows(_ runs: JSONObject) {
        let kept = runs.count > Self.maxSubmitsOfDeletedWorkflows
            ? JSONObject(uniqueMembers: Array(runs.members.suffix(Self.maxSubmitsOfDeletedWorkflows))) : runs
        setMeta(MetaKey.submitsOfDeletedWorkflows, .object(kept))
    }

    /// The next number of a named counter ("wf" → 1, 2, …), persisted with the call.
    func nextNumber(_ name: String) -> Int64 {
        if let i = counters.firstIndex(where: { $0.name == name }) {
            counters[i].value += 1
            return counters[i].value
        }
        let n = state.counter(name) + 1
        counters.append((name, n))
        return n
    }

    /// A new id such as `wf-3`, `run-12`, `aw-2`, `as-40`.
    func newId(_ prefix: String) -> String { ShortText.id(prefix, nextNumber(prefix)) }

    var isOnline: Bool { online ?? state.online }

    func setOnline(_ value: Bool) { online = value }

    var activeWorkflow: String? { activeWorkflowId ?? state.activeWorkflowId }

    func setActiveWorkflow(_ id: String?) { activeWorkflowId = .some(id) }

    // MARK: Catalogue

    func template(_ id: String) -> RegisteredTemplate? {
        // A call asks for the same template again and again (every workflow of a batch is
        // usually of one): the last one found is checked first.
        if let last = lastTemplate, last.templateId == id { return last }
        let found = templates.first { $0.templateId == id } ?? state.templates[id]
        lastTemplate = found
        return found
    }

    @exclusivity(unchecked) private var lastTemplate: RegisteredTemplate?

    func templateId(forCanonicalText text: String) -> String? {
        templates.first { $0.stored.canonicalText == text }?.templateId ?? state.templateByText[text]
    }

    func addTemplate(_ t: RegisteredTemplate) { templates.append(t) }

    func tool(_ kind: String) -> ToolSpec? { tools[kind]?.spec ?? state.tools[kind]?.spec }

    /// Whether a tool of `kind` is registered, without copying its spec. A call rarely registers
    /// tools: the staged ones are looked in only when there are some.
    func hasTool(_ kind: String) -> Bool {
        (!tools.isEmpty && tools.index(forKey: kind) != nil) || committedTool(kind) != nil
    }

    /// The defaults of the tool of `kind`. A committed tool's are read where it is (a staged
    /// one, rare, is copied).
    func toolDefaults(_ kind: String) -> JSONObject? {
        if !tools.isEmpty, let t = tools[kind] { return t.spec.defaults }  // staged: rare
        return committedTool(kind)?.stored.spec.defaults
    }

    /// The class of the tool of `kind`, read as ``toolDefaults(_:)`` reads its defaults.
    func toolClass(_ kind: String) -> ResourceClass? {
        if !tools.isEmpty, let t = tools[kind] { return t.spec.resourceClass }  // staged: rare
        return committedTool(kind)?.stored.spec.resourceClass
    }

    /// The committed tool of `kind`, remembered for the rest of the call: the engine's tools
    /// change only when a call commits, and a completion asks about its node's tool four times or
    /// more (gating, the run's class and defaults), each lookup hashing the kind. Calls use a
    /// handful of kinds; past eight, the others are looked up each time.
    private func committedTool(_ kind: String) -> RegisteredTool? {
        for asked in committedToolsAsked where asked.kind == kind { return asked.tool }
        let tool = state.tools[kind]
        if committedToolsAsked.count < 8 { committedToolsAsked.append((kind, tool)) }
        return tool
    }

    @exclusivity(unchecked) private var committedToolsAsked: [(kind: String, tool: RegisteredTool?)] = []

    var allTools: [String: ToolSpec] {
        var all = state.tools.mapValues(\.spec)
        for (k, t) in tools { all[k] = t.spec }
        return all
    }

    func storedTool(_ kind: String) -> StoredTool? { tools[kind] ?? state.tools[kind]?.stored }

    func putTool(_ t: StoredTool) { tools[t.spec.kind] = t }

    func providerDefaults(_ kind: String) -> JSONObject? {
        if let staged = providerDefaults[kind] { return staged }
        return state.providerDefaults[kind]
    }

    func setProviderDefaults(_ kind: String, _ params: JSONObject?) { providerDefaults[kind] = .some(params) }

    // MARK: Workflows

    /// The workflow as this call sees it, loading it from the store on first use.
    func workflow(_ id: String) throws(EngineError) -> Workflow? {
        if let s = staged[id] { return s.working }  // nil once deleted
        return try committedWorkflow(id)
    }

    /// The committed version of a workflow this call has not touched, loading it on first use.
    private func committedWorkflow(_ id: String) throws(EngineError) -> Workflow? {
        try committedEntry(id)?.workflow
    }

    /// ``committedWorkflow(_:)`` with the workflow's entry in the engine's state.
    private func committedEntry(_ id: String) throws(EngineError) -> (entry: WorkflowEntry, workflow: Workflow)? {
        guard let e = state.entries[id], let w = try committedWorkflow(of: e) else { return nil }
        return (e, w)
    }

    /// The committed version of the workflow of entry `e`, loading it on first use.
    private func committedWorkflow(of e: WorkflowEntry) throws(EngineError) -> Workflow? {
        let id = e.id
        if let w = e.workflow {
            state.noteRead(e)
            return w
        }
        let loaded: Workflow?
        do {
            loaded = try store.loadWorkflow(id)
        } catch {
            throw EngineError.storeRead(error, "cannot read workflow \(id)")
        }
        guard let w = loaded else { return nil }
        try checkLoaded(w)
        e.workflow = w  // committed state, now cached
        state.noteUse(e, quiet: EngineState.isQuiet(e.summary))
        return w
    }

    /// A workflow read from the store must fit its template: one node per template node, in
    /// order, every run and await on one of them, each await on an interactive run of its node,
    /// and each node's current run its own (and
    /// succeeded if the node did). Its nodes and runs must be in step as the rules keep them:
    /// a run under way is its node's current run, in a status its mode takes, with the node in
    /// the state that status puts it in (``Run/nodeStateUnderWay``); a node in flight has a run
    /// under way. A store changed behind the engine's back (rows deleted, a template gone,
    /// records edited) is `WF_ESTORE storeCorrupt`, never a crash or an internal error later.
    private func checkLoaded(_ w: Workflow) throws(EngineError) {
        func corrupt(_ why: String) -> EngineError {
            EngineError(.store, "storeCorrupt", "workflow \(w.workflowId) in the store is damaged: \(why)",
                        details: ["workflowId": .string(w.workflowId)])
        }
        guard let graph = template(w.templateId)?.graph else { throw corrupt("its template \(w.templateId) is missing") }
        guard w.nodes.count == graph.nodes.count else {
            throw corrupt("it has \(w.nodes.count) nodes where its template has \(graph.nodes.count)")
        }
        for (i, node) in w.nodes.enumerated() where node.nodeId != graph.nodes[i].id {
            throw corrupt("node \(i) is '\(node.nodeId)' where its template has '\(graph.nodes[i].id)'")
        }
        for run in w.runs where graph.index[run.nodeId] == nil {
            throw corrupt("run \(run.runId) is of node '\(run.nodeId)', which its template does not have")
        }
        for a in w.awaits where graph.index[a.nodeId] == nil {
            throw corrupt("await \(a.awaitId) is of node '\(a.nodeId)', which its template does not have")
        }
        // A node's current run is one of its own runs, and a succeeded node's has succeeded: the
        // rules start from both (a record edited into a succeeded node whose run failed made a
        // later call fail on an illegal transition). Nodes and runs are in step: the rules move a
        // node and its run under way together, and start from that (a node record cut to read as
        // blocked while its local run was running made the open that interrupts such runs fail
        // on an illegal transition).
        var position: [String: Int] = [:]
        position.reserveCapacity(w.runs.count)
        for (i, run) in w.runs.enumerated() { position[run.runId] = i }
        // An await asks for one interactive run of its node (the rules file it with the run): one
        // whose run is gone or another's never settles (its expiry timer fired without moving on).
        for a in w.awaits {
            guard let r = position[a.runId], w.runs[r].nodeId == a.nodeId, w.runs[r].mode == .interactive else {
                throw corrupt("await \(a.awaitId) names run \(a.runId), which is not an interactive run of node '\(a.nodeId)'")
            }
        }
        var currentUnderWay = 0
        for node in w.nodes {
            guard let id = node.currentRunId else {
                if node.state.isInFlight { throw corrupt("node '\(node.nodeId)' is \(node.state.rawValue) without a run under way") }
                continue
            }
            guard let r = position[id], w.runs[r].nodeId == node.nodeId else {
                throw corrupt("node '\(node.nodeId)' names run \(id) as its current run, which is not one of its runs")
            }
            let status = w.runs[r].status
            if node.state == .succeeded, status != .succeeded {
                throw corrupt("node '\(node.nodeId)' succeeded, but its current run \(id) is \(status.rawValue)")
            }
            if status.isTerminal {
                if node.state.isInFlight { throw corrupt("node '\(node.nodeId)' is \(node.state.rawValue) without a run under way") }
                continue
            }
            guard let state = w.runs[r].nodeStateUnderWay else {
                throw corrupt("run \(id) is \(w.runs[r].mode.rawValue) and \(status.rawValue), which its mode never is")
            }
            if node.state != state {
                throw corrupt("node '\(node.nodeId)' is \(node.state.rawValue) while its current run \(id) is \(status.rawValue)")
            }
            currentUnderWay += 1  // each run is one node's current run at most: its own node's
        }
        if w.runs.reduce(0, { $0 + ($1.status.isTerminal ? 0 : 1) }) != currentUnderWay {
            let current = Set(w.nodes.compactMap(\.currentRunId))
            if let run = w.runs.first(where: { !$0.status.isTerminal && !current.contains($0.runId) }) {
                throw corrupt("run \(run.runId) is \(run.status.rawValue), but it is not its node's current run")
            }
        }
    }

    /// ``workflow(_:)`` for calls that go over many workflows (re-gating them all, the Action
    /// Center): a damaged one is left out, with an error logged, instead of failing the call for
    /// every other workflow. A call about that workflow alone still reports `storeCorrupt`.
    func workflowUnlessDamaged(_ id: String) throws(EngineError) -> Workflow? {
        do {
            return try workflow(id)
        } catch where error.code == "storeCorrupt" {
            log(.error, "damaged workflow left out", ["workflowId": .string(id), "reason": .string(error.message)])
            return nil
        }
    }

    func requireWorkflow(_ id: String) throws(EngineError) -> Workflow {
        guard let w = try workflow(id) else {
            throw .notFound("unknownWorkflow", "no workflow '\(id)'", details: ["workflowId": .string(id)])
        }
        return w
    }

    /// Room for `count` more calls' worth of workflows and assets: a batch of completions stages
    /// two workflows and an asset per call, and tables grown one doubling at a time hash every key
    /// again at each doubling.
    func reserve(calls count: Int) {
        staged.reserveCapacity(staged.count + 2 * count)
        touched.reserveCapacity(touched.count + 2 * count)
        assets.reserveCapacity(assets.count + count)
    }

    /// The staging of workflow `id`, made on its first touch in this call.
    private func staging(_ id: String) -> StagedWorkflow {
        if let s = staged[id] { return s }
        let e = state.entries[id]
        let s = StagedWorkflow(id: id, original: e?.workflow, entry: e)
        staged[id] = s
        touched.append(s)
        return s
    }

    /// What this call staged of workflow `id`, if it touched it.
    func stagedEntry(_ id: String) -> StagedWorkflow? { staged[id] }

    /// The call's version of workflow `id` if it touched it (nil when it did not, or deleted it).
    func stagedWorkflow(_ id: String) -> Workflow? { staged[id]?.working }

    /// The workflow as this call sees it, with its staging made (or found) for the write that
    /// follows (``putWorkflow(_:staged:)``): one lookup of the staging where a read and a write
    /// would each make one. Until that write, reads of the workflow see it as before.
    func workflowForWriting(_ id: String) throws(EngineError) -> (workflow: Workflow, staged: StagedWorkflow)? {
        if let s = staged[id] {
            guard let w = s.working else { return nil }  // deleted
            return (w, s)
        }
        guard let (e, w) = try committedEntry(id) else { return nil }
        let s = StagedWorkflow(id: id, original: w, entry: e)
        s.working = w
        staged[id] = s
        touched.append(s)
        return (w, s)
    }

    /// The workflow found (``find(_:)``) as this call sees it and, if the call touched it
    /// already, its staging, for a caller that may write it (``putWorkflow(_:staged:original:entry:)``).
    /// Without a staging, the workflow's entry in the engine's state comes with it, for the
    /// staging a write makes.
    func workflowAndStaging(_ found: Found) throws(EngineError)
        -> (workflow: Workflow, staged: StagedWorkflow?, entry: WorkflowEntry?)?
    {
        if let s = found.staged {
            guard let w = s.working else { return nil }  // deleted
            return (w, s, nil)
        }
        guard let e = found.entry, let w = try committedWorkflow(of: e) else { return nil }
        return (w, nil, e)
    }

    /// A workflow as this call finds it: its staging if the call touched it, else its entry in
    /// the engine's state (nil for both: no such workflow).
    struct Found {
        let staged: StagedWorkflow?
        let entry: WorkflowEntry?

        /// Its runs queued and holding a slot, as the call sees them.
        var counts: QueueCounts { staged?.counts ?? entry?.queueCounts ?? QueueCounts() }
    }

    /// Workflow `id` as this call finds it, with one lookup of its staging and, when it has
    /// none, one of its entry: for a caller that reads its counts and then maybe its workflow
    /// (the scheduler's turn), which would otherwise look both up twice.
    func find(_ id: String) -> Found {
        if let s = staged[id] { return Found(staged: s, entry: nil) }
        return Found(staged: nil, entry: state.entries[id])
    }

    /// ``find(_:)`` for a workflow in the scheduler's lines: its place there is its entry (a line
    /// holds only workflows of the engine's state), so only its staging is looked up.
    func find(_ place: LinePlace) -> Found {
        if let s = staged[place.id] { return Found(staged: s, entry: nil) }
        guard let e = place as? WorkflowEntry else { return find(place.id) }
        return Found(staged: nil, entry: e)
    }

    /// Stages a changed workflow: into `staged` when the call touched it already, else into a
    /// staging made now from `original`, the committed version the caller read, and `entry`,
    /// its entry in the engine's state (so neither is looked up again).
    func putWorkflow(_ w: Workflow, staged: StagedWorkflow?, original: Workflow, entry: WorkflowEntry?) {
        if let staged { return putWorkflow(w, staged: staged) }
        let s = StagedWorkflow(id: w.workflowId, original: original, entry: entry)
        if let earlier = self.staged.updateValue(s, forKey: s.id) {
            // Staged since the caller read it (nothing does so today): keep that staging, so the
            // workflow is never staged twice, and its committed version and counts stay right.
            assertionFailure("workflow \(s.id) was staged between its read and its write")
            self.staged[s.id] = earlier
            return putWorkflow(w, staged: earlier)
        }
        touched.append(s)
        putWorkflow(w, staged: s)
    }

    /// Stages a new or changed workflow.
    func putWorkflow(_ w: Workflow) { putWorkflow(w, staged: staging(w.workflowId)) }

    /// Stages a changed workflow whose staging the caller holds (``workflowForWriting(_:)``).
    func putWorkflow(_ w: Workflow, staged s: StagedWorkflow) {
        let id = s.id
        s.working = w
        // Runs written during the call are the touched ones (a loaded workflow starts clean).
        func noteJob(_ i: Int) {
            if let jobId = w.runs[i].jobId { stagedJobs[jobId] = (w.runs[i].runId, id) }
        }
        if w.runs.wholesale {
            for i in w.runs.indices { noteJob(i) }
        } else {
            for i in w.runs.touched where i < w.runs.count { noteJob(i) }
        }
        let counts = QueueCounts(w)
        let before = s.counts
        queueDelta.add(counts, minus: before)
        if before.queuedRemote == 0, counts.queuedRemote > 0, startedWaiting.remote[id] == nil {
            startedWaiting.remote[id] = startedWaiting.remote.count
        }
        if before.queuedLocal == 0, counts.queuedLocal > 0, startedWaiting.local[id] == nil {
            startedWaiting.local[id] = startedWaiting.local.count
        }
        s.counts = counts
    }

    /// Stages a workflow's deadline. One the committed queue already holds, for a key this call
    /// has not staged, is left out: applying it would change nothing, and reads see the same
    /// deadline either way.
    func setTimer(_ id: String, at: Timestamp?, order: Int64) {
        if !timers.keys.contains(id), state.timers.deadline(id) == at { return }
        timers.set(id, at: at, order: order)
    }

    /// Something gating reads outside the workflows changed (a tool registered, the network):
    /// no workflow counts as up to date until it is reconciled again.
    func gatingInputsDidChange() {
        gatingInputsChanged = true
        reconciledNow.removeAll()
    }

    /// ``RulesContext/isReconciled(_:)``: reconciled in full during this call, or before it with
    /// nothing gating reads changed since.
    func isReconciled(_ workflowId: String) -> Bool {
        reconciledNow.contains(workflowId) || (!gatingInputsChanged && state.reconciled.contains(workflowId))
    }

    func markReconciled(_ workflowId: String) { reconciledNow.insert(workflowId) }

    func deleteWorkflow(_ id: String) {
        let s = staging(id)
        s.working = nil
        s.deleted = true
        queueDelta.add(QueueCounts(), minus: s.counts)
        s.counts = QueueCounts()
    }

    /// Whether this call deleted workflow `id`.
    func deleted(_ id: String) -> Bool { staged[id]?.deleted ?? false }

    /// Ids of every workflow, committed or new in this call, minus deleted, in creation order.
    func allWorkflowIds() -> [String] {
        var seqs: [(Int64, String)] = state.entries.values.filter { !deleted($0.id) }.map { ($0.summary.seq, $0.id) }
        for s in touched where s.entry == nil { if let w = s.working { seqs.append((w.seq, s.id)) } }
        return seqs.sorted { $0.0 < $1.0 }.map(\.1)
    }

    var touchedWorkflowIds: [String] { touched.map(\.id) }

    // MARK: Assets

    func asset(_ id: String) throws(EngineError) -> Asset? {
        if let staged = assets[id] { return staged }
        if let a = state.assets[id] { return a }
        do {
            guard let a = try store.loadAsset(id) else { return nil }
            state.assets[id] = a
            return a
        } catch {
            throw EngineError.storeRead(error, "cannot read asset \(id)")
        }
    }

    /// The type of asset `id`, read where the asset is (no copy of it is made).
    func assetType(_ id: String) throws(EngineError) -> String? {
        if let i = assets.index(forKey: id) { return assets.values[i]?.type }
        if let i = state.assets.index(forKey: id) { return state.assets.values[i].type }
        return try asset(id)?.type
    }

    func putAsset(_ a: Asset) { assets[a.assetId] = .some(a) }

    func deleteAsset(_ id: String) { assets[id] = .some(nil) }

    // MARK: Effects

    /// Adds an effect to the outbox. `body` carries the effect's own fields; `id` and `type` are added.
    @discardableResult
    func emit(_ type: String, _ body: consuming JSONObject, answerKey: String? = nil) -> Effect {
        let seq = nextNumber("effect")
        let id = ShortText.id("e", seq)
        var full = body
        if full.contains("id") || full.contains("type") {
            var rest = JSONObject(minimumCapacity: full.count + 2)
            for (k, v) in full where k != "id" && k != "type" { rest.append(uniqueKey: k, v) }
            full = rest
        }
        // The id and type come first; the rules' members after them, in their order.
        full.prepend(uniqueKey: "type", .string(type))
        full.prepend(uniqueKey: "id", .string(id))
        let effect = Effect(seq: seq, id: id, type: type, body: full, answerKey: answerKey)
        newEffects.append(effect)
        return effect
    }

    /// Effects on record for an answer key (committed and new, minus those removed in this call).
    func effects(answerKey: String) -> [Effect] {
        var result = state.outbox.effects(answerKey: answerKey).filter { !deletedSeqs.contains($0.seq) }
            .map { e -> Effect in
                var copy = e
                if takenSeqs.contains(e.seq) { copy.taken = true }
                return copy
            }
        result.append(contentsOf: newEffects.filter { $0.answerKey == answerKey && !deletedSeqs.contains($0.seq) })
        return result
    }

    /// The answering event arrived, or the work is obsolete: the effects on record for the key
    /// are dropped, taken or not.
    func settle(answerKey: String) {
        // As `effects(answerKey:)` finds them, without copying the effects: by their seqs.
        for seq in state.outbox.seqs(answerKey: answerKey) where !deletedSeqs.contains(seq) { removeEffect(seq) }
        guard !newEffects.isEmpty else { return }
        for e in newEffects where e.answerKey == answerKey && !deletedSeqs.contains(e.seq) { removeEffect(e.seq) }
    }

    func removeEffect(_ seq: Int64) {
        if let i = newEffects.firstIndex(where: { $0.seq == seq }) {
            newEffects.remove(at: i)
        } else {
            deletedSeqs.insert(seq)
        }
    }

    /// Hands out up to `max` pending effects, oldest first. Taking acknowledges the effects
    /// nothing answers that earlier takes handed out (`cache.evict`, `notify.withdraw`): they
    /// leave the record now, so a host killed before acting on one gets it again after a reopen.
    func take(max: Int) -> [Effect] {
        for seq in state.outbox.takenUnanswerable { removeEffect(seq) }
        for seq in takenUnanswerableInCall { removeEffect(seq) }
        takenUnanswerableInCall = []
        let holdingRemote = !isOnline
        var out = state.outbox.pending(limit: max, excluded: takenSeqs.union(deletedSeqs), holdingRemote: holdingRemote)
        if out.count < max {
            for i in newEffects.indices where !newEffects[i].taken && out.count < max {
                if holdingRemote && newEffects[i].needsNetwork { continue }
                out.append(newEffects[i])
            }
        }
        for e in out {
            if AnswerKey.answeredByTaking(e.answerKey) { takenUnanswerableInCall.append(e.seq) }
            if let i = newEffects.firstIndex(where: { $0.seq == e.seq }) {
                newEffects[i].taken = true
            } else {
                takenSeqs.insert(e.seq)
            }
        }
        return out
    }

    /// Pending effects a take would hand out now (those needing the network are held while offline).
    var pendingEffectCount: Int {
        let holdingRemote = !isOnline
        // Committed pending effects this call took or removed (each counted once).
        var goneCount = 0
        var goneNeedingNetwork = 0
        func count(_ seq: Int64) {
            guard let e = state.outbox.bySeq[seq], !e.taken else { return }
            goneCount += 1
            if holdingRemote, e.needsNetwork { goneNeedingNetwork += 1 }
        }
        for seq in takenSeqs { count(seq) }
        for seq in deletedSeqs where !takenSeqs.contains(seq) { count(seq) }
        var n = state.outbox.pendingCount - goneCount
        if holdingRemote { n -= state.outbox.pendingNeedingNetwork - goneNeedingNetwork }
        for e in newEffects where !e.taken && !(holdingRemote && e.needsNetwork) { n += 1 }
        return n
    }

    // MARK: Cache entries

    func cacheEntry(_ assetId: String, _ variant: String) -> CacheEntry? {
        let key = ChangeSet.cacheKey(assetId, variant)
        if let staged = cacheEntries[key] { return staged }
        return state.cacheEntries[key]
    }

    func putCacheEntry(_ e: CacheEntry) { cacheEntries[ChangeSet.cacheKey(e.assetId, e.variant.rawValue)] = .some(e) }

    func deleteCacheEntry(_ assetId: String, _ variant: String) {
        cacheEntries[ChangeSet.cacheKey(assetId, variant)] = .some(nil)
    }

    /// Every cache entry as this call sees it.
    func allCacheEntries() -> [CacheEntry] {
        var all = state.cacheEntries
        for (k, v) in cacheEntries { all[k] = v }
        return Array(all.values)
    }

    // MARK: Telemetry and logs

    func metric(_ name: String, _ fields: JSONObject = [:]) {
        var body = fields
        body["event"] = .string(name)  // the engine's fields win over a caller's
        body["at"] = JSON(now)
        metrics.append(MetricEvent(seq: nextNumber("metric"), body: body))
    }

    /// Logged after the call commits (a rolled-back call logs nothing). Log lines name assets by
    /// id only; callers must never pass media, file contents or personal data. A line below the
    /// configured level is dropped here, before it is kept.
    func log(_ level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata = [:]) {
        guard wouldLog(level) else { return }
        logs.append((level, message, metadata))
    }

    /// Whether a line at `level` would be logged (the configured level or above): callers skip
    /// building lines nobody reads.
    func wouldLog(_ level: Logger.Level) -> Bool { level >= config.logLevel }

    // MARK: Commit

    /// Writes every staged change in one store transaction, then applies it to memory. The
    /// touched workflows' summaries are those settling staged (``StagedWorkflow/summary``).
    func commit(logger: Logger) throws(EngineError) {
        // A workflow this call created is stored and kept with its summary: settling makes one
        // for every workflow a call touched, and a commit without it would store the workflow's
        // records without its row, and keep it out of memory. Refused before anything is written.
        if let s = touched.first(where: { $0.entry == nil && $0.working != nil && $0.summary == nil }) {
            rollback()
            throw .internal("workflow \(s.id) was not summarised before its commit; nothing was changed")
        }
        do {
            // The change set is made here and gone when the store is done with it: its
            // `WorkflowWrite`s hold the call's versions, which `apply` then changes in place
            // (held twice, the first change would copy each one's fields).
            try store.commit(changeSet())
        } catch let e as StoreError where e.code == "storeInUse" {
            rollback()
            throw EngineError(.store, e.code, "the change was not saved; nothing was changed: \(e.message)",
                              details: ["store": .string(config.store)])
        } catch {
            rollback()
            throw EngineError(.store, "storeWriteFailed", "the change could not be saved; nothing was changed: \(error)",
                              details: ["store": .string(config.store)])
        }
        apply()
        for (level, message, metadata) in logs { logger.log(level: level, message, metadata: metadata) }
    }

    /// What the call changed, for the store; works out each touched workflow's changes
    /// (``StagedWorkflow/changes``) on the way.
    private func changeSet() -> ChangeSet {
        var cs = ChangeSet()
        for (k, v) in counters { cs.meta[MetaKey.counter(k)] = .int(v) }
        for (k, v) in meta { cs.meta[k] = v }
        if let online { cs.meta[MetaKey.online] = .bool(online) }
        if let active = activeWorkflowId { cs.meta[MetaKey.activeWorkflow] = JSON(active) }
        cs.templates = templates.map(\.stored)
        cs.tools = Array(tools.values)
        cs.providerDefaults = providerDefaults
        for s in touched {
            let old = s.original
            if s.deleted {
                cs.workflows.append(WorkflowWrite(old, nil, nil))
            } else if let new = s.working {
                let c = new.changes(since: old)
                s.changes = c
                let summaryChanged = s.summary != s.committedSummary
                if !c.isEmpty || summaryChanged {
                    // The workflow's row holds its own fields and its summary: when neither
                    // changed (a progress report), the row already says all of it.
                    cs.workflows.append(WorkflowWrite(old, new, c.record || summaryChanged ? s.summary : nil, changes: c))
                }
            }
        }
        cs.assets = assets
        // Effects kept in memory only (`Effect.isDurable`) never reach the store.
        cs.effectInserts = newEffects.filter(\.isDurable)
        cs.effectsTaken = takenSeqs.isEmpty ? [] : takenSeqs.subtracting(deletedSeqs).filter { state.outbox.isDurable($0) }
        cs.effectDeletes = deletedSeqs.filter { state.outbox.isDurable($0) }
        cs.cacheEntries = cacheEntries
        cs.metricInserts = metrics.filter { $0.seq > (metricsDeletedThrough ?? 0) }  // not taken in this call
        cs.metricDeletesThrough = metricsDeletedThrough
        // The queue keeps the newest events (their numbers have no gaps): older ones go.
        if let last = metrics.last?.seq, last > Int64(config.maxQueuedMetrics) {
            cs.metricDeletesThrough = max(metricsDeletedThrough ?? 0, last - Int64(config.maxQueuedMetrics))
        }
        return cs
    }

    /// Puts back what reading set aside; nothing staged reaches memory.
    func rollback() {
        state.timers.restore(setAsideTimers)
        state.cacheTimers.restore(setAsideCacheTimers)
        setAsideTimers = []
        setAsideCacheTimers = []
    }

    private func apply() {
        for (k, v) in counters { state.counters[k] = v }
        if gatingInputsChanged { state.reconciled.removeAll(keepingCapacity: true) }
        state.reconciled.formUnion(reconciledNow)
        for s in touched where s.deleted { state.reconciled.remove(s.id) }
        if let t = meta[MetaKey.clockNow]?.stringValue.flatMap(Timestamp.init(rfc3339:)) { state.manualNow = t }
        if let online { state.online = online }
        if let active = activeWorkflowId { state.activeWorkflowId = active }
        if let runs = meta[MetaKey.submitsOfDeletedWorkflows]?.objectValue { state.submitsOfDeletedWorkflows = runs }
        if let jobs = meta[MetaKey.jobsToCancel]?.objectValue { state.jobsToCancel = jobs }
        for t in templates {
            state.templates[t.templateId] = t
            state.templateOrder.append(t.templateId)
            state.templateByText[t.stored.canonicalText] = t.templateId
        }
        for (k, t) in tools { state.tools[k] = RegisteredTool(t) }
        for (k, p) in providerDefaults { state.providerDefaults[k] = p }
        // The staged versions move into the committed state (this unit of work is done with
        // them): taken out of their tables, not copied.
        for s in touched {
            let id = s.id
            let original = s.original
            if s.deleted {
                state.removeEntry(id)
                state.quietLoaded[id] = nil
                for r in original?.runs ?? [] {
                    state.activeRuns[r.runId] = nil
                    if let j = r.jobId { state.jobs[j] = nil }
                }
                for a in original?.awaits ?? [] { state.openAwaits[a.awaitId] = nil }
                continue
            }
            guard var w = s.working, let c = s.changes else { continue }
            s.working = nil  // taken out, not copied: `w` is the only reference now
            w.markClean()  // now what the store holds
            // Index the runs and awaits that changed. A run whose committed version had the same
            // job id and was as finished (or not) is indexed already.
            for i in c.runs {
                let terminal = w.runs[i].status.isTerminal
                if let original, i < original.runs.count, original.runs[i].runId == w.runs[i].runId,
                    original.runs[i].jobId == w.runs[i].jobId, original.runs[i].status.isTerminal == terminal
                {
                    continue
                }
                state.activeRuns[w.runs[i].runId] = terminal ? nil : id
                if let j = w.runs[i].jobId { state.jobs[j] = terminal ? nil : w.runs[i].runId }
            }
            for i in c.awaits {
                state.openAwaits[w.awaits[i].awaitId] = w.awaits[i].isOpen ? id : nil
            }
            // Into the workflow's entry, found when the staging was made (entries change only
            // here); a workflow this call created gets one.
            let summary = s.summary
            if let e = s.entry {
                e.workflow = w
                if let summary { state.setSummary(e, summary) }
                state.noteUse(e, quiet: summary != nil ? s.quiet : EngineState.isQuiet(e.summary))
            } else if let summary {  // always, for a new one (checked by `commit`)
                let e = WorkflowEntry(summary, workflow: w)
                state.addEntry(e)
                state.noteUse(e, quiet: s.quiet)
            }
        }
        for (id, a) in assets { state.assets[id] = a }
        for seq in deletedSeqs { state.outbox.remove(seq) }
        for seq in takenSeqs where !deletedSeqs.contains(seq) { state.outbox.markTaken(seq) }
        for e in newEffects { state.outbox.insert(e) }
        state.outbox.compact()
        for (k, e) in cacheEntries { state.cacheEntries[k] = e }
        // What reading set aside goes back first: a key the call staged back to its committed
        // deadline is left as it is by `apply`, and must still be in the heap.
        state.timers.restore(setAsideTimers)
        state.cacheTimers.restore(setAsideCacheTimers)
        setAsideTimers = []
        setAsideCacheTimers = []
        state.timers.apply(timers)
        state.cacheTimers.apply(cacheTimers)
    }
}

extension EngineError {
    /// A failed read of the store: `storeInUse` when another engine owns the file now (a read
    /// may first write the store's journal to its tables), `storeCorrupt` when it holds what the
    /// engine never writes or SQLite finds the file damaged, else `storeReadFailed`.
    static func storeRead(_ error: Error, _ what: String) -> EngineError {
        if let code = StoreError.code(of: error), code == "storeInUse" || code == "storeCorrupt" {
            return EngineError(.store, code, "\(what): \((error as? StoreError)?.message ?? "\(error)")")
        }
        return EngineError(.store, "storeReadFailed", "\(what): \(error)")
    }
}

/// A workflow one call touched: the committed version it started from, the call's version, and
/// what the call worked out about it (queue counts, summary, changes), found with one lookup:
/// a call reads and writes these again and again (the event, the scheduler's start, the
/// summary, the commit), and a lookup in a table keyed by the workflow's id each time cost more
/// than the rest of most of them.
final class StagedWorkflow {
    let id: String
    /// The committed version (nil: created by this call).
    let original: Workflow?
    /// Its entry in the engine's state (nil: it has none, created by this call), where the
    /// commit puts the call's version and summary.
    let entry: WorkflowEntry?
    /// Its summary and queue counts as committed (the entry's when the staging is made): read
    /// again by the summary, the commit and the scheduler's queues, and unchanged until the
    /// commit (only ``UnitOfWork/commit(logger:)`` changes the engine's state, and the
    /// scheduler's queues after it).
    let committedSummary: WorkflowSummary?
    let committedCounts: QueueCounts
    /// The call's version; nil once the call deleted it.
    @exclusivity(unchecked) var working: Workflow?
    @exclusivity(unchecked) var deleted = false
    /// The queue counts of `working` as last staged (at first, the committed ones).
    @exclusivity(unchecked) var counts: QueueCounts
    /// The summary settling made, for the commit, and whether it is quiet (``EngineState/isQuiet(_:)``).
    @exclusivity(unchecked) var summary: WorkflowSummary?
    @exclusivity(unchecked) var quiet = false
    /// What differs from `original`, worked out by the commit.
    @exclusivity(unchecked) var changes: WorkflowChanges?

    /// A staging of workflow `id`, from its committed version (nil: created by this call) and its
    /// entry in the engine's state (nil: none yet), whose summary and counts it keeps.
    init(id: String, original: Workflow?, entry: WorkflowEntry?) {
        self.id = id
        self.original = original
        self.entry = entry
        committedSummary = entry?.summary
        committedCounts = entry?.queueCounts ?? QueueCounts()
        counts = committedCounts
    }
}
