import WorkflowCore
import WorkflowStore

extension Engine {
    /// Loads what the engine needs from the store and resumes: catalogue, summaries, outbox,
    /// indexes and timers. Workflows themselves load on first use.
    func rehydrate() throws(EngineError) {
        let snapshot: StoreSnapshot
        do {
            snapshot = try store.loadSnapshot()
        } catch {
            throw EngineError.storeRead(error, "cannot read the store")
        }
        if let sqlite = store as? SQLiteStore, sqlite.entriesDiscardedAtOpen > 0 {
            logger.warning("a power loss took a commit from the store: the commits after it are not replayed",
                           metadata: ["commits": "\(sqlite.entriesDiscardedAtOpen)"])
        }
        for (key, value) in snapshot.meta where key.hasPrefix("counter.") {
            // Ids are numbered from these counters; one out of range was written by something
            // else than the engine, and would overflow.
            guard let v = value.intValue, (0...Self.maxCounter).contains(v) else {
                throw EngineError(.store, "storeCorrupt", "the store's counter \(key) is not a count: \(value)",
                                  details: ["key": .string(key)])
            }
            state.counters[String(key.dropFirst("counter.".count))] = v
        }
        // A counter another program deleted or lowered would hand out ids in use: a new run's
        // rows would be written over another workflow's. Each starts at the highest in use.
        for (name, highest) in snapshot.highestIds.sorted(by: { $0.key < $1.key }) where highest > state.counter(name) {
            logger.warning("the store's id counter was behind the ids in use: it goes on from the highest",
                           metadata: ["counter": "\(name)", "stored": "\(state.counter(name))", "highest": "\(highest)"])
            state.counters[name] = highest
        }
        if let t = snapshot.meta[MetaKey.clockNow]?.stringValue.flatMap(Timestamp.init(rfc3339:)) {
            state.manualNow = t
        }
        // A manual clock never goes back: it resumes at the later of the configured start and
        // where the store left off.
        if case .manual(let start) = config.clock, let saved = state.manualNow, saved < start {
            state.manualNow = start
        }
        state.online = snapshot.meta[MetaKey.online]?.boolValue ?? true
        state.activeWorkflowId = snapshot.meta[MetaKey.activeWorkflow]?.stringValue
        state.submitsOfDeletedWorkflows = snapshot.meta[MetaKey.submitsOfDeletedWorkflows]?.objectValue ?? [:]
        state.jobsToCancel = snapshot.meta[MetaKey.jobsToCancel]?.objectValue ?? [:]

        for stored in snapshot.templates {
            func corrupt(_ why: String) -> EngineError {
                EngineError(.store, "storeCorrupt", "template \(stored.templateId) in the store cannot be read: \(why)",
                            details: ["templateId": .string(stored.templateId)])
            }
            let json: JSON
            do {
                json = try JSON(parsing: stored.canonicalText)
            } catch {
                throw corrupt("\(error)")
            }
            // Stored templates are self-contained (ports materialised), so they compile the
            // same whatever the tool catalogue says today.
            let compiled = TemplateCompiler.compile(json, tools: [:], storedEarlier: true)
            guard let template = compiled.template else {
                throw corrupt("it no longer validates (\(compiled.errors.first.map { "\($0.code): \($0.message)" } ?? "no template"))")
            }
            let registered = RegisteredTemplate(stored: stored, graph: TemplateGraph(template: template))
            state.templates[stored.templateId] = registered
            state.templateOrder.append(stored.templateId)
            state.templateByText[stored.canonicalText] = stored.templateId
        }
        for tool in snapshot.tools { state.tools[tool.spec.kind] = RegisteredTool(tool) }
        state.providerDefaults = snapshot.providerDefaults
        var entries: [WorkflowEntry] = []
        entries.reserveCapacity(snapshot.workflows.count)
        for s in snapshot.workflows {
            let e = WorkflowEntry(s)
            state.addEntry(e)
            entries.append(e)
            if let d = s.nextDeadline { state.timers.set(s.workflowId, at: d, order: s.seq) }
        }
        for (runId, workflowId, jobId) in snapshot.activeRuns {
            state.activeRuns[runId] = workflowId
            if let jobId { state.jobs[jobId] = runId }
        }
        for (awaitId, workflowId) in snapshot.openAwaits { state.openAwaits[awaitId] = workflowId }
        for entry in snapshot.cacheEntries {
            state.cacheEntries[ChangeSet.cacheKey(entry.assetId, entry.variant.rawValue)] = entry
            state.cacheTimers.set(entry.key, at: cachePolicy.purgeTime(entry), order: 0)
        }
        state.outbox = Outbox(effects: snapshot.effects)
        do throws(EngineError) {
            try resume(snapshot: snapshot, entries: entries)
        } catch where error.status == .store || error.status == .internal {
            throw error  // an engine bug stays one
        } catch {
            // Resuming only replays what the store holds: a rule refusing it means the rows were
            // changed behind the engine's back.
            var details = error.details
            details["cause"] = .string(error.code)
            throw EngineError(.store, "storeCorrupt", "the store's workflows cannot be resumed: \(error.message)",
                              details: details)
        }
    }

    /// The largest value a stored id counter may hold: far beyond any real store, far from overflow.
    static let maxCounter: Int64 = StoreSnapshot.highestIdCounted
}
