import WorkflowCore
import WorkflowStore

/// The two queues (remote and local) across all workflows: global caps from the config,
/// per-workflow caps from each template's `options.concurrency`; the active workflow is served
/// first, then workflows take turns (round-robin), and within a workflow runs start in graph
/// order. Nobody starves: a workflow that was served goes to the back of the line.
///
/// A workflow's committed queued and slot-holding runs are its committed summary's
/// (``WorkflowEntry``), read without loading the workflow; a call sees them through the changes
/// it has staged. The queues' totals and lines follow each commit's changes to them.
final class Scheduler {
    struct Queue {
        var totalQueued = 0
        var totalRunning = 0
        /// Workflows with queued runs, in turn order: least recently served first (never served
        /// before any served), ties in arrival order. When each was last served is in its
        /// ``LinePlace``.
        let rotation: Rotation
        var serveCounter: Int64 = 0

        init(remote: Bool) { rotation = Rotation(remote: remote) }

        /// When `place` was last served in this queue (0: never).
        func lastServed(_ place: LinePlace) -> Int64 { rotation.remote ? place.lastServed.remote : place.lastServed.local }

        /// Workflow `place`'s runs in this queue went from `old` to `new`: the totals follow, and
        /// it leaves the line when nothing of it waits any more. Returns whether it starts
        /// waiting: it then joins the line now, unless `joinNow` is false (the caller calls
        /// ``join(_:)``).
        @discardableResult
        mutating func update(_ place: LinePlace, from old: (queued: Int, running: Int), to new: (queued: Int, running: Int),
                             joinNow: Bool = true) -> Bool {
            totalQueued += new.queued - old.queued
            totalRunning += new.running - old.running
            assert((old.queued > 0) == rotation.contains(place), "the line holds exactly the workflows with queued runs")
            if new.queued == 0, old.queued > 0 {
                rotation.remove(place)
            } else if new.queued > 0, old.queued == 0 {
                if joinNow { join(place) }
                return true
            }
            return false
        }

        /// `place` started waiting: it joins the line by when it was last served.
        func join(_ place: LinePlace) { rotation.insert(place, lastServed: lastServed(place)) }

        /// `place` had its turn: it goes to the back of the line.
        mutating func served(_ place: LinePlace) {
            serveCounter += 1
            if rotation.remote { place.lastServed.remote = serveCounter } else { place.lastServed.local = serveCounter }
            if rotation.contains(place) { rotation.insert(place, lastServed: serveCounter) }
        }
    }

    @exclusivity(unchecked) private(set) var remote = Queue(remote: true)
    @exclusivity(unchecked) private(set) var local = Queue(remote: false)
    /// Workflows served in the current call, to move to the back once it commits: each with its
    /// entry (nil for one the call created, which has its entry once the call commits).
    @exclusivity(unchecked) private var served: (remote: [(String, WorkflowEntry?)], local: [(String, WorkflowEntry?)]) = ([], [])

    func queue(_ c: ResourceClass) -> Queue { c == .remote ? remote : local }

    /// Workflow `place`'s committed counts went from `old` to `new`. Returns whether it started
    /// waiting in each queue; it joins that queue's line at once, unless `deferJoins` (the caller
    /// then calls `join`, to order the workflows that started waiting together).
    @discardableResult
    private func setCommitted(_ place: LinePlace, _ new: QueueCounts, old: QueueCounts,
                              deferJoins: Bool = false) -> (remote: Bool, local: Bool) {
        guard new != old else { return (false, false) }
        var joins = (remote: false, local: false)
        if new.queuedRemote != old.queuedRemote || new.runningRemote != old.runningRemote {
            joins.remote = remote.update(place, from: (old.queuedRemote, old.runningRemote),
                                         to: (new.queuedRemote, new.runningRemote), joinNow: !deferJoins)
        }
        if new.queuedLocal != old.queuedLocal || new.runningLocal != old.runningLocal {
            joins.local = local.update(place, from: (old.queuedLocal, old.runningLocal),
                                       to: (new.queuedLocal, new.runningLocal), joinNow: !deferJoins)
        }
        return joins
    }

    /// Builds the queues from the workflows' persisted summaries (rehydration, on a scheduler
    /// that has none). When each workflow was last served is not persisted, so the line is
    /// rebuilt from what is: a workflow holding a slot in a queue has been served there, and goes
    /// behind every workflow that holds none (those waiting only); within each group, the order
    /// the workflows last changed (a serve changes one), ties in creation order. So a host that
    /// restarts after every job still sees its workflows take turns, and restarts starve nobody.
    func load(_ entries: [WorkflowEntry]) {
        // What the order and the queues read of each summary, read once: the summary is an object
        // of its own, and a sort reading it at every comparison chased two pointers each time.
        let ordered = entries.map { (updatedAt: $0.summary.updatedAt, seq: $0.summary.seq, counts: $0.queueCounts, entry: $0) }
            .sorted { ($0.updatedAt, $0.seq) < ($1.updatedAt, $1.seq) }
        for w in ordered {
            if w.counts.runningRemote > 0 { remote.served(w.entry) }
            if w.counts.runningLocal > 0 { local.served(w.entry) }
        }
        for w in ordered { setCommitted(w.entry, w.counts, old: QueueCounts()) }
    }

