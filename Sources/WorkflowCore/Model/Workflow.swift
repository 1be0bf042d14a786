/// A workflow instance: one run of a template's graph, with every node's state, every run, and
/// every await. This is the unit the engine loads, changes and persists.
public struct Workflow: Sendable, Equatable {
    /// The fields, in one shared object: a copy of a workflow (the engine makes dozens per call)
    /// retains one reference instead of every string and array, and the first write to a copy
    /// copies the object (its records stay shared, see ``ChangeTrackedArray``).
    @usableFromInline
    final class Storage: @unchecked Sendable {  // written only while uniquely referenced
        @usableFromInline let workflowId: String
        @usableFromInline @exclusivity(unchecked) var seq: Int64
        @usableFromInline @exclusivity(unchecked) var templateId: String
        @usableFromInline @exclusivity(unchecked) var title: String
        @usableFromInline @exclusivity(unchecked) var createdAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var updatedAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var archived: Bool
        @usableFromInline @exclusivity(unchecked) var autoRun: Bool
        @usableFromInline @exclusivity(unchecked) var pollingPaused: Bool
        @usableFromInline @exclusivity(unchecked) var status: WorkflowStatus
        @usableFromInline @exclusivity(unchecked) var nodes: ChangeTrackedArray<NodeInstance>
        @usableFromInline @exclusivity(unchecked) var runs: ChangeTrackedArray<Run>
        @usableFromInline @exclusivity(unchecked) var awaits: ChangeTrackedArray<AwaitRequest>
        /// Whether any node could start a taint (``NodeInstance/mayOriginateTaint(_:)``) when the
        /// nodes were last marked clean; nil until worked out. Derived from the nodes, so not
        /// compared, stored or copied into a new workflow: a cache for ``Workflow/markClean()``
        /// to keep and gating to read.
        @usableFromInline @exclusivity(unchecked) var taintOriginWhenClean: Bool?
        /// Whether any run or await could hold a timer (``Run/mayHoldTimer(_:)``,
        /// ``AwaitRequest/mayHoldTimer(_:)``) when the records were last marked clean; nil until
        /// worked out. Derived from the records, like ``taintOriginWhenClean``, for
        /// ``Workflow/markClean()`` to keep and the next deadline to read.
        @usableFromInline @exclusivity(unchecked) var timersWhenClean: Bool?

        @inlinable init(workflowId: String, seq: Int64, templateId: String, title: String, createdAt: Timestamp,
                        updatedAt: Timestamp, archived: Bool, autoRun: Bool, pollingPaused: Bool, status: WorkflowStatus,
                        nodes: ChangeTrackedArray<NodeInstance>, runs: ChangeTrackedArray<Run>,
                        awaits: ChangeTrackedArray<AwaitRequest>) {
            self.workflowId = workflowId
            self.seq = seq
            self.templateId = templateId
            self.title = title
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.archived = archived
            self.autoRun = autoRun
            self.pollingPaused = pollingPaused
            self.status = status
            self.nodes = nodes
            self.runs = runs
            self.awaits = awaits
        }

        @inlinable func copy() -> Storage {
            let c = Storage(workflowId: workflowId, seq: seq, templateId: templateId, title: title, createdAt: createdAt,
                            updatedAt: updatedAt, archived: archived, autoRun: autoRun, pollingPaused: pollingPaused,
                            status: status, nodes: nodes, runs: runs, awaits: awaits)
            c.taintOriginWhenClean = taintOriginWhenClean  // about the same clean nodes
            c.timersWhenClean = timersWhenClean  // and the same clean runs and awaits
            return c
        }
    }

    @usableFromInline var storage: Storage

    /// Makes ``storage`` this value's own before a write.
    @inlinable mutating func unique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    public var workflowId: String { storage.workflowId }

