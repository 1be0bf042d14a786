import WorkflowCore
import WorkflowStore

extension Engine {
    /// After an op: starts what the queues allow, then refreshes the deadlines of every workflow
    /// the call touched.
    func settleTouched(_ uow: UnitOfWork) throws(EngineError) {
        try scheduler.pass(uow, engine: self)
        try stageDeadlines(uow)
    }

    /// Stages the deadline of every workflow the call has touched so far, so that what comes
    /// later in the same call (a `batch`'s `engine.nextDeadline` or `clock.advance`) sees the
    /// deadlines earlier calls set, as separate calls would.
    func stageDeadlines(_ uow: UnitOfWork) throws(EngineError) {
        for s in uow.touched {
            guard let wf = s.working else {
                uow.setTimer(s.id, at: nil, order: 0)
                continue
            }
            let executor = try uow.executor(for: wf)
            uow.setTimer(s.id, at: executor.nextDeadline(wf), order: wf.seq)
        }
    }

    /// Settles the call and stages fresh summaries of the workflows it touched
    /// (``StagedWorkflow/summary``): as ``settleTouched(_:)``, with each deadline taken from the
    /// summary that computes it anyway.
    func settle(_ uow: UnitOfWork) throws(EngineError) {
        try scheduler.pass(uow, engine: self)
        for s in uow.touched {
            guard let wf = s.working else {
                uow.setTimer(s.id, at: nil, order: 0)
                continue
            }
            let summary = try summary(uow, wf, staged: s)
            uow.setTimer(s.id, at: summary.nextDeadline, order: wf.seq)
            s.quiet = EngineState.isQuiet(summary)
            s.summary = summary
        }
    }

    /// What the list, the timers and the scheduler keep about a workflow (`staged`: what the call
    /// staged of it, looked up when not given).
    func summary(_ uow: UnitOfWork, _ wf: Workflow, staged given: StagedWorkflow? = nil) throws(EngineError) -> WorkflowSummary {
        let staged = given ?? uow.stagedEntry(wf.workflowId)
        // Node titles and ids are searched through the template; only the title is the workflow's.
        let committed = if let staged { staged.committedSummary } else { uow.state.summary(wf.workflowId) }
        let search = committed?.title == wf.title ? committed!.searchText : TextSearch.fold(wf.title)
        // As badges.get counts: the count is of pending awaits (snoozed ones wait quietly); the red
        // dot stays while an open blocking await, pending or snoozed, holds the workflow up.
        // Counts over nodes and awaits the call left as committed are the committed summary's:
        // the workflow is its committed version plus writes at the touched positions, so when
        // those writes kept what the counts read, the counts are unchanged (and every node and
        // await need not be read again).
        let original = staged?.original
        var pending = 0, blocking = false, inbox = 0
        if let committed, let original, Self.unchanged(wf.awaits, since: original.awaits, { i in
            wf.awaits[i].status == original.awaits[i].status && wf.awaits[i].blocking == original.awaits[i].blocking
                && wf.awaits[i].cleared == original.awaits[i].cleared
        }) {
            (pending, blocking, inbox) = (committed.awaitCount, committed.hasBlockingAwait, committed.inboxCount)
        } else {
            for i in wf.awaits.indices {
                if wf.awaits[i].status == .pending { pending += 1 }
                if wf.awaits[i].isOpen && wf.awaits[i].blocking { blocking = true }
                if !wf.awaits[i].cleared { inbox += 1 }
            }
        }
        var stepsDone = 0
        if let committed, let original, committed.stepsTotal == wf.nodes.count,
            Self.unchanged(wf.nodes, since: original.nodes, { wf.nodes[$0].state == original.nodes[$0].state })
        {
            stepsDone = committed.stepsDone
        } else {
            for i in wf.nodes.indices where wf.nodes[i].state == .succeeded || wf.nodes[i].state == .skipped { stepsDone += 1 }
        }
        let queues = staged?.counts ?? QueueCounts(wf)  // staged with this very version
        return WorkflowSummary(
            workflowId: wf.workflowId, seq: wf.seq, templateId: wf.templateId, title: wf.title, status: wf.status,
            archived: wf.archived, createdAt: wf.createdAt, updatedAt: wf.updatedAt,
            stepsDone: stepsDone, stepsTotal: wf.nodes.count, awaitCount: pending, hasBlockingAwait: blocking,
            searchText: search, nextDeadline: Executor.nextDeadline(wf, online: uow.isOnline, settings: uow.settings),
            queuedRemote: queues.queuedRemote, queuedLocal: queues.queuedLocal, runningRemote: queues.runningRemote,
            runningLocal: queues.runningLocal, inboxCount: inbox)
    }

