import WorkflowCore

extension UnitOfWork {
    /// The workflow that owns `runId`: from the in-flight index, this call's changes, or the store.
    func workflowId(forRun runId: String) throws(EngineError) -> String? {
        if let id = state.activeRuns[runId] { return id }
        for s in touched { if let wf = s.working, wf.runIndex(runId) != nil { return s.id } }
        do {
            return try store.workflowId(forRun: runId)
        } catch {
            throw EngineError.storeRead(error, "cannot look up run \(runId)")
        }
    }

    /// The run that owns `jobId`.
    func run(forJob jobId: String) throws(EngineError) -> (runId: String, workflowId: String)? {
        if let staged = stagedJobs[jobId] { return staged }
        if let runId = state.jobs[jobId], let wf = state.activeRuns[runId] { return (runId, wf) }
        do {
            return try store.run(forJob: jobId)
        } catch {
            throw EngineError.storeRead(error, "cannot look up job \(jobId)")
        }
    }

    /// The workflow that owns an await.
    func workflowId(forAwait awaitId: String) -> String? {
        if let id = state.openAwaits[awaitId] { return id }
        for s in touched { if let wf = s.working, wf.awaitIndex(awaitId) != nil { return s.id } }
        return nil
    }
}

extension Engine {
    /// The node named by `args.nodeId` in `wf`, found through the template's index.
    static func nodeIndex(_ wf: Workflow, _ executor: Executor, _ args: Args) throws(EngineError) -> Int {
        let nodeId = try args.string("nodeId")
        guard let n = executor.nodeIndex(wf, nodeId) else {
            throw .notFound("unknownNode", "workflow '\(wf.workflowId)' has no node '\(nodeId)'",
                            details: ["workflowId": .string(wf.workflowId), "nodeId": .string(nodeId)])
        }
        return n
    }

    /// Loads the workflow, runs `body` on it with its executor, stages it.
    static func withWorkflow<T>(_ uow: UnitOfWork, _ args: Args,
                                _ body: (inout Workflow, Executor) throws(EngineError) -> T) throws(EngineError) -> T {
        let id = try args.string("workflowId")
        var wf = try uow.requireWorkflow(id)
        let executor = try uow.executor(for: wf)
        let result = try body(&wf, executor)
        uow.putWorkflow(wf)
        return result
    }

    /// The run named by `runId`, in its workflow.
    static func withRun<T>(_ uow: UnitOfWork, runId: String,
                           _ body: (inout Workflow, Executor, Int) throws(EngineError) -> T) throws(EngineError) -> T {
        guard let wfId = try uow.workflowId(forRun: runId), let (found, staged) = try uow.workflowForWriting(wfId),
            let r = found.runIndex(runId)
        else {
            throw .notFound("unknownRun", "no run '\(runId)'", details: ["runId": .string(runId)])
        }
        var wf = found
        let executor = try uow.executor(for: wf)
        let result = try body(&wf, executor, r)
        uow.putWorkflow(wf, staged: staged)
        return result
    }
}