    /// Creation order, for stable listing and fair round-robin.
    @inlinable public var seq: Int64 {
        _read { yield storage.seq }
        _modify {
            unique()
            yield &storage.seq
        }
    }

    @inlinable public var templateId: String {
        _read { yield storage.templateId }
        _modify {
            unique()
            yield &storage.templateId
        }
    }

    @inlinable public var title: String {
        _read { yield storage.title }
        _modify {
            unique()
            yield &storage.title
        }
    }

    @inlinable public var createdAt: Timestamp {
        _read { yield storage.createdAt }
        _modify {
            unique()
            yield &storage.createdAt
        }
    }

    @inlinable public var updatedAt: Timestamp {
        _read { yield storage.updatedAt }
        _modify {
            unique()
            yield &storage.updatedAt
        }
    }

    @inlinable public var archived: Bool {
        _read { yield storage.archived }
        _modify {
            unique()
            yield &storage.archived
        }
    }

    /// After "Run all ready", nodes that become ready start by themselves.
    @inlinable public var autoRun: Bool {
        _read { yield storage.autoRun }
        _modify {
            unique()
            yield &storage.autoRun
        }
    }

    /// Pauses status polls only; jobs keep running remotely.
    @inlinable public var pollingPaused: Bool {
        _read { yield storage.pollingPaused }
        _modify {
            unique()
            yield &storage.pollingPaused
        }
    }

    @inlinable public var status: WorkflowStatus {
        _read { yield storage.status }
        _modify {
            unique()
            yield &storage.status
        }
    }

    /// In template order (index = template node index).
    @inlinable public var nodes: ChangeTrackedArray<NodeInstance> {
        _read { yield storage.nodes }
        _modify {
            unique()
            yield &storage.nodes
        }
    }

    /// Every run, in creation order.
    @inlinable public var runs: ChangeTrackedArray<Run> {
        _read { yield storage.runs }
        _modify {
            unique()
            yield &storage.runs
        }
    }

    /// Every await, in creation order.
    @inlinable public var awaits: ChangeTrackedArray<AwaitRequest> {
        _read { yield storage.awaits }
        _modify {
            unique()
            yield &storage.awaits
        }
    }

    public init(workflowId: String, seq: Int64, templateId: String, title: String, createdAt: Timestamp,
                nodes: [NodeInstance]) {
        storage = Storage(workflowId: workflowId, seq: seq, templateId: templateId, title: title, createdAt: createdAt,
                          updatedAt: createdAt, archived: false, autoRun: false, pollingPaused: false, status: .active,
                          nodes: ChangeTrackedArray(nodes), runs: [], awaits: [])
    }

    public init(workflowId: String, seq: Int64, templateId: String, title: String, createdAt: Timestamp,
                updatedAt: Timestamp, archived: Bool, autoRun: Bool, pollingPaused: Bool, status: WorkflowStatus,
                nodes: [NodeInstance], runs: [Run], awaits: [AwaitRequest]) {
        storage = Storage(workflowId: workflowId, seq: seq, templateId: templateId, title: title, createdAt: createdAt,
                          updatedAt: updatedAt, archived: archived, autoRun: autoRun, pollingPaused: pollingPaused,
                          status: status, nodes: ChangeTrackedArray(nodes), runs: ChangeTrackedArray(runs),
                          awaits: ChangeTrackedArray(awaits))
    }

    public static func == (a: Workflow, b: Workflow) -> Bool {
        a.storage === b.storage
            || (a.sameOwnFields(as: b) && a.nodes == b.nodes && a.runs == b.runs && a.awaits == b.awaits)
    }

    /// The node whose id has exactly `nodeId`'s bytes (another spelling of the same text, as the
    /// Kelvin sign for `K`, names no node).
    public func nodeIndex(_ nodeId: String) -> Int? { nodes.firstIndex { $0.nodeId.hasSameBytes(as: nodeId) } }

