import Foundation
import GRDB
import WorkflowCore
@testable import WorkflowStore
import XCTest

private func tempPath() -> String { NSTemporaryDirectory() + "wf-journal-\(UUID().uuidString).sqlite" }

private func removeStore(_ path: String) {
    for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
}

/// The database as a killed process leaves it: the files copied while the store is open, so
/// nothing is folded or closed.
private func copyAsKilled(_ path: String) -> String {
    let copy = tempPath()
    for s in ["", "-wal"] where FileManager.default.fileExists(atPath: path + s) {
        try! FileManager.default.copyItem(atPath: path + s, toPath: copy + s)
    }
    return copy
}

private func count(_ path: String, _ table: String) throws -> Int {
    let q = try DatabaseQueue(path: path)
    defer { try? q.close() }
    return try q.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
}

private func summary(_ w: Workflow) -> WorkflowSummary {
    WorkflowSummary(workflowId: w.workflowId, seq: w.seq, templateId: w.templateId, title: w.title, status: w.status,
                    archived: w.archived, createdAt: w.createdAt, updatedAt: w.updatedAt, stepsDone: 0,
                    stepsTotal: w.nodes.count, awaitCount: 0, hasBlockingAwait: false, searchText: w.title.lowercased(),
                    nextDeadline: nil, queuedRemote: 0, queuedLocal: 0, runningRemote: 0, runningLocal: 0, inboxCount: 0)
}

private let t0 = Timestamp(milliseconds: 1_000)

private func workflow(_ i: Int) -> Workflow {
    Workflow(workflowId: "wf-\(i)", seq: Int64(i), templateId: "tpl-1", title: "Workflow \(i)", createdAt: t0,
             nodes: [NodeInstance(nodeId: "a", state: .ready, params: [:], updatedAt: t0),
                     NodeInstance(nodeId: "b", state: .blocked, params: [:], updatedAt: t0)])
}

private func makeRun(_ id: String, node: String) -> Run {
    Run(runId: id, nodeId: node, number: 1, mode: .remote, kind: "K", trigger: .run, status: .running, params: [:],
        inputs: [:], idempotencyKey: id, createdAt: t0)
}

private func effect(_ seq: Int64, answerKey: String? = "job:1") -> Effect {
    Effect(seq: seq, id: "e-\(seq)", type: "remote.submit", body: ["id": .string("e-\(seq)"), "type": "remote.submit"],
           answerKey: answerKey)
}

/// A workflow through three commits (created, a run started, the run finished), each one a
/// change set of rows only; returns the last version.
private func driveOneWorkflow(_ store: SQLiteStore, _ i: Int) throws -> Workflow {
    var w = workflow(i)
    var cs = ChangeSet()
    cs.workflows = [(nil, w, summary(w))]
    cs.meta["counter.wf"] = .int(Int64(i))
    try store.commit(cs)
    w.markClean()
    var old = w
    w.nodes[0].state = .runningRemote
    w.runs.append(makeRun("run-\(i)", node: "a"))
    cs = ChangeSet()
    cs.workflows = [(old, w, summary(w))]
    try store.commit(cs)
    w.markClean()
    old = w
    w.nodes[0].state = .succeeded
    w.runs[0].status = .succeeded
    w.nodes[1].state = .ready
    cs = ChangeSet()
    cs.workflows = [(old, w, summary(w))]
    try store.commit(cs)
    w.markClean()
    return w
}