    // MARK: A call's view

    /// A workflow's runs queued and holding a slot in `c`, as the call sees them.
    private func counts(_ found: UnitOfWork.Found, _ c: ResourceClass) -> (queued: Int, running: Int) {
        let counts = found.counts
        return c == .remote ? (counts.queuedRemote, counts.runningRemote) : (counts.queuedLocal, counts.runningLocal)
    }

    /// Runs holding a slot in `c`, including this call's changes.
    func running(_ uow: UnitOfWork, _ c: ResourceClass) -> Int {
        queue(c).totalRunning + (c == .remote ? uow.queueDelta.runningRemote : uow.queueDelta.runningLocal)
    }

    func queued(_ uow: UnitOfWork, _ c: ResourceClass) -> Int {
        queue(c).totalQueued + (c == .remote ? uow.queueDelta.queuedRemote : uow.queueDelta.queuedLocal)
    }

    /// Starts queued runs while there are free slots: the active workflow first, then one run per
    /// workflow per sweep, in turn order. Remote work waits while the network is down.
    func pass(_ uow: UnitOfWork, engine: Engine) throws(EngineError) {
        for c in [ResourceClass.remote, .local] {
            if c == .remote, !uow.isOnline { continue }
            let cap = c == .remote ? uow.config.remoteConcurrency : uow.config.localConcurrency
            var running = self.running(uow, c)
            guard running < cap, queued(uow, c) > 0 else { continue }
            let line = queue(c)
            let committed = line.rotation  // not changed until the call commits
            // Turn order: least recently served first, never served before any served, as one
            // line: the committed rotation, with the workflows this call queued for the first
            // time merged into it by when they were last served (behind those of the line served
            // no later, who waited longer), ties in the order they started waiting in the call.
            // So a batch serves as its calls would one by one.
            let waiting = c == .remote ? uow.startedWaiting.remote : uow.startedWaiting.local
            func lastServed(_ s: StagedWorkflow) -> Int64 { s.entry.map(line.lastServed) ?? 0 }
            let fresh = uow.touched.filter { s in !(s.entry.map(committed.contains) ?? false) }
                .sorted { (lastServed($0), waiting[$0.id] ?? Int.max) < (lastServed($1), waiting[$1.id] ?? Int.max) }
            let active = uow.activeWorkflow
            if let active {
                // The active workflow is served until its queue or its cap runs out.
                while running < cap, try startNext(uow, active, c) {
                    running = self.running(uow, c)
                }
            }
            var progressed = true
            /// Gives workflow `id` (as the call finds it) its turn; false once the queue is full.
            func turn(_ id: String, _ found: @autoclosure () -> UnitOfWork.Found) throws(EngineError) -> Bool {
                guard id != active else { return true }
                guard running < cap else { return false }
                let found = found()
                let now = counts(found, c)
                guard now.queued > 0 else { return true }
                if try startNext(uow, id, c, found: found, counts: now) {
                    progressed = true
                    running = self.running(uow, c)
                }
                return true
            }
            func turn(_ s: StagedWorkflow) throws(EngineError) -> Bool { try turn(s.id, UnitOfWork.Found(staged: s, entry: nil)) }
            sweep: while running < cap, progressed {
                progressed = false
                var next = 0  // the first of `fresh` not given its turn yet in this sweep
                for place in committed {
                    if next < fresh.count {
                        let served = line.lastServed(place)
                        while next < fresh.count, lastServed(fresh[next]) < served {
                            guard try turn(fresh[next]) else { break sweep }
                            next += 1
                        }
                    }
                    guard try turn(place.id, uow.find(place)) else { break sweep }
                }
                while next < fresh.count {
                    guard try turn(fresh[next]) else { break sweep }
                    next += 1
                }
            }
        }
    }