    public func runIndex(_ runId: String) -> Int? {
        // Recent runs are the ones events name; search from the end.
        var i = runs.count - 1
        while i >= 0 {
            if runs[i].runId == runId { return i }
            i -= 1
        }
        return nil
    }

    public func run(_ runId: String?) -> Run? {
        guard let runId, let i = runIndex(runId) else { return nil }
        return runs[i]
    }

    public func awaitIndex(_ awaitId: String) -> Int? { awaits.firstIndex { $0.awaitId == awaitId } }

    /// Runs of one node, oldest first.
    public func runs(of nodeId: String) -> [Run] { runs.filter { $0.nodeId == nodeId } }

    /// Marks this workflow as matching what is stored, so ``changes(since:)`` compares only the
    /// records written from now on. Call it on what was just loaded or committed.
    public mutating func markClean() {
        let origin = mayHaveTaintOrigin
        let timers = mayHoldTimers
        unique()
        storage.taintOriginWhenClean = origin
        storage.timersWhenClean = timers
        nodes.markClean()
        runs.markClean()
        awaits.markClean()
    }

    /// Whether some node could be where a taint starts (``NodeInstance/mayOriginateTaint(_:)``).
    /// When none could as last marked clean, only the nodes written since are read: a completion
    /// asks this before every reconcile, and the usual workflow has no such node (reading them
    /// all touched every node's record). Like ``changes(since:)``, it counts on the nodes being
    /// those marked clean plus writes (nodes replaced whole count as all written).
    public var mayHaveTaintOrigin: Bool {
        nodes.containsRecord(onlyTouched: storage.taintOriginWhenClean == false, NodeInstance.mayOriginateTaint)
    }

    /// Whether some run or await could hold a timer: when none could as last marked clean, only
    /// the runs and awaits written since are read. Every workflow a call touches has its next
    /// deadline worked out, and a workflow of local tools (or one whose remote work is over) has
    /// no timer at all: reading every run for it touched every run's record. Like
    /// ``mayHaveTaintOrigin``, it counts on the records being those marked clean plus writes.
    public var mayHoldTimers: Bool {
        let onlyTouched = storage.timersWhenClean == false
        return runs.containsRecord(onlyTouched: onlyTouched, Run.mayHoldTimer)
            || awaits.containsRecord(onlyTouched: onlyTouched, AwaitRequest.mayHoldTimer)
    }

    /// What differs from `old` (the committed workflow this one was changed from, or `nil` for a
    /// new one): the workflow's own fields, and the positions of the nodes, runs and awaits.
    public func changes(since old: Workflow?) -> WorkflowChanges {
        guard let old else {
            return WorkflowChanges(record: true, nodes: TouchedPositions(below: nodes.count),
                                   runs: TouchedPositions(below: runs.count), awaits: TouchedPositions(below: awaits.count))
        }
        let record = !sameOwnFields(as: old)
        return WorkflowChanges(record: record, nodes: nodes.changedPositions(since: old.nodes),
                               runs: runs.changedPositions(since: old.runs),
                               awaits: awaits.changedPositions(since: old.awaits))
    }
}

extension Workflow {
    /// Whether the workflow's own fields (all but its nodes, runs and awaits) are equal: field by
    /// field, without copying the workflow. Keep in step with ``Storage``'s properties.
    func sameOwnFields(as old: Workflow) -> Bool {
        let same = workflowId == old.workflowId && seq == old.seq && templateId == old.templateId
            && title == old.title && createdAt == old.createdAt && updatedAt == old.updatedAt
            && archived == old.archived && autoRun == old.autoRun && pollingPaused == old.pollingPaused
            && status == old.status
        // Every field of Storage but the three record arrays and the taint and timer caches
        // (derived from the records) is compared above.
        assert(Mirror(reflecting: storage).children.count == 15, "Workflow.sameOwnFields misses a stored property")
        return same
    }
}

