import WorkflowCore
import WorkflowStore

/// A registered tool, held in one shared object: reading a field of its spec (its class, its
/// defaults: asked for every run a call starts) reads that field alone, where a tool kept as a
/// plain value in a table was copied whole for each read, retaining and then releasing every
/// string, port and default of its spec.
final class RegisteredTool: Sendable {
    let stored: StoredTool
    var spec: ToolSpec { stored.spec }

    init(_ stored: StoredTool) { self.stored = stored }
}

/// A registered template, compiled once and shared by its workflows.
final class RegisteredTemplate: Sendable {
    let stored: StoredTemplate
    let graph: TemplateGraph
    /// The node titles, folded (``TextSearch/fold(_:)``), that workflow search matches.
    let searchText: String

    init(stored: StoredTemplate, graph: TemplateGraph) {
        self.stored = stored
        self.graph = graph
        var search = ""
        for t in graph.nodes {
            search += "\n" + TextSearch.fold(t.displayTitle)
            if t.title != nil { search += "\n" + TextSearch.fold(t.id) }
        }
        self.searchText = search
    }

    var templateId: String { stored.templateId }
    var template: Template { graph.template }
}

/// The engine's committed state in memory: everything the store holds that calls need fast,
/// plus indexes derived from it. Only ``UnitOfWork/commit()`` changes it, after the store
/// has committed the same changes.
final class EngineState {
    // Meta
    @exclusivity(unchecked) var counters: [String: Int64] = [:]
    @exclusivity(unchecked) var manualNow: Timestamp?
    @exclusivity(unchecked) var online = true
    @exclusivity(unchecked) var activeWorkflowId: String?
    /// Runs of deleted workflows whose submit the host may still be sending (run id → workflow
    /// id), oldest first: a job the provider accepts for one afterwards is cancelled at once.
    @exclusivity(unchecked) var submitsOfDeletedWorkflows = JSONObject()
    /// Jobs the engine is cancelling that no run holds, whose cancel did not reach the provider
    /// (job id → the cancel's effect body, failures, when it goes again): see `JobsToCancel`.
    @exclusivity(unchecked) var jobsToCancel = JSONObject()

    // Catalogue
    @exclusivity(unchecked) var templates: [String: RegisteredTemplate] = [:]
    @exclusivity(unchecked) var templateOrder: [String] = []
    /// Canonical text → template id, so registering the same template twice returns the same id.
    @exclusivity(unchecked) var templateByText: [String: String] = [:]
    @exclusivity(unchecked) var tools: [String: RegisteredTool] = [:]
    @exclusivity(unchecked) var providerDefaults: [String: JSONObject] = [:]

    // Workflows: the summary of each, the full state of those loaded, in one entry per workflow.
    // Changed only through ``addEntry(_:)``, ``removeEntry(_:)`` and ``setSummary(_:_:)``, which
    // keep ``searchIndex`` in step.
    @exclusivity(unchecked) private(set) var entries: [String: WorkflowEntry] = [:]
    /// Every workflow's search text in one buffer, for `workflow.list`'s search.
    @exclusivity(unchecked) private(set) var searchIndex = WorkflowSearchIndex()
    /// The loaded workflows that are done and quiet (``isQuiet(_:)``), with when each was last
    /// used: the ones ``dropQuietWorkflows(keeping:)`` may drop from memory. An entry says
    /// whether it is here (``WorkflowEntry/isQuietLoaded``), so that a workflow with work going
    /// on, never here, is not looked up.
    @exclusivity(unchecked) var quietLoaded: [String: UInt64] = [:]
    @exclusivity(unchecked) private var uses: UInt64 = 0

    // Assets loaded so far.
    @exclusivity(unchecked) var assets: [String: Asset] = [:]

    @exclusivity(unchecked) var outbox = Outbox()
    @exclusivity(unchecked) var cacheEntries: [String: CacheEntry] = [:]

    // Indexes for events: runs in flight and their jobs, awaits not yet done.
    @exclusivity(unchecked) var activeRuns: [String: String] = [:]  // runId -> workflowId
    @exclusivity(unchecked) var jobs: [String: String] = [:]  // jobId -> runId
    @exclusivity(unchecked) var openAwaits: [String: String] = [:]  // awaitId -> workflowId

    /// Workflows reconciled in full since tools or the network last changed, in this process
    /// (``RulesContext/isReconciled(_:)``). Not stored: after a reopen every workflow's first
    /// completion reconciles it in full.
    @exclusivity(unchecked) var reconciled = Set<String>()

    /// Workflow deadlines (polls, retries, await expiries, …), keyed by workflow id.
    @exclusivity(unchecked) var timers = TimerQueue()
    /// Preview purge deadlines, keyed by cache entry.
    @exclusivity(unchecked) var cacheTimers = TimerQueue()

    func counter(_ name: String) -> Int64 { counters[name] ?? 0 }

    /// Workflow `id`'s committed summary.
    func summary(_ id: String) -> WorkflowSummary? { entries[id]?.summary }

    /// Adds the entry of a workflow (one of the same id goes first).
    func addEntry(_ entry: WorkflowEntry) {
        if let old = entries.updateValue(entry, forKey: entry.id) { searchIndex.remove(old) }
        searchIndex.insert(entry)
    }