    /// Starts workflow `id`'s first queued run of class `c` in graph order, if its own cap
    /// allows. Returns whether a run left the queue.
    /// `found` and `counts`: the workflow as ``UnitOfWork/find(_:)`` found it, and its counts in
    /// this queue as the call sees them, when the caller has them.
    private func startNext(_ uow: UnitOfWork, _ id: String, _ c: ResourceClass, found given: UnitOfWork.Found? = nil,
                           counts givenCounts: (queued: Int, running: Int)? = nil) throws(EngineError) -> Bool {
        let lookup = given ?? uow.find(id)
        let now = givenCounts ?? counts(lookup, c)  // as staged with the workflow this call sees
        guard now.queued > 0, let (committedOrStaged, staged, entry) = try uow.workflowAndStaging(lookup) else {
            return false
        }
        var wf = committedOrStaged
        let executor = try uow.executor(for: wf)
        let options = executor.graph.template.options
        let workflowCap = (c == .remote ? options.remoteConcurrency : options.localConcurrency) ?? Int.max
        guard now.running < workflowCap else { return false }
        let mode: RunMode = c == .remote ? .remote : .local
        // The first queued run in graph order: a queued run is its node's current run, with the
        // node ready (local) or queued (remote), so the nodes are looked at in graph order (their
        // state in place) and only the chosen one's run is looked up.
        let waiting: NodeState = c == .remote ? .queuedRemote : .ready
        var found: (run: Int, node: Int)?
        for n in executor.graph.order where wf.nodes[n].state == waiting {
            guard let runId = wf.nodes[n].currentRunId, let r = wf.runIndex(runId),
                  wf.runs[r].mode == mode, wf.runs[r].status == .queued else { continue }
            found = (r, n)
            break
        }
        guard let (pick, node) = found else { return false }
        try executor.beginRun(&wf, runIndex: pick, node: node)
        if wf.runs[pick].status == .failed {
            try executor.reconcile(&wf)  // it never started (inputAssetGone): its consumers notice
        }
        uow.putWorkflow(wf, staged: staged, original: committedOrStaged, entry: entry)
        let served = (id, lookup.entry ?? lookup.staged?.entry)
        if c == .remote { self.served.remote.append(served) } else { self.served.local.append(served) }
        return true
    }

    // MARK: After commit

    /// Updates the queues' totals and lines with a committed call's workflows, and sends the
    /// workflows it served to the back of their queue's line.
    func committed(_ uow: UnitOfWork) {
        // A workflow the call created has its entry since the commit.
        for (id, e) in served.remote { if let e = e ?? uow.state.entries[id] { remote.served(e) } }
        for (id, e) in served.local { if let e = e ?? uow.state.entries[id] { local.served(e) } }
        var joiners: (remote: [WorkflowEntry], local: [WorkflowEntry]) = ([], [])
        for s in uow.touched {
            if s.deleted {
                // Gone from the engine's state with its entry, and so from the lines.
                if let e = s.entry { setCommitted(e, QueueCounts(), old: s.committedCounts) }
                continue
            }
            guard let e = s.entry ?? uow.state.entries[s.id] else { continue }
            let joins = setCommitted(e, s.counts, old: s.committedCounts, deferJoins: true)
            if joins.remote { joiners.remote.append(e) }
            if joins.local { joiners.local.append(e) }
        }
        // Workflows that started waiting join their line in the order they did (as the call's
        // own pass took them), behind those of the line served no later.
        for (c, entries) in [(ResourceClass.remote, joiners.remote), (.local, joiners.local)] where !entries.isEmpty {
            let order = c == .remote ? uow.startedWaiting.remote : uow.startedWaiting.local
            let sorted = entries.enumerated().sorted {
                (order[$0.element.id] ?? Int.max, $0.offset) < (order[$1.element.id] ?? Int.max, $1.offset)
            }
            for (_, e) in sorted {
                if c == .remote { remote.join(e) } else { local.join(e) }
            }
        }
        served = ([], [])
    }

    /// A call that did not commit served nobody.
    func rolledBack() { served = ([], []) }
}

/// Runs waiting for, and holding, a slot in each queue, for one workflow.
struct QueueCounts: Equatable {
    var queuedRemote = 0
    var runningRemote = 0
    var queuedLocal = 0
    var runningLocal = 0

    init(queuedRemote: Int = 0, runningRemote: Int = 0, queuedLocal: Int = 0, runningLocal: Int = 0) {
        self.queuedRemote = queuedRemote
        self.runningRemote = runningRemote
        self.queuedLocal = queuedLocal
        self.runningLocal = runningLocal
    }

    /// The counts a summary holds (what its workflow's were when it was made).
    init(_ s: WorkflowSummary) {
        self.init(queuedRemote: s.queuedRemote, runningRemote: s.runningRemote, queuedLocal: s.queuedLocal,
                  runningLocal: s.runningLocal)
    }

    init(_ wf: Workflow) {
        for i in wf.runs.indices where !wf.runs[i].status.isTerminal {
            let queued = wf.runs[i].status == .queued ? 1 : 0
            let slot = wf.runs[i].holdsSlot ? 1 : 0
            switch wf.runs[i].mode {
            case .remote:
                queuedRemote += queued
                runningRemote += slot
            case .local:
                queuedLocal += queued
                runningLocal += slot
            case .interactive:
                break
            }
        }
    }

    mutating func add(_ a: QueueCounts, minus b: QueueCounts) {
        queuedRemote += a.queuedRemote - b.queuedRemote
        runningRemote += a.runningRemote - b.runningRemote
        queuedLocal += a.queuedLocal - b.queuedLocal
        runningLocal += a.runningLocal - b.runningLocal
    }
}