/// What a call changed in one workflow: whether its own fields did, and which nodes, runs and
/// awaits (positions, ascending).
public struct WorkflowChanges: Sendable, Equatable {
    public var record: Bool
    /// The positions that differ, as bits (no array to allocate for the first 64 of each: every
    /// workflow a call touches has its changes worked out).
    public var nodes: TouchedPositions
    public var runs: TouchedPositions
    public var awaits: TouchedPositions

    public init(record: Bool, nodes: TouchedPositions, runs: TouchedPositions, awaits: TouchedPositions) {
        self.record = record
        self.nodes = nodes
        self.runs = runs
        self.awaits = awaits
    }

    public var isEmpty: Bool { !record && nodes.isEmpty && runs.isEmpty && awaits.isEmpty }
}

public enum WorkflowStatus: String, Sendable, Equatable, CaseIterable {
    case active, done, failed, archived
}

/// Why a node is blocked: `{code, message}` plus facts (ports, upstream node ids).
public struct BlockedReason: Sendable, Equatable {
    public var code: String
    public var message: String
    public var details: JSONObject

    public init(code: String, message: String, details: JSONObject = [:]) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var json: JSON { ["code": .string(code), "message": .string(message)] }

    public static let waitingForInput = "waitingForInput"
    public static let inputChanged = "inputChanged"
    public static let upstreamFailed = "upstreamFailed"
    public static let toolNotInstalled = "toolNotInstalled"
    public static let offline = "offline"
}

extension Workflow {
    /// Every asset the workflow refers to: its runs' inputs and outputs, its nodes' bindings,
    /// outputs and input selections.
    public var referencedAssetIds: Set<String> {
        var ids = Set<String>()
        forEachReferencedAssetId { id in
            ids.insert(id)
            return true
        }
        return ids
    }

    /// Calls `body` with every asset id a run or a node refers to, in record order, an id once
    /// for each time it is referred to, until it returns `false`; returns whether it went through
    /// them all. Records are read in place (iterating them would copy each, retaining and
    /// releasing its every string and table).
    @discardableResult
    public func forEachReferencedAssetId(_ body: (String) -> Bool) -> Bool {
        for i in runs.indices {
            let going = runs.withRecord(at: i) { r in
                for id in r.pointee.inputs.values where !body(id) { return false }
                for id in r.pointee.outputs.values where !body(id) { return false }
                return true
            }
            if !going { return false }
        }
        for i in nodes.indices {
            let going = nodes.withRecord(at: i) { n in
                for id in n.pointee.bindings.values where !body(id) { return false }
                for id in n.pointee.outputs.values where !body(id) { return false }
                for id in n.pointee.inputSelections.values where !body(id) { return false }
                return true
            }
            if !going { return false }
        }
        return true
    }

    /// Whether a run or a node of the workflow refers to the asset (``referencedAssetIds``).
    public func refers(to assetId: String) -> Bool { !forEachReferencedAssetId { $0 != assetId } }
}

/// A failure shown on a card: the code, a plain sentence, and a hint where one helps. In-process
/// tools throw it (WorkflowTools' `ToolFailure`).
public struct NodeError: Error, Sendable, Equatable {
    public var code: String
    public var message: String
    public var hint: String?
    public var details: JSONObject
    /// Set by the engine alone, on the local run that was running when the process died
    /// (``NodeError/interrupted``): not a failure of the work, so the workflow stays active and
    /// the node's consumers wait for its Retry. A host reporting a failure whose code happens to
    /// be `interrupted` too (a provider's preempted job, a tool's own code) sets nothing: that is
    /// a failure like any other, with the code as given.
    public var isInterruption: Bool

    public init(code: String, message: String, hint: String? = nil, details: JSONObject = [:], isInterruption: Bool = false) {
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details
        self.isInterruption = isInterruption
    }

