import WorkflowCore
import WorkflowStore

/// A registered template, compiled once and shared by its workflows.
final class RegisteredTemplate: Sendable {
    let stored: StoredTemplate
    let graph: TemplateGraph
    /// The node titles, lower-cased, that workflow search matches.
    let searchText: String

    init(stored: StoredTemplate, graph: TemplateGraph) {
        self.stored = stored
        self.graph = graph
        var search = ""
        for t in graph.nodes {
            search += "\n" + t.displayTitle.lowercased()
            if t.title != nil { search += "\n" + t.id.lowercased() }
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
    var counters: [String: Int64] = [:]
    var manualNow: Timestamp?
    var online = true
    var activeWorkflowId: String?

    // Catalogue
    var templates: [String: RegisteredTemplate] = [:]
    var templateOrder: [String] = []
    /// Canonical text → template id, so registering the same template twice returns the same id.
    var templateByText: [String: String] = [:]
    var tools: [String: StoredTool] = [:]
    var providerDefaults: [String: JSONObject] = [:]

    // Workflows: summaries of all, full state of those loaded.
    var summaries: [String: WorkflowSummary] = [:]
    var workflows: [String: Workflow] = [:]

    // Assets loaded so far.
    var assets: [String: Asset] = [:]

    var outbox = Outbox()
    var cacheEntries: [String: CacheEntry] = [:]

    // Indexes for events: runs in flight and their jobs, awaits not yet done.
    var activeRuns: [String: String] = [:]  // runId -> workflowId
    var jobs: [String: String] = [:]  // jobId -> runId
    var openAwaits: [String: String] = [:]  // awaitId -> workflowId

    /// Workflows reconciled in full since tools or the network last changed, in this process
    /// (``RulesContext/isReconciled(_:)``). Not stored: after a reopen every workflow's first
    /// completion reconciles it in full.
    var reconciled = Set<String>()

    /// Workflow deadlines (polls, retries, await expiries, …), keyed by workflow id.
    var timers = TimerQueue()
    /// Preview purge deadlines, keyed by cache entry.
    var cacheTimers = TimerQueue()

    func counter(_ name: String) -> Int64 { counters[name] ?? 0 }
}

/// Names of the meta table's keys.
enum MetaKey {
    static func counter(_ name: String) -> String { "counter.\(name)" }
    static let clockNow = "clock.now"
    static let online = "network.online"
    static let activeWorkflow = "workflow.active"
}