final class JournalTests: XCTestCase {
    /// A small commit of rows that cannot conflict is one journal row; the tables get it when something reads them,
    /// and every read of the store sees it before that.
    func testACommitOfRowsWaitsInTheJournalAndEveryReadSeesIt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        let w = try driveOneWorkflow(store, 1)
        XCTAssertEqual(try count(path, "workflows"), 1, "a new workflow (its seq is unique) goes to the table")
        XCTAssertEqual(try count(path, "journal"), 2, "the run started, the run finished")
        XCTAssertEqual(try count(path, "runs"), 0, "not folded yet")
        XCTAssertEqual(try store.workflowId(forRun: "run-1"), "wf-1", "answered from the journal")
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w, "loading a workflow with pending rows folds first")
        XCTAssertEqual(try count(path, "journal"), 0)
        XCTAssertEqual(try count(path, "runs"), 1)
        XCTAssertEqual(try count(path, "nodes"), 2)
        XCTAssertEqual(try store.loadSnapshot().meta["counter.wf"], .int(1))
        store.close()
    }

    /// After a kill (nothing folded, nothing closed) the next open replays the journal in order:
    /// the store holds exactly what was committed, and the journal is empty.
    func testAJournalLeftByAKilledProcessIsReplayedOnOpen() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        var written: [Workflow] = []
        for i in 1...5 { written.append(try driveOneWorkflow(store, i)) }
        // Effects: one handed out, one answered before any fold, one left pending.
        var cs = ChangeSet()
        cs.effectInserts = [effect(1), effect(2), effect(3)]
        try store.commit(cs)
        cs = ChangeSet()
        cs.effectsTaken = [1, 2]
        try store.commit(cs)
        cs = ChangeSet()
        cs.effectDeletes = [2]
        try store.commit(cs)
        XCTAssertGreaterThan(try count(path, "journal"), 0)

        let killed = copyAsKilled(path)
        defer { removeStore(killed) }
        store.close()
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(try count(killed, "journal"), 0, "replayed and folded at open")
        for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        let snapshot = try reopened.loadSnapshot()
        XCTAssertEqual(snapshot.workflows.map(\.workflowId), written.map(\.workflowId))
        XCTAssertEqual(snapshot.effects.map(\.seq), [1, 3])
        XCTAssertEqual(snapshot.effects.map(\.taken), [true, false])
        XCTAssertEqual(snapshot.meta["counter.wf"], .int(5), "the last image of a row wins")
        XCTAssertTrue(snapshot.activeRuns.isEmpty)
        reopened.close()
    }

    /// The journal holds at most `journalLimit` rows: the commit that would pass it writes
    /// everything to the tables, in the same transaction that empties the journal.
    func testTheJournalIsFoldedWhenItReachesItsLimit() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalLimit: 10)
        var written: [Workflow] = []
        for i in 1...8 {
            written.append(try driveOneWorkflow(store, i))
            XCTAssertLessThanOrEqual(try count(path, "journal"), 10)
        }
        XCTAssertGreaterThan(try count(path, "runs"), 0, "folded along the way")
        let killed = copyAsKilled(path)
        defer { removeStore(killed) }
        store.close()
        let reopened = try SQLiteStore(path: killed)
        for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        reopened.close()
    }

    /// A row rewritten by every commit (a job's progress) stays one pending row: the journal
    /// still folds after `journalLimit` commits, so it never grows without end.
    func testARowRewrittenByEveryCommitStillFoldsAtTheLimit() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalLimit: 10)
        var w = try driveOneWorkflow(store, 1)
        for i in 1...50 {
            let old = w
            w.runs[0].progress = Double(i) / 100
            var cs = ChangeSet()
            cs.workflows = [(old, w, nil)]
            try store.commit(cs)
            w.markClean()
            XCTAssertLessThanOrEqual(try count(path, "journal"), 10)
        }
        let killed = copyAsKilled(path)
        defer { removeStore(killed) }
        store.close()
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.runs[0].progress, 0.5)
        reopened.close()
    }

    /// A commit the journal cannot hold (a template here) folds the journal first; when it
    /// fails, nothing of it is written and the journal still holds what it held.
    func testAFailedCommitLeavesTheJournalAsItWas() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        let template = StoredTemplate(templateId: "tpl-1", seq: 1, name: "t", createdAt: t0, canonicalText: "{}",
                                      sourceSchema: "app.workflow/v2")
        var cs = ChangeSet()
        cs.templates = [template]
        try store.commit(cs)
        let w = try driveOneWorkflow(store, 1)
        let journal = try count(path, "journal")
        cs = ChangeSet()
        cs.templates = [template]  // the same id again: refused by the table
        XCTAssertThrowsError(try store.commit(cs))
        XCTAssertEqual(try count(path, "journal"), journal)
        XCTAssertEqual(try count(path, "runs"), 0)
        let killed = copyAsKilled(path)
        defer { removeStore(killed) }
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        store.close()
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w)
        reopened.close()
    }

    /// A damaged journal entry refuses the store with `storeCorrupt`, and folds none of it.
    func testADamagedJournalRefusesToOpenAndKeepsIt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        _ = try driveOneWorkflow(store, 1)
        let killed = copyAsKilled(path)
        defer { removeStore(killed) }
        store.close()
        let q = try DatabaseQueue(path: killed)
        try q.write { try $0.execute(sql: "UPDATE journal SET body = substr(body, 1, 20) WHERE seq = (SELECT MAX(seq) FROM journal)") }
        try q.close()
        XCTAssertThrowsError(try SQLiteStore(path: killed)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeCorrupt")
        }
        XCTAssertEqual(try count(killed, "journal"), 2)
        XCTAssertEqual(try count(killed, "runs"), 0)
    }

    /// Entries whose images cancel out (an effect inserted, then deleted) leave nothing pending,
    /// and the replay still empties the journal.
    func testEntriesThatCancelOutAreEmptiedOnReplay() throws {
        let path = tempPath()
        defer { removeStore(path) }
        try SQLiteStore(path: path).close()
        let e = EffectRow(seq: 9, effectId: "e-9", type: "remote.submit", answerKey: "k", taken: false, data: Array("{}".utf8))
        let q = try DatabaseQueue(path: path)
        try q.write { db in
            try db.execute(sql: "INSERT INTO journal (body) VALUES (?)", arguments: [Data(JournalCoding.encode([.effect(e)]))])
            try db.execute(sql: "INSERT INTO journal (body) VALUES (?)",
                           arguments: [Data(JournalCoding.encode([.effectTaken(seq: 9), .effectDelete(seq: 9)]))])
        }
        try q.close()
        let store = try SQLiteStore(path: path)
        XCTAssertEqual(try count(path, "journal"), 0)
        XCTAssertEqual(try count(path, "effects"), 0)
        XCTAssertTrue(try store.loadSnapshot().effects.isEmpty)
        store.close()
    }

    /// Every kind of row image reads back as it was written.
    func testEveryRowImageRoundTripsThroughAnEntry() throws {
        var w = workflow(7)
        w.runs.append(makeRun("run-7", node: "a"))
        w.runs[0].jobId = "job-7"
        let images: [RowImage] = [
            .meta(key: "clock.now", value: Array(#""2026-01-01T00:00:00.000Z""#.utf8)),
            .asset(AssetRow(assetId: "as-1", type: "TextRef", createdAt: -5, pinned: true, orphanedAt: nil, data: [])),
            .asset(AssetRow(assetId: "as-2", type: "ImageRef", createdAt: 1 << 40, pinned: false, orphanedAt: 77,
                            data: Array("{\"uri\":\"é\"}".utf8))),
            .workflow(WorkflowRow(w, summary(w), existed: true)),
            .node(NodeRow(workflowId: "wf-7", nodeId: "a", position: 0, state: "ready", data: [1, 2, 3], existed: false)),
            .run(RunRow(runId: "run-7", workflowId: "wf-7", nodeId: "a", seq: 0, status: "running", jobId: "job-7",
                        data: RecordCoding.runBytes(w.runs[0]), existed: true, columnsKept: false)),
            .run(RunRow(runId: "run-8", workflowId: "wf-7", nodeId: "b", seq: 1, status: "queued", jobId: nil,
                        data: [], existed: false, columnsKept: true)),
            .await(AwaitRow(awaitId: "aw-1", workflowId: "wf-7", nodeId: "a", runId: "run-7", seq: 0, status: "open",
                            data: Array("{}".utf8))),
            .effect(EffectRow(seq: Int64.max, effectId: "e-x", type: "remote.submit", answerKey: nil, taken: false, data: [0])),
            .effectTaken(seq: 3),
            .effectDelete(seq: Int64.min),
        ]
        XCTAssertEqual(try JournalCoding.decode(JournalCoding.encode(images)), images)
        XCTAssertEqual(try JournalCoding.decode(JournalCoding.encode([])), [])
    }

    /// Merging keeps the last image of each row, and writing the merged images once leaves the
    /// tables as writing every image in order would.
    func testPendingRowsKeepTheLastImageOfEachRow() {
        var p = PendingRows()
        let e1 = EffectRow(seq: 1, effectId: "e-1", type: "t", answerKey: "k", taken: false, data: [])
        p.merge(.effect(e1))
        p.merge(.effectTaken(seq: 1))
        var taken = e1
        taken.taken = true
        XCTAssertEqual(p.rows[.effect(1)], .effect(taken), "handed out before it reached the table")
        p.merge(.effectDelete(seq: 1))
        XCTAssertNil(p.rows[.effect(1)], "inserted and deleted between folds: never written")
        p.merge(.effectTaken(seq: 2))
        p.merge(.effectDelete(seq: 2))
        XCTAssertEqual(p.rows[.effect(2)], .effectDelete(seq: 2), "a row of the table is deleted")

        let first = RunRow(runId: "r", workflowId: "wf", nodeId: "n", seq: 0, status: "running", jobId: "j", data: [1],
                           existed: true, columnsKept: true)
        var second = first
        second.data = [2]
        second.existed = true
        p.merge(.run(first))
        p.merge(.run(second))
        XCTAssertEqual(p.rows[.run("r")], .run(second), "same status and job: the columns still hold them")
        var third = second
        third.status = "succeeded"
        third.columnsKept = true  // relative to `second`, not to the table
        p.merge(.run(third))
        guard case .run(let merged)? = p.rows[.run("r")] else { return XCTFail("the run is pending") }
        XCTAssertFalse(merged.columnsKept, "the table still says running")
        XCTAssertTrue(merged.existed)
        let node = NodeRow(workflowId: "wf", nodeId: "n", position: 0, state: "ready", data: [], existed: false)
        var later = node
        later.existed = true
        p.merge(.node(node))
        p.merge(.node(later))
        XCTAssertEqual(p.rows[.node("wf", "n")], .node(node), "new before the first image: still new")
        XCTAssertEqual(p.workflowIds, ["wf"])
    }
}

/// DESIGN §5: durable against a killed process by default (WAL, `synchronous=NORMAL`);
/// `"durability": "full"` also survives power loss (`synchronous=FULL`: the log is synced on
/// every commit).
final class DurabilityTests: XCTestCase {
    func testFullDurabilitySyncsEveryCommitOnAFileStore() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, durability: .full)
        defer { store.close() }
        XCTAssertEqual(try store.synchronousLevel(), 2, "FULL, not the NORMAL GRDB sets when it turns on WAL")
    }

    func testNormalDurabilityIsTheDefault() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.synchronousLevel(), 1)
    }
}
