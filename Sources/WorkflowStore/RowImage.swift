import WorkflowCore

/// One row of the store as it is to be after a commit: every column, its record already
/// encoded. A change set becomes a list of these (``SQLiteStore``), which is either appended to
/// the journal or written to the tables; writing an image twice leaves the row as writing it
/// once does, so a journal replayed after a kill lands where the process was.
indirect enum RowImage: Equatable {
    case meta(key: String, value: [UInt8])
    case asset(AssetRow)
    case workflow(WorkflowRow)
    case node(NodeRow)
    case run(RunRow)
    case await(AwaitRow)
    case effect(EffectRow)
    /// An effect already in the table was handed out.
    case effectTaken(seq: Int64)
    case effectDelete(seq: Int64)

    /// The row it writes, for keeping only the last image of each row.
    var key: RowKey {
        switch self {
        case .meta(let key, _): .meta(key)
        case .asset(let a): .asset(a.assetId)
        case .workflow(let w): .workflow(w.workflowId)
        case .node(let n): .node(n.workflowId, n.nodeId)
        case .run(let r): .run(r.runId)
        case .await(let a): .await(a.awaitId)
        case .effect(let e): .effect(e.seq)
        case .effectTaken(let seq), .effectDelete(let seq): .effect(seq)
        }
    }

    /// Whether writing it can fail only for want of disk or memory, never on a constraint, so
    /// that a journal of such images always folds (``JournalCoding/plan(_:)`` applies the rule
    /// to a change set without making its images). An upsert by the row's key (meta, assets,
    /// nodes, runs), the update of a workflow row that exists, and marking or deleting an effect
    /// are; a new workflow (its `seq` is unique), an await (unique per node and run) and a new
    /// effect (its id is unique) are written to their tables, where a conflict fails the commit.
    var isJournalable: Bool {
        switch self {
        case .meta, .asset, .node, .run, .effectTaken, .effectDelete: true
        case .workflow(let w): w.existed
        case .await, .effect: false
        }
    }
}

enum RowKey: Hashable {
    case meta(String)
    case asset(String)
    case workflow(String)
    case node(String, String)
    case run(String)
    case await(String)
    case effect(Int64)
}

struct AssetRow: Equatable {
    var assetId: String
    var type: String
    var createdAt: Int64
    var pinned: Bool
    var orphanedAt: Int64?
    var data: [UInt8]
}

/// A workflow's own row: its fields, its summary columns and its data.
struct WorkflowRow: Equatable {
    var workflowId: String
    var seq: Int64
    var templateId: String
    var title: String
    var status: String
    var archived: Bool
    var createdAt: Int64
    var updatedAt: Int64
    var stepsDone: Int64
    var stepsTotal: Int64
    var awaitCount: Int64
    var hasBlockingAwait: Bool
    var searchText: String
    var nextDeadline: Int64?
    var queuedRemote: Int64
    var queuedLocal: Int64
    var runningRemote: Int64
    var runningLocal: Int64
    var inboxCount: Int64
    var data: [UInt8]
    /// Whether the table held the row before: an update is tried first (an insert follows if
    /// it changed nothing), and only such a row may wait in the journal (`isJournalable`).
    var existed: Bool
}

extension WorkflowRow {
    /// The row of a workflow with its summary (an extension, so that the memberwise
    /// initializer stays for the journal's decoder).
    init(_ w: Workflow, _ s: WorkflowSummary, existed: Bool) {
        workflowId = w.workflowId
        seq = w.seq
        templateId = w.templateId
        title = w.title
        status = w.status.rawValue
        archived = w.archived
        createdAt = w.createdAt.milliseconds
        updatedAt = w.updatedAt.milliseconds
        stepsDone = Int64(s.stepsDone)
        stepsTotal = Int64(s.stepsTotal)
        awaitCount = Int64(s.awaitCount)
        hasBlockingAwait = s.hasBlockingAwait
        searchText = s.searchText
        nextDeadline = s.nextDeadline?.milliseconds
        queuedRemote = Int64(s.queuedRemote)
        queuedLocal = Int64(s.queuedLocal)
        runningRemote = Int64(s.runningRemote)
        runningLocal = Int64(s.runningLocal)
        inboxCount = Int64(s.inboxCount)
        data = RecordCoding.workflowDataBytes(w)
        self.existed = existed
    }
}

struct NodeRow: Equatable {
    var workflowId: String
    var nodeId: String
    var position: Int64
    var state: String
    var data: [UInt8]
    var existed: Bool
}

struct RunRow: Equatable {
    var runId: String
    var workflowId: String
    var nodeId: String
    var seq: Int64
    var status: String
    var jobId: String?
    var data: [UInt8]
    var existed: Bool
    /// Whether the table's status and job id columns already hold these values (a hint, like
    /// `existed`: then only the data is written, leaving the indexes on them alone).
    var columnsKept: Bool
}

struct AwaitRow: Equatable {
    var awaitId: String
    var workflowId: String
    var nodeId: String
    var runId: String
    var seq: Int64
    var status: String
    var data: [UInt8]
}

struct EffectRow: Equatable {
    var seq: Int64
    var effectId: String
    var type: String
    var answerKey: String?
    var taken: Bool
    var data: [UInt8]
}