    /// Removes workflow `id`'s entry, if any.
    func removeEntry(_ id: String) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        searchIndex.remove(entry)
    }

    /// Makes `summary` the committed summary of `entry`'s workflow; the search index follows a
    /// change of its text or template. The text changes only with the title, as a summary is
    /// made (`Engine.summary`: a title equal to the committed one keeps the committed text, the
    /// same storage), so a commit that changes neither, as nearly all do, costs two comparisons
    /// of strings that share their storage, settled at once.
    func setSummary(_ entry: WorkflowEntry, _ summary: WorkflowSummary) {
        let moved = entry.summary.searchText != summary.searchText || entry.summary.templateId != summary.templateId
        entry.summary = summary
        if moved {
            searchIndex.remove(entry)
            searchIndex.insert(entry)
        }
    }

    /// The loaded workflows, by id: for tests (made on each read).
    var loadedWorkflows: [String: Workflow] {
        var loaded: [String: Workflow] = [:]
        for (id, e) in entries { if let w = e.workflow { loaded[id] = w } }
        return loaded
    }

    // MARK: Loaded workflows

    /// A workflow whose full state need not stay in memory: done, with nothing in the Action
    /// Center, no run queued or holding a slot, no deadline. Only the host's reads bring it back
    /// (`workflow.get`, `node.history`, …); nothing the engine does by itself reads it.
    static func isQuiet(_ s: WorkflowSummary) -> Bool {
        s.status == .done && s.inboxCount == 0 && s.nextDeadline == nil
            && s.queuedRemote == 0 && s.queuedLocal == 0 && s.runningRemote == 0 && s.runningLocal == 0
    }

    /// The workflow of `entry`, loaded, was just loaded or committed, its summary quiet
    /// (``isQuiet(_:)``) or not: a quiet one becomes the most recently used of the quiet ones;
    /// one that is no longer quiet leaves them.
    func noteUse(_ entry: WorkflowEntry, quiet: Bool) {
        if quiet {
            uses &+= 1
            quietLoaded[entry.id] = uses
            entry.isQuietLoaded = true
        } else if entry.isQuietLoaded {
            quietLoaded.removeValue(forKey: entry.id)
            entry.isQuietLoaded = false
        }
    }

    /// A read of a loaded workflow: refreshes its place among the quiet ones (no lookup when it
    /// is not one of them, as for every workflow with work going on).
    func noteRead(_ entry: WorkflowEntry) {
        guard entry.isQuietLoaded, let i = quietLoaded.index(forKey: entry.id) else { return }
        uses &+= 1
        quietLoaded.values[i] = uses
    }

    /// Drops the least recently used quiet workflows from memory once more than `keep` and a
    /// quarter are loaded (so the sort runs once per many calls), down to `keep`; the store
    /// still has them, and the next read loads them again. Called between calls, never during one.
    func dropQuietWorkflows(keeping keep: Int) {
        guard quietLoaded.count > keep + keep / 4 else { return }
        dropLeastRecentlyUsed(keeping: keep)
    }

    /// Drops the least recently used quiet workflows, and the assets they refer to, until `keep`
    /// remain.
    func dropLeastRecentlyUsed(keeping keep: Int) {
        guard quietLoaded.count > keep else { return }
        let oldest = quietLoaded.sorted { $0.value < $1.value }.prefix(quietLoaded.count - keep)
        for (id, _) in oldest {
            quietLoaded[id] = nil
            guard let e = entries[id] else { continue }
            e.isQuietLoaded = false
            // The assets it refers to leave with it: the store has them too, and the next read
            // of one (this workflow's or another's) loads it again. Each is removed as it is read,
            // with no set of them built (one referred to twice is looked up again, and is gone).
            if let wf = e.workflow, !assets.isEmpty {
                wf.forEachReferencedAssetId { id in
                    assets.removeValue(forKey: id)
                    return true
                }
            }
            e.workflow = nil
        }
    }
}

/// One workflow the engine knows: its committed summary (every workflow has one), its full
/// committed state while loaded, and whether it is among the quiet loaded ones that may leave
/// memory (``EngineState/quietLoaded``). One object per workflow, found with one lookup by its
/// id and held by a call's staging (``StagedWorkflow/entry``): the call reads its summary and
/// state, and its commit writes them, with no further lookup (three tables keyed by the id were
/// each looked up and written again for every workflow a call touched). It is also the
/// workflow's place in the scheduler's lines (``LinePlace``).
final class WorkflowEntry: LinePlace {
    @exclusivity(unchecked) var summary: WorkflowSummary
    /// The committed workflow, while loaded.
    @exclusivity(unchecked) var workflow: Workflow?
    /// Whether it is in ``EngineState/quietLoaded``.
    @exclusivity(unchecked) var isQuietLoaded = false
    /// Its slot in ``EngineState/searchIndex`` (-1: none).
    @exclusivity(unchecked) var searchSlot = -1

    /// Its committed runs queued and holding a slot (the scheduler's committed counts): its
    /// summary's.
    var queueCounts: QueueCounts { QueueCounts(summary) }

    init(_ summary: WorkflowSummary, workflow: Workflow? = nil) {
        self.summary = summary
        self.workflow = workflow
        super.init(id: summary.workflowId)
    }
}

/// Names of the meta table's keys.
enum MetaKey {
    static func counter(_ name: String) -> String { "counter.\(name)" }
    static let clockNow = "clock.now"
    static let online = "network.online"
    static let activeWorkflow = "workflow.active"
    static let submitsOfDeletedWorkflows = "runs.submitsOfDeletedWorkflows"
    static let jobsToCancel = "jobs.toCancel"
}