    /// What to do after `inputAssetGone`: Re-run with latest takes the producer's current output,
    /// so when the deleted asset was that output the producer has to run again first.
    public static let inputAssetGoneHint =
        "Use Re-run with latest; if the step that made the input has no output now, run it again first."

    /// The code of a failure read from a record of 003's step-1 shim, `{"failed": "reason"}`,
    /// which kept a reason but no code; the reason is the message.
    public static let legacyFailureCode = "failed"

    /// The failure of a local run found running when the engine reopens (DESIGN §5).
    public static let interrupted = NodeError(
        code: "interrupted", message: "Interrupted: the app stopped while this step was running.",
        hint: "Retry to run it again with the same inputs.", isInterruption: true)

    /// `{code, message, hint?}`: the error as a node shows it (`lastError`).
    public var json: JSON {
        var o: JSONObject = ["code": .string(code), "message": .string(message)]
        if let hint { o["hint"] = .string(hint) }
        return .object(o)
    }

    /// `{code, message, hint?, details?}`: the error as a run's history shows it, with the facts
    /// behind it when there are some.
    public var jsonWithDetails: JSON {
        guard !details.isEmpty, case var .object(o) = json else { return json }
        o["details"] = .object(details)
        return .object(o)
    }
}

/// One node of a workflow instance.
public struct NodeInstance: ChangeTrackedRecord {
    public let nodeId: String
    public var state: NodeState
    public var blockedReason: BlockedReason?
    /// A person's parameter changes, merged over the template's params.
    public var params: JSONObject
    /// Assets bound to input ports when the workflow was created.
    public var bindings: [String: String]
    /// Inputs a person chose among several candidates ("Select Input").
    public var inputSelections: [String: String]
    /// The node's current output per port: the last successful run's, or the one a person chose
    /// ("Use for next step").
    public var outputs: [String: String]
    /// The run in flight, or else the most recent run.
    public var currentRunId: String?
    public var lastError: NodeError?
    /// Runs started for this node.
    public var attempts: Int
    public var updatedAt: Timestamp

    public init(nodeId: String, state: NodeState = .blocked, blockedReason: BlockedReason? = nil,
                params: JSONObject = [:], bindings: [String: String] = [:], inputSelections: [String: String] = [:],
                outputs: [String: String] = [:], currentRunId: String? = nil, lastError: NodeError? = nil,
                attempts: Int = 0, updatedAt: Timestamp) {
        self.nodeId = nodeId
        self.state = state
        self.blockedReason = blockedReason
        self.params = params
        self.bindings = bindings
        self.inputSelections = inputSelections
        self.outputs = outputs
        self.currentRunId = currentRunId
        self.lastError = lastError
        self.attempts = attempts
        self.updatedAt = updatedAt
    }
}

extension NodeInstance {
    /// Whether the node's own state can make it tainted whatever its producers: blocked because
    /// an input changed, by a stale or failed upstream, or because its tool is not installed
    /// (the gating rules' taints, `Executor.taint(_:_:given:)`). Read through a pointer to the
    /// record: its blocked reason is not copied.
    public static func mayOriginateTaint(_ node: UnsafePointer<NodeInstance>) -> Bool {
        guard node.pointee.state == .blocked, let code = node.pointee.blockedReason?.code else { return false }
        // Waiting for inputs is the usual reason: asked first.
        if code == BlockedReason.waitingForInput { return node.pointee.blockedReason?.details["staleUpstream"] != nil }
        return code == BlockedReason.inputChanged || code == BlockedReason.upstreamFailed
            || code == BlockedReason.toolNotInstalled
    }

    /// What a write to a node nearly always changes: its state, when it last changed, its attempts.
    @inlinable public static func differsCheaply(_ a: UnsafePointer<NodeInstance>, _ b: UnsafePointer<NodeInstance>) -> Bool {
        a.pointee.state != b.pointee.state || a.pointee.updatedAt != b.pointee.updatedAt || a.pointee.attempts != b.pointee.attempts
    }
}