    /// Whether `records` is `original` plus writes that kept what `same` compares: same count,
    /// not wholly replaced, and every touched position equal by `same` (given the position, so
    /// that it reads both records in place instead of copying them).
    static func unchanged<E>(_ records: ChangeTrackedArray<E>, since original: ChangeTrackedArray<E>,
                             _ same: (Int) -> Bool) -> Bool {
        guard !records.wholesale, records.count == original.count else { return false }
        for i in records.touched {
            guard i < original.count, same(i) else { return false }
        }
        return true
    }

    /// Fires the due timers of one workflow.
    func fireWorkflowTimers(_ uow: UnitOfWork, _ id: String) throws(EngineError) {
        guard var wf = try uow.workflow(id) else {
            uow.timers.set(id, at: nil, order: 0)
            return
        }
        let executor = try uow.executor(for: wf)
        try executor.fireDue(&wf)
        uow.putWorkflow(wf)  // always: its deadline must move on even if nothing changed
    }

    /// Resumes after opening: local runs that were running are interrupted (they never silently
    /// succeed), effects taken but never answered are delivered again with their ids, previews
    /// past their lifetime and thumbnails over the cap (either lowered in the config since the
    /// last open) are evicted, and the queues start what they can. `entries`: the workflows' entries
    /// just made from `snapshot`, in its order.
    func resume(snapshot: StoreSnapshot, entries: [WorkflowEntry]) throws(EngineError) {
        scheduler.load(entries)
        state.outbox.redeliverTaken()
        let uow = makeUnitOfWork()
        var interrupted = 0
        for s in snapshot.workflows where s.runningLocal > 0 {
            guard var wf = try uow.workflow(s.workflowId) else { continue }
            interrupted += try uow.executor(for: wf).interruptLocalRuns(&wf)
            uow.putWorkflow(wf)
        }
        if interrupted > 0 {
            uow.log(.notice, "interrupted local runs marked failed", ["count": "\(interrupted)"])
        }
        if !state.cacheEntries.isEmpty {
            purgeExpiredPreviews(uow)
            enforceThumbnailCap(uow)
        }
        do throws(EngineError) {
            try finish(uow)
        } catch {
            uow.rollback()
            scheduler.rolledBack()
            throw error
        }
    }

    /// Reconciles the workflows not done whose template `include` selects: a tool was
    /// registered (blocked "Tool not installed." nodes may move on), or the network changed.
    /// Archived workflows too: their work goes on, and they show it when brought back. A done
    /// workflow keeps its results whatever the tools or the network.
    func reconcileActive(_ uow: UnitOfWork, where include: (TemplateGraph) -> Bool) throws(EngineError) {
        uow.gatingInputsDidChange()
        for id in uow.allWorkflowIds() {
            let status: WorkflowStatus
            let templateId: String
            if let wf = uow.stagedWorkflow(id) {
                (status, templateId) = (wf.status, wf.templateId)
            } else if let s = uow.state.summary(id) {
                (status, templateId) = (s.status, s.templateId)
            } else {
                continue
            }
            guard status != .done, let t = uow.template(templateId), include(t.graph),
                var wf = try uow.workflowUnlessDamaged(id)
            else { continue }
            try uow.executor(for: wf).reconcile(&wf)
            uow.putWorkflow(wf)
        }
    }
}

extension UnitOfWork {
    /// A tool of `kind` was (re)registered: nodes blocked "Tool not installed." may move on.
    func toolCatalogueChanged(kind: String, engine: Engine) throws(EngineError) {
        try engine.reconcileActive(self) { graph in graph.nodes.contains { $0.kind == kind } }
    }
}
