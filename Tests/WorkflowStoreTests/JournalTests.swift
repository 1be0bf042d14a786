import Foundation
import GRDB
import WorkflowCore
@testable import WorkflowStore
import XCTest

private func tempPath() -> String { NSTemporaryDirectory() + "wf-journal-\(UUID().uuidString).sqlite" }

private func removeStore(_ path: String) {
    for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) }
}

/// The store's files as a process killed at this moment leaves them: copied while the store is
/// open, with its writes held (the folder's too), so nothing is folded or closed.
private func copyAsKilled(_ store: SQLiteStore) -> String {
    let copy = tempPath()
    store.withWritesHeld {
        for (from, to) in zip(SQLiteStore.files(ofStore: store.path), SQLiteStore.files(ofStore: copy))
        where FileManager.default.fileExists(atPath: from) && !from.hasSuffix("-shm") {
            try! FileManager.default.copyItem(atPath: from, toPath: to)
        }
    }
    return copy
}

private func count(_ path: String, _ table: String) throws -> Int {
    let q = try DatabaseQueue(path: path)
    defer { try? q.close() }
    return try q.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
}

/// Entries in the journal's file of the store at `path`.
private func entries(_ path: String) throws -> Int { JournalFile.entryNumbers(ofStore: path).count }

/// Entries of the journal the store's tables do not hold yet.
private func unfoldedEntries(_ path: String) throws -> Int {
    let folded = try foldedThrough(path)
    return JournalFile.entryNumbers(ofStore: path).filter { $0 > folded }.count
}

/// Replaces the journal of the (closed) store at `path` with these entries.
private func writeJournal(_ path: String, _ entries: [(seq: Int64, body: [UInt8])]) throws {
    let id = try DatabaseQueue(path: path).read { db in
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'store.id'").flatMap { try JSON(parsing: $0).stringValue }
    }
    let journal = try JournalFile(storePath: path, durability: .normal)
    try journal.recover(storeId: try XCTUnwrap(id))
    try journal.begin()
    for e in entries { try journal.append(seq: e.seq, body: e.body, syncedThrough: 0) }
    journal.close()
}

/// Rows (row images) of the journal's entries the store's tables do not hold yet.
private func unfoldedRows(_ path: String) throws -> Int {
    let folded = try foldedThrough(path)
    guard let data = FileManager.default.contents(atPath: JournalFile.path(forStore: path)) else { return 0 }
    return try JournalFile.records(in: [UInt8](data)).filter { $0.seq > folded }
        .reduce(0) { $0 + (try JournalCoding.decode($1.body).images.count) }
}

/// The last journal entry the store's tables hold.
private func foldedThrough(_ path: String) throws -> Int64 {
    let q = try DatabaseQueue(path: path)
    defer { try? q.close() }
    return try q.read {
        try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'journal.foldedThrough'").flatMap { Int64($0) } ?? 0
    }
}

/// An entry as earlier versions wrote it into the store's own `journal` table: version 1, no count
/// of direct commits.
private func legacyEntry(_ images: [RowImage]) -> [UInt8] {
    let current = JournalCoding.encode(images, directCommits: 0)
    return [JournalCoding.legacyVersion] + current.dropFirst(2)
}

/// Sets a value of the store's meta table behind its back.
private func setMeta(_ path: String, _ key: String, _ value: String) throws {
    let q = try DatabaseQueue(path: path)
    defer { try? q.close() }
    try q.write { try $0.execute(sql: "UPDATE meta SET value = ? WHERE key = ?", arguments: [value, key]) }
}

/// Waits (at most 10 s) until `condition` holds, for what the folder does on its own thread.
private func eventually(_ what: String, _ condition: () throws -> Bool, file: StaticString = #filePath,
                        line: UInt = #line) rethrows {
    let deadline = Date().addingTimeInterval(10)
    while try !condition() {
        guard Date() < deadline else { return XCTFail("never happened: \(what)", file: file, line: line) }
        Thread.sleep(forTimeInterval: 0.01)
    }
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

/// A `remote.submit` as the engine writes it: a store refuses one that lacks what its host acts
/// on or what settles it (OPS section 13).
private func effect(_ seq: Int64) -> Effect {
    Effect(seq: seq, id: "e-\(seq)", type: "remote.submit",
           body: ["id": .string("e-\(seq)"), "type": "remote.submit", "workflowId": "wf-1", "nodeId": "n",
                  "runId": .string("run-\(seq)"), "kind": "K", "params": [:], "inputs": [:],
                  "idempotencyKey": .string("wf-1/n/run-\(seq)")],
           answerKey: "submit:run-\(seq)")
}

/// What a process killed now would leave of `store`, opened: the files are copied, `store` is
/// closed, and `check` gets a store opened on the copy (and the copy's path), closed and removed
/// after.
private func reopenAfterKill(_ store: SQLiteStore, _ check: (SQLiteStore, String) throws -> Void) throws {
    let killed = copyAsKilled(store)
    defer { removeStore(killed) }
    store.close()
    let reopened = try SQLiteStore(path: killed)
    defer { reopened.close() }
    try check(reopened, killed)
}

/// Changes node b's params in `w` and appends the change to `backlog` as the entry after `seq`.
private func appendParamsChange(_ backlog: JournalBacklog, _ w: inout Workflow, _ seq: inout Int64) throws {
    let old = w
    w.nodes[1].params["n"] = .int(seq)
    seq += 1
    backlog.append(try journalEntry(seq, from: old, to: w))
}

/// A store at `path` holding workflow 1 as created (written straight to the tables), closed;
/// returns the workflow as stored.
private func closedStoreWithOneWorkflow(_ path: String) throws -> Workflow {
    let store = try SQLiteStore(path: path, folding: .whenFull)
    var w = workflow(1)
    var cs = ChangeSet()
    cs.workflows = [WorkflowWrite(nil, w, summary(w))]
    try store.commit(cs)
    w.markClean()
    XCTAssertNil(store.close())
    return w
}

/// A connection to the closed store at `path` that owns it, as an open store's does, its queue,
/// and the last journal entry the store's tables hold.
private func owningConnection(_ path: String) throws -> (StoreConnection, DatabaseQueue, Int64) {
    let queue = try StoreConnection.open(path: path, durability: .normal, autocheckpointPages: 1_000)
    let connection = StoreConnection(queue: queue, path: path, ownerToken: "test", durability: .normal)
    try connection.claimOwnership()
    return (connection, queue, Int64(try connection.metaValue(JournalBacklog.foldedThroughKey) ?? "0")!)
}

/// Journal entry `seq` of one workflow changed from `old` to `new`, as a commit appends it.
private func journalEntry(_ seq: Int64, from old: Workflow, to new: Workflow) throws -> JournalBacklog.Entry {
    var cs = ChangeSet()
    cs.workflows = [WorkflowWrite(old, new, summary(new))]
    let plan = try XCTUnwrap(JournalCoding.plan(cs))
    return .init(seq: seq, body: JournalCoding.encode(cs, plan, directCommits: 0), rows: plan.rows,
                 workflowIds: [new.workflowId])
}

/// Changes `w` and commits the change (its rows, and `effects` inserted with them), as the engine
/// does; `w` is then what the store holds.
private func commit(_ store: SQLiteStore, _ w: inout Workflow, effects: [Effect] = [],
                    _ change: (inout Workflow) -> Void) throws {
    let old = w
    change(&w)
    var cs = ChangeSet()
    cs.workflows = [WorkflowWrite(old, w, nil)]
    cs.effectInserts = effects
    try store.commit(cs)
    w.markClean()
}

/// Commits template tpl-1 (a commit the journal does not take), then drives workflow 1 through
/// commits it does take; returns the template's change set (refused if committed again) and the
/// workflow.
private func templateThenOneWorkflow(_ store: SQLiteStore) throws -> (ChangeSet, Workflow) {
    var cs = ChangeSet()
    cs.templates = [StoredTemplate(templateId: "tpl-1", seq: 1, name: "t", createdAt: t0, canonicalText: "{}",
                                   sourceSchema: "app.workflow/v2")]
    try store.commit(cs)
    return (cs, try driveOneWorkflow(store, 1))
}

/// A workflow through three commits (created, a run started, the run finished), each one a
/// change set of rows only; returns the last version.
private func driveOneWorkflow(_ store: SQLiteStore, _ i: Int) throws -> Workflow {
    var w = workflow(i)
    var cs = ChangeSet()
    cs.workflows = [WorkflowWrite(nil, w, summary(w))]
    cs.meta["counter.wf"] = .int(Int64(i))
    try store.commit(cs)
    w.markClean()
    var old = w
    w.nodes[0].state = .runningRemote
    w.runs.append(makeRun("run-\(i)", node: "a"))
    cs = ChangeSet()
    cs.workflows = [WorkflowWrite(old, w, summary(w))]
    try store.commit(cs)
    w.markClean()
    old = w
    w.nodes[0].state = .succeeded
    w.runs[0].status = .succeeded
    w.nodes[1].state = .ready
    cs = ChangeSet()
    cs.workflows = [WorkflowWrite(old, w, summary(w))]
    try store.commit(cs)
    w.markClean()
    return w
}

final class JournalTests: XCTestCase {
    /// A small commit of rows that cannot conflict is one entry of the journal's own file; the
    /// tables get it when something reads them, and every read of the store sees it before that.
    func testACommitOfRowsWaitsInTheJournalAndEveryReadSeesIt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        let w = try driveOneWorkflow(store, 1)
        XCTAssertEqual(try count(path, "workflows"), 1, "a new workflow (its seq is unique) goes to the table")
        XCTAssertEqual(try entries(path), 2, "the run started, the run finished")
        XCTAssertEqual(try count(path, "runs"), 0, "not folded yet")
        XCTAssertEqual(try store.workflowId(forRun: "run-1"), "wf-1", "a read folds first")
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        XCTAssertEqual(try count(path, "runs"), 1)
        XCTAssertEqual(try count(path, "nodes"), 2)
        XCTAssertEqual(try foldedThrough(path), 2, "the tables say which entries they hold")
        XCTAssertEqual(try store.loadSnapshot().meta["counter.wf"], .int(1))
        store.close()
        XCTAssertEqual(try entries(path), 0, "closing empties the journal")
    }

    /// An in-memory store has no journal file (nothing survives it), but it keeps the same
    /// backlog: a small commit of rows waits in memory, written to the tables by the next read
    /// that needs it, as on file. A progress report then costs no SQLite transaction of its own.
    func testAnInMemoryStoresCommitsOfRowsWaitInItsBacklogAndEveryReadSeesThem() throws {
        let store = try SQLiteStore(path: ":memory:")
        defer { store.close() }
        XCTAssertEqual(store.folding, .whenFull, "no thread of its own: the caller's thread folds")
        let w = try driveOneWorkflow(store, 1)
        XCTAssertEqual(try store.tableRowCount("workflows"), 1, "a new workflow goes to the table")
        XCTAssertEqual(store.backlogCounts.entries, 2, "the run started, the run finished")
        XCTAssertEqual(try store.tableRowCount("runs"), 0, "not folded yet")
        XCTAssertEqual(try store.workflowId(forRun: "run-1"), "wf-1", "a read folds first")
        XCTAssertEqual(store.backlogCounts.entries, 0)
        XCTAssertEqual(try store.tableRowCount("runs"), 1)
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        var next = try driveOneWorkflow(store, 2)
        try commit(store, &next) { $0.runs[0].progress = 0.5 }
        XCTAssertEqual(try store.loadWorkflow("wf-2"), next, "loading a workflow whose rows wait folds them")
        XCTAssertEqual(store.backlogCounts.entries, 0)
        XCTAssertEqual(try store.loadSnapshot().workflows.count, 2)
    }

    /// An in-memory store's backlog is bounded as a file store's is: the commit that would take
    /// it past its limit folds it first, on the caller's thread, even when a thread of its own
    /// was asked for; every report survives the folds.
    func testAnInMemoryStoreFoldsItsBacklogOnTheCallersThreadWhenFull() throws {
        let store = try SQLiteStore(path: ":memory:", folding: .background, journalLimit: 10)
        defer { store.close() }
        XCTAssertEqual(store.folding, .whenFull)
        var w = try driveOneWorkflow(store, 1)
        var folds = 0
        for i in 1...50 {
            let before = store.backlogCounts.entries
            try commit(store, &w) { $0.runs[0].progress = Double(i) / 100 }
            XCTAssertLessThanOrEqual(store.backlogCounts.entries, 10, "at most the limit after commit \(i)")
            if store.backlogCounts.entries <= before { folds += 1 }
        }
        XCTAssertEqual(folds, 5, "one fold every ten reports")
        XCTAssertGreaterThan(try store.tableRowCount("runs"), 0, "folded along the way")
        XCTAssertEqual(try store.loadWorkflow("wf-1")?.runs[0].progress, 0.5)
    }

    /// A commit the backlog does not take (a template) is written with the backlog in one
    /// transaction; when the table refuses it, the backlog keeps what it held and the tables get
    /// none of it, in memory as on file.
    func testAnInMemoryStoresFailedCommitLeavesItsBacklogAsItWas() throws {
        let store = try SQLiteStore(path: ":memory:")
        defer { store.close() }
        let (again, w) = try templateThenOneWorkflow(store)
        XCTAssertEqual(store.backlogCounts.entries, 2)
        XCTAssertThrowsError(try store.commit(again), "the same template id again: refused by the table")
        XCTAssertEqual(store.backlogCounts.entries, 2)
        XCTAssertEqual(try store.tableRowCount("runs"), 0, "the failed transaction wrote none of the backlog")
        var cs = ChangeSet()
        cs.templates = [StoredTemplate(templateId: "tpl-2", seq: 2, name: "u", createdAt: t0, canonicalText: "{}",
                                       sourceSchema: "app.workflow/v2")]
        try store.commit(cs)
        XCTAssertEqual(store.backlogCounts.entries, 0, "written with the template")
        XCTAssertEqual(try store.tableRowCount("runs"), 1)
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
    }

    /// By default a thread of the store's own folds the journal: the rows reach the tables with
    /// no read asking for them, and the journal's file is emptied as the engine goes on.
    func testTheFolderWritesTheJournalToTheTablesOnItsOwn() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        XCTAssertEqual(store.folding, .background)
        var written: [Workflow] = []
        for i in 1...3 { written.append(try driveOneWorkflow(store, i)) }
        try eventually("the folder folds the six entries") { try foldedThrough(path) == 6 }
        XCTAssertEqual(try count(path, "runs"), 3)
        _ = try driveOneWorkflow(store, 4)
        XCTAssertLessThanOrEqual(try entries(path), 2, "the next commit empties the journal of what was folded")
        written.append(try store.loadWorkflow("wf-4")!)
        try reopenAfterKill(store) { reopened, _ in
            for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        }
    }

    /// After a kill (nothing folded, nothing closed) the next open replays the journal in order:
    /// the store holds exactly what was committed, and the journal is empty.
    func testAJournalLeftByAKilledProcessIsReplayedOnOpen() throws {
        for folding in JournalFolding.allCases {
            let path = tempPath()
            defer { removeStore(path) }
            let store = try SQLiteStore(path: path, folding: folding)
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

            try reopenAfterKill(store) { reopened, killed in
                XCTAssertEqual(try entries(killed), 0, "replayed and folded at open (\(folding))")
                for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
                let snapshot = try reopened.loadSnapshot()
                XCTAssertEqual(snapshot.workflows.map(\.workflowId), written.map(\.workflowId))
                XCTAssertEqual(snapshot.effects.map(\.seq), [1, 3])
                XCTAssertEqual(snapshot.effects.map(\.taken), [true, false])
                XCTAssertEqual(snapshot.meta["counter.wf"], .int(5), "the last image of a row wins")
                XCTAssertTrue(snapshot.activeRuns.isEmpty)
            }
        }
    }

    /// An entry the tables already hold is not replayed: rows written to the tables after it (by
    /// a commit the journal does not take) are not overwritten with its older images.
    func testAnEntryAlreadyFoldedIsNotReplayedOverLaterRows() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        // A journaled change, then a change written to the tables (a new effect goes there).
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }
        try commit(store, &w, effects: [effect(1)]) { $0.nodes[1].state = .failed }
        XCTAssertEqual(try entries(path), 3, "folded, not synced: the journal keeps them")
        try reopenAfterKill(store) { reopened, _ in
            XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.nodes[1].state, .failed)
            XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w)
        }
    }

    /// Entry numbers are never used twice, across closes and reopens: the tables' record of the
    /// last entry folded always tells folded entries from new ones.
    func testEntryNumbersGoOnAcrossReopens() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        store.close()
        XCTAssertEqual(try foldedThrough(path), 2)
        store = try SQLiteStore(path: path, folding: .whenFull)
        try commit(store, &w) { $0.nodes[1].state = .succeeded }
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: path), [3])
        try reopenAfterKill(store) { reopened, _ in
            XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.nodes[1].state, .succeeded)
        }
    }

    /// After an open replays what a killed process left, the next commit is numbered after the
    /// replayed entries. Numbered after the tables' last fold before the replay instead, it would
    /// take a number the tables hold as folded, and the open after a second kill would skip it.
    func testAfterAReplayTheNextCommitIsNumberedAfterTheReplayedEntries() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        XCTAssertGreaterThan(try unfoldedEntries(path), 0)
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        let replayed = try SQLiteStore(path: killed, folding: .whenFull)
        try commit(replayed, &w) { $0.nodes[1].state = .succeeded }
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [try foldedThrough(killed) + 1])
        try reopenAfterKill(replayed) { reopened, _ in
            XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w, "the commit after the replay survives a second kill")
        }
    }

    /// A journal left beside a store file that was deleted and made again belongs to the old
    /// store: it is emptied, never replayed into the new one.
    func testAJournalOfAnotherStoreIsNotReplayed() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        _ = try driveOneWorkflow(store, 1)
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        for file in SQLiteStore.files(ofStore: killed).prefix(3) { try? FileManager.default.removeItem(atPath: file) }
        XCTAssertEqual(try entries(killed), 2)
        let fresh = try SQLiteStore(path: killed)
        XCTAssertEqual(try entries(killed), 0)
        XCTAssertTrue(try fresh.loadSnapshot().workflows.isEmpty)
        XCTAssertNil(try fresh.workflowId(forRun: "run-1"))
        fresh.close()
    }

    /// A killed store whose last direct commit a power loss took, with an entry journaled after
    /// it: the path of its copy.
    private func storeWithAnEntryAfterALostDirectCommit() throws -> String {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)  // the creation is a direct commit, then two entries
        // A new effect is written straight to the tables; the change after it is journaled.
        try commit(store, &w, effects: [effect(1)]) { $0.nodes[1].state = .ready }
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }
        let killed = copyAsKilled(store)
        store.close()
        // As if the second direct commit never reached the disk.
        try setMeta(killed, "journal.directCommits", "1")
        return killed
    }

    /// With `synchronous=NORMAL` a power loss may take the last commits of each file separately.
    /// Entries appended after a commit written straight to the tables that the store lost are not
    /// replayed (they could name rows that commit made): the store comes back as it was before
    /// it, with no hole, and the open reports how many entries it dropped.
    func testEntriesAfterADirectCommitThePowerLossTookAreNotReplayed() throws {
        let killed = try storeWithAnEntryAfterALostDirectCommit()
        defer { removeStore(killed) }
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(reopened.entriesDiscardedAtOpen, 1)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.nodes[1].state, .ready, "the entry after it is dropped")
        XCTAssertEqual(try entries(killed), 0)
        reopened.close()
        let again = try SQLiteStore(path: killed)
        XCTAssertEqual(again.entriesDiscardedAtOpen, 0, "dropped for good")
        again.close()
    }

    /// The entries dropped at open leave no hole in the numbering: the next commit takes the
    /// number after the last entry the tables hold, so the journal it starts still follows on
    /// from the tables at the next open. (Found by the kill test's power cuts on "normal": the
    /// next commit took the number after the dropped ones, and the open after the next kill
    /// refused the store as storeCorrupt, "goes on from entry 99, but the store's tables hold
    /// entries up to 98 only".)
    func testAfterEntriesAreDroppedAtOpenTheNextCommitsStillReplayAfterAKill() throws {
        let killed = try storeWithAnEntryAfterALostDirectCommit()
        defer { removeStore(killed) }
        let reopened = try SQLiteStore(path: killed, folding: .whenFull)
        XCTAssertEqual(reopened.entriesDiscardedAtOpen, 1)
        var again = try XCTUnwrap(reopened.loadWorkflow("wf-1"))
        try commit(reopened, &again) { $0.nodes[1].state = .runningRemote }
        try commit(reopened, &again) { $0.nodes[1].state = .succeeded }
        let killedAgain = copyAsKilled(reopened)
        defer { removeStore(killedAgain) }
        reopened.close()
        let last = try SQLiteStore(path: killedAgain)
        XCTAssertEqual(try last.loadWorkflow("wf-1")?.nodes[1].state, .succeeded)
        last.close()
    }

    /// A store written by an earlier version keeps its journal in its own `journal` table: it is
    /// replayed at open, and emptied.
    func testAJournalKeptInTheStoreByAnEarlierVersionIsReplayed() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var store = try SQLiteStore(path: path, folding: .whenFull)
        let w = try driveOneWorkflow(store, 1)
        store.close()
        let node = NodeRow(workflowId: "wf-1", nodeId: "b", position: 1, state: "skipped",
                           data: RecordCoding.nodeBytes(NodeInstance(nodeId: "b", state: .skipped, updatedAt: t0)), existed: true)
        let q = try DatabaseQueue(path: path)
        try q.write { db in
            try db.execute(sql: "INSERT INTO journal (body) VALUES (?)", arguments: [Data(legacyEntry([.node(node)]))])
        }
        try q.close()
        store = try SQLiteStore(path: path, folding: .whenFull)
        XCTAssertEqual(try count(path, "journal"), 0)
        XCTAssertEqual(try store.loadWorkflow("wf-1")?.nodes[1].state, .skipped)
        XCTAssertEqual(try store.loadWorkflow("wf-1")?.nodes[0], w.nodes[0])
        store.close()
    }

    /// Killed at any moment while the folder works: the copy always opens to exactly what was
    /// committed before the moment.
    func testAKillAtAnyMomentOfTheFolderLosesNothing() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalLimit: 40)
        var rng = SplitMix64(seed: 5)
        var workflows: [Workflow] = []
        for i in 1...6 { workflows.append(try driveOneWorkflow(store, i)) }
        for round in 0..<120 {
            let i = Int(rng.next() % UInt64(workflows.count))
            try commit(store, &workflows[i]) {
                $0.runs[0].progress = Double(round) / 1000
                $0.nodes[1].state = round % 2 == 0 ? .ready : .blocked
            }
            guard round % 20 == 7 else { continue }
            let killed = copyAsKilled(store)
            defer { removeStore(killed) }
            let reopened = try SQLiteStore(path: killed)
            for w in workflows { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w, "round \(round)") }
            reopened.close()
        }
        store.close()
    }

    /// The folder records its fold as synced (so the journal may drop its entries at the next
    /// append) only once the fold's transaction committed: while the transaction waits for the
    /// store's connection, the entries stay unfolded and the journal keeps them. A power cut in
    /// that window must find them in one file or the other. Random kills rarely land in it (a
    /// mutant marking the fold first survived 3,000 power cuts), so it is pinned here: the
    /// connection is held by the test, and the folder is caught between its lock and its commit.
    func testTheFolderRecordsAFoldAsSyncedOnlyOnceItsTransactionCommitted() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let old = try closedStoreWithOneWorkflow(path)
        // The store's connection and a backlog of one entry, as an open store holds them.
        let (connection, queue, foldedBefore) = try owningConnection(path)
        defer { connection.close() }
        let seq = foldedBefore + 1
        let backlog = JournalBacklog()
        var w = old
        w.nodes[0].state = .runningRemote
        backlog.append(try journalEntry(seq, from: old, to: w))

        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread { queue.inDatabase { _ in holding.signal(); release.wait() } }.start()
        holding.wait()  // the connection is the test's
        final class Outcome: @unchecked Sendable { var failure: Error? }
        let folded = DispatchSemaphore(value: 0), outcome = Outcome()
        Thread {
            do { _ = try backlog.foldInBackground(on: connection) } catch { outcome.failure = error }
            folded.signal()
        }.start()
        let deadline = Date(timeIntervalSinceNow: 10)
        while !backlog.writeLock.isHeld, Date() < deadline { usleep(1_000) }
        XCTAssertTrue(backlog.writeLock.isHeld, "the folder took its lock")
        // Caught inside: for a while, nothing may say the entry is folded, let alone synced.
        let watchUntil = Date(timeIntervalSinceNow: 0.3)
        while Date() < watchUntil {
            XCTAssertLessThan(backlog.syncedThrough, seq, "marked synced before its transaction committed")
            XCTAssertLessThan(backlog.foldedThrough, seq, "marked folded before its transaction committed")
            XCTAssertFalse(backlog.isEmpty, "the entry left the backlog before its transaction committed")
            if backlog.syncedThrough >= seq { break }
            usleep(2_000)
        }
        release.signal()
        folded.wait()
        XCTAssertNil(outcome.failure)
        XCTAssertEqual(backlog.syncedThrough, seq)
        XCTAssertTrue(backlog.isEmpty)
        XCTAssertEqual(try connection.metaValue(JournalBacklog.foldedThroughKey), String(seq))
    }

    /// The engine's thread waiting for the folder's fold waits for the fold under way to end, not
    /// for a moment with no fold under way: under load the folder starts its next fold at once,
    /// on what came meanwhile, and such a wait lasted two folds or more (in `wf-bench
    /// throughput`, 61–113 ms each). Here the folder's first fold is caught in its transaction
    /// (the test holds the store's connection), a thread waits for the write lock behind it, so
    /// that the folder's next fold, started at once, is held by that thread; the wait must end
    /// with the first fold all the same.
    func testWaitingForTheFoldersFoldEndsWithThatFoldNotWithTheNext() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var w = try closedStoreWithOneWorkflow(path)
        let (connection, queue, folded) = try owningConnection(path)
        defer { connection.close() }
        var seq = folded
        let backlog = JournalBacklog()
        func appendEntry() throws { try appendParamsChange(backlog, &w, &seq) }
        XCTAssertFalse(backlog.waitForFolderFold(), "no fold under way: nothing to wait for")
        try appendEntry()
        final class Outcome: @unchecked Sendable {
            let lock = NSLock()
            var waited = false, failure: Error?
        }
        let outcome = Outcome()
        let holding = DispatchSemaphore(value: 0), letConnectionGo = DispatchSemaphore(value: 0)
        let letLockGo = DispatchSemaphore(value: 0)
        let folderDone = DispatchSemaphore(value: 0), waiterDone = DispatchSemaphore(value: 0)
        Thread { queue.inDatabase { _ in holding.signal(); letConnectionGo.wait() } }.start()
        holding.wait()  // the connection is the test's
        // The folder: a fold, caught in its transaction, then the next one at once.
        Thread {
            do {
                _ = try backlog.foldInBackground(on: connection)
                _ = try backlog.foldInBackground(on: connection)
            } catch {
                outcome.lock.withLock { outcome.failure = error }
            }
            folderDone.signal()
        }.start()
        eventually("the first fold took the write lock") { backlog.writeLock.isHeld }
        // Takes the write lock as the first fold lets it go, before the next fold can.
        Thread {
            backlog.writeLock.lockForEngine()
            letLockGo.wait()
            backlog.writeLock.unlock()
        }.start()
        eventually("a thread waits for the write lock") { backlog.writeLock.enginesWaiting == 1 }
        Thread {
            let waited = backlog.waitForFolderFold()
            outcome.lock.withLock { outcome.waited = waited }
            waiterDone.signal()
        }.start()
        eventually("the waiter waits") { backlog.folderFoldWaiters == 1 }
        usleep(20_000)
        XCTAssertEqual(waiterDone.wait(timeout: .now()), .timedOut, "the wait ended before the fold")
        try appendEntry()  // what the next fold takes
        letConnectionGo.signal()
        XCTAssertEqual(waiterDone.wait(timeout: .now() + 10), .success, "the wait ended with the first fold")
        XCTAssertTrue(outcome.lock.withLock { outcome.waited })
        XCTAssertEqual(backlog.foldedThrough, seq - 1, "the first fold's entry folded")
        eventually("the next fold is under way, held") { backlog.folderFoldUnderWay }
        letLockGo.signal()
        XCTAssertEqual(folderDone.wait(timeout: .now() + 10), .success)
        XCTAssertNil(outcome.lock.withLock { outcome.failure })
        XCTAssertEqual(backlog.foldedThrough, seq)
        XCTAssertTrue(backlog.isEmpty)
        XCTAssertFalse(backlog.folderFoldUnderWay)
    }

    /// Every fold commits synced, on "normal" too (`synchronous=FULL` for its transaction): the
    /// journal drops the entries a fold holds once it is recorded synced, so an unsynced fold lost
    /// to a power cut would take them from both files. Power cuts found a fold left unsynced at
    /// open or by foldAll within a few dozen cuts, but one left unsynced by the folder's
    /// `syncFolded` in no mode of the kill test: the statements the connection runs are traced
    /// here, for the folder's fold, the engine thread's fold and the sync of unsynced folds. And
    /// each commit must write to SQLite's log: a commit that writes no page syncs nothing, which
    /// the sync of unsynced folds did while it rewrote the last entry folded as it was (the
    /// kill test's power cuts with pauses then found a journal going on after a gap).
    func testEveryFoldCommitsSyncedOnNormalDurability() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var w = try closedStoreWithOneWorkflow(path)
        let (connection, queue, folded) = try owningConnection(path)
        defer { connection.close() }
        var seq = folded
        let backlog = JournalBacklog()
        func appendEntry() throws { try appendParamsChange(backlog, &w, &seq) }
        /// The bytes of SQLite's log: it only grows here (no checkpoint restarts it).
        func logBytes() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
        }
        /// The SQL the connection runs during `body`, and whether the log grew meanwhile.
        func traced(_ body: () throws -> Void) rethrows -> (sql: [String], logged: Bool) {
            final class Lines: @unchecked Sendable { var all: [String] = [] }
            let lines = Lines()
            let before = logBytes()
            queue.inDatabase { db in db.trace(options: .statement) { lines.all.append($0.description) } }
            defer { queue.inDatabase { db in db.trace(options: []) } }
            try body()
            return (lines.all, logBytes() > before)
        }
        func assertSynced(_ run: (sql: [String], logged: Bool), _ what: String, file: StaticString = #filePath,
                          line: UInt = #line) {
            let sql = run.sql
            let raise = sql.firstIndex(of: "PRAGMA synchronous = FULL")
            let commit = sql.firstIndex { $0.hasPrefix("COMMIT") }
            let lower = sql.lastIndex(of: "PRAGMA synchronous = NORMAL")
            XCTAssertNotNil(commit, "\(what): \(sql)", file: file, line: line)
            XCTAssertTrue(raise != nil && commit != nil && lower != nil && raise! < commit! && commit! < lower!,
                          "\(what) committed without a sync: \(sql)", file: file, line: line)
            XCTAssertTrue(run.logged, "\(what) wrote nothing to the log, so its commit synced nothing: \(sql)",
                          file: file, line: line)
        }

        try appendEntry()
        assertSynced(try traced { XCTAssertTrue(try backlog.foldInBackground(on: connection)) }, "the folder's fold")
        try appendEntry()
        assertSynced(try traced {
            backlog.writeLock.lockForEngine()
            defer { backlog.writeLock.unlock() }
            try backlog.foldAll(on: connection)
        }, "the engine thread's fold")
        // A commit written straight to the tables folds the journal unsynced; then it is synced.
        try appendEntry()
        let direct = try traced {
            try connection.transaction { db, statements in
                try JournalBacklog.write(try JournalBacklog.merge(backlog.snapshot()), through: seq, statements, db)
            }
        }
        XCTAssertFalse(direct.sql.contains("PRAGMA synchronous = FULL"), "a direct commit is not synced: \(direct.sql)")
        backlog.folded(through: seq, synced: false)
        XCTAssertEqual(backlog.unsyncedEntries, 1)
        assertSynced(try traced {
            backlog.writeLock.lockForFolder()
            defer { backlog.writeLock.unlock() }
            try backlog.syncFolded(on: connection)
        }, "the sync of unsynced folds")
        XCTAssertEqual(backlog.syncedThrough, seq)
    }

    /// The journal holds at most `journalLimit` rows: the commit that would pass it folds the
    /// journal first.
    func testTheJournalIsFoldedWhenItReachesItsLimit() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull, journalLimit: 10)
        var written: [Workflow] = []
        for i in 1...8 {
            written.append(try driveOneWorkflow(store, i))
            XCTAssertLessThanOrEqual(try unfoldedEntries(path), 10)
        }
        XCTAssertGreaterThan(try count(path, "runs"), 0, "folded along the way")
        try reopenAfterKill(store) { reopened, _ in
            for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        }
    }

    /// A row rewritten by every commit (a job's progress) stays one pending row: the journal
    /// still folds after `journalLimit` commits, so it never grows without end.
    func testARowRewrittenByEveryCommitStillFoldsAtTheLimit() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull, journalLimit: 10)
        var w = try driveOneWorkflow(store, 1)
        for i in 1...50 {
            try commit(store, &w) { $0.runs[0].progress = Double(i) / 100 }
            XCTAssertLessThanOrEqual(try entries(path), 11, "at most the limit, and the one appended")
        }
        try reopenAfterKill(store) { reopened, _ in
            XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.runs[0].progress, 0.5)
        }
    }

    /// The limit counts rows, not only entries: commits of several rows each (two nodes and a
    /// run) fold the journal once the next one would take it past `journalLimit` rows, long
    /// before it holds `journalLimit` entries (the replay after a kill stays bounded in rows).
    func testTheJournalHoldsAtMostItsLimitInRowsWhateverTheEntriesCount() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull, journalLimit: 10)
        var w = try driveOneWorkflow(store, 1)
        for i in 1...12 {
            try commit(store, &w) {
                $0.nodes[0].attempts = i
                $0.nodes[1].attempts = i
                $0.runs[0].progress = Double(i) / 100
            }
            XCTAssertLessThanOrEqual(try unfoldedRows(path), 10, "rows waiting after commit \(i)")
        }
        XCTAssertEqual(try count(path, "runs"), 1, "folded along the way")
        try reopenAfterKill(store) { reopened, _ in
            XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w)
        }
    }

    /// A commit the journal cannot hold (a template here) folds the journal first; when it
    /// fails, nothing of it is written and the journal still holds what it held.
    func testAFailedCommitLeavesTheJournalAsItWas() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        let (cs, w) = try templateThenOneWorkflow(store)
        let journal = try entries(path)
        XCTAssertThrowsError(try store.commit(cs), "the same template id again: refused by the table")
        XCTAssertEqual(try entries(path), journal)
        XCTAssertEqual(try count(path, "runs"), 0)
        XCTAssertEqual(try foldedThrough(path), 0)
        let killed = copyAsKilled(store)  // the journal as the failed commit left it
        defer { removeStore(killed) }
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        store.close()
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w)
        reopened.close()
    }

    /// A record cut short or failing its checksum is where a kill or a power loss stopped a
    /// write: it and whatever follows are not the journal (the call that wrote it never
    /// returned). The records before it are replayed.
    func testATornRecordEndsTheJournal() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        let file = JournalFile.path(forStore: killed)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [1, 2, 3])
        bytes[bytes.count - 3] ^= 0xFF  // inside the last record's payload
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [1, 2])
        let reopened = try SQLiteStore(path: killed)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.runs[0].status, .succeeded, "entries 1 and 2 are replayed")
        XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.nodes[1].state, .ready, "as the run left it; entry 3 is not")
        reopened.close()
    }

    /// A record written whole (its checksum holds) whose entry does not decode was not written by
    /// this library: the store is refused with `storeCorrupt`, and nothing of the journal is
    /// applied.
    func testADamagedJournalEntryRefusesToOpenAndKeepsIt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        let good = JournalCoding.encode([.meta(key: "counter.x", value: Array("1".utf8))])
        store.close()
        try writeJournal(path, [(1, good), (2, Array(good.prefix(5)))])
        XCTAssertThrowsError(try SQLiteStore(path: path)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeCorrupt")
        }
        XCTAssertEqual(try entries(path), 2, "kept for a later look")
        XCTAssertEqual(try foldedThrough(path), 0)
    }

    /// Entries whose images cancel out (an effect inserted, then deleted) leave nothing pending,
    /// and the replay still empties the journal.
    func testEntriesThatCancelOutAreEmptiedOnReplay() throws {
        let path = tempPath()
        defer { removeStore(path) }
        try SQLiteStore(path: path).close()
        let e = EffectRow(seq: 9, effectId: "e-9", type: "remote.submit", answerKey: "k", taken: false, data: Array("{}".utf8))
        try writeJournal(path, [(1, JournalCoding.encode([.effect(e)])),
                                (2, JournalCoding.encode([.effectTaken(seq: 9), .effectDelete(seq: 9)]))])
        let store = try SQLiteStore(path: path)
        XCTAssertEqual(try entries(path), 0)
        XCTAssertEqual(try count(path, "effects"), 0)
        XCTAssertEqual(try foldedThrough(path), 2)
        XCTAssertTrue(try store.loadSnapshot().effects.isEmpty)
        store.close()
    }

    /// A journaled commit's entry is written straight from its records: byte for byte the entry
    /// of the row images the same change set makes, for every kind of change the journal takes.
    func testAnEntryWrittenFromTheRecordsIsTheEntryOfTheirImages() throws {
        var rng = SplitMix64(seed: 3)
        for round in 0..<200 {
            var w = workflow(round)
            w.markClean()
            let old = w
            var next = w
            if Bool.random(using: &rng) { next.nodes[0].state = .runningRemote }
            if Bool.random(using: &rng) {
                next.nodes[1].blockedReason = BlockedReason(code: "inputChanged", message: "Input from 'a' has changed.",
                                                            details: ["port": "image"])
            }
            if Bool.random(using: &rng) { next.nodes[1].outputs = ["image": "as-\(round)", "mask": "as-m"] }
            for r in 0..<Int.random(in: 0...3, using: &rng) {
                var run = makeRun("run-\(round)-\(r)", node: r % 2 == 0 ? "a" : "b")
                run.jobId = Bool.random(using: &rng) ? "job-\(r)" : nil
                run.progress = Bool.random(using: &rng) ? 0.25 : nil
                run.logTail = Bool.random(using: &rng) ? ["line \"1\"", "é"] : []
                run.outputs = ["text": "as-\(r)"]
                next.runs.append(run)
            }
            if Bool.random(using: &rng) { next.title = "Renamed \(round)" }
            var cs = ChangeSet()
            cs.workflows = [WorkflowWrite(old, next, Bool.random(using: &rng) ? summary(next) : nil,
                                          changes: round % 3 == 0 ? next.changes(since: old) : nil)]
            if Bool.random(using: &rng) { cs.meta["counter.run"] = .int(Int64(round)) }
            if Bool.random(using: &rng) {
                var a = Asset(assetId: "as-\(round)", type: "ImageRef", uri: "file:///x\(round).png", createdAt: t0)
                a.bytes = Int64(round)
                a.meta = ["providerSchema": "v1", "w": 512]
                a.provenance = Provenance(workflowId: "wf-\(round)", nodeId: "a", runId: "run-1", port: "image")
                // Every field of the asset's row, when it was orphaned and its pin too.
                if round % 2 == 1 { a.orphanedAt = Timestamp(milliseconds: 2_000 + Int64(round)) }
                if round % 4 == 1 { a.pinned = true }
                cs.assets[a.assetId] = .some(a)
            }
            if Bool.random(using: &rng) { cs.effectsTaken = [Int64(round)] }
            if Bool.random(using: &rng) { cs.effectDeletes = [Int64(round + 1)] }
            let plan = try XCTUnwrap(JournalCoding.plan(cs), "round \(round)")
            let images = SQLiteStore.images(of: cs)
            XCTAssertEqual(plan.rows, images.count, "round \(round)")
            XCTAssertTrue(images.allSatisfy(\.isJournalable), "round \(round)")
            XCTAssertEqual(JournalCoding.encode(cs, plan, directCommits: Int64(round)),
                           JournalCoding.encode(images, directCommits: Int64(round)), "round \(round)")
        }
        // What the journal does not take: a new workflow, an await, a new effect, a deletion.
        var old = workflow(1)
        old.markClean()
        var awaiting = old
        awaiting.awaits.append(AwaitRequest(awaitId: "aw-1", workflowId: "wf-1", nodeId: "a", runId: "run-1",
                                            type: .drawMask, title: "Mask", detail: nil, urgency: .normal, blocking: true,
                                            createdAt: t0, expiresAt: nil, deepLink: "app://x", onTimeout: .cancel,
                                            onCancel: nil, skippable: false, notificationTitle: "t", notificationBody: "b"))
        var sets: [ChangeSet] = [ChangeSet(), ChangeSet(), ChangeSet(), ChangeSet()]
        sets[0].workflows = [WorkflowWrite(nil, workflow(1), summary(workflow(1)))]
        sets[1].workflows = [WorkflowWrite(old, awaiting, nil)]
        sets[2].effectInserts = [effect(1)]
        sets[3].assets["as-1"] = .some(nil)
        for cs in sets {
            XCTAssertNil(JournalCoding.plan(cs))
            XCTAssertFalse(cs.isOnlyRows && SQLiteStore.images(of: cs).allSatisfy(\.isJournalable))
        }
    }

    /// Commits written straight to the tables fold the journal without a sync; the journal
    /// still drops those entries once they are synced, so it stays small however the two kinds
    /// of commit alternate, and a close leaves it empty.
    func testTheJournalStaysSmallWhenDirectCommitsFoldIt() throws {
        for folding in JournalFolding.allCases {
            let path = tempPath()
            defer { removeStore(path) }
            let store = try SQLiteStore(path: path, folding: folding)
            var w = try driveOneWorkflow(store, 1)
            for i in 1...2_500 {
                try commit(store, &w) { $0.runs[0].progress = Double(i % 100) / 100 }
                var cs = ChangeSet()
                cs.metricInserts = [MetricEvent(seq: Int64(i), body: ["event": "x"])]
                try store.commit(cs)
            }
            XCTAssertLessThanOrEqual(try entries(path), Int(SQLiteStore.unsyncedEntriesLimit) + 1, "\(folding)")
            try reopenAfterKill(store) { reopened, _ in
                XCTAssertEqual(try reopened.loadWorkflow("wf-1")?.runs[0].progress, 0)
            }
            XCTAssertEqual(try entries(path), 0, "closed: nothing left in the journal (\(folding))")
        }
    }

    /// A journal that goes on from entries the tables never held (the store file replaced by an
    /// older copy) would leave a hole: the store is refused, and the message says what to do.
    func testAJournalThatDoesNotFollowOnFromTheTablesIsRefused() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        store.close()
        let older = tempPath()
        defer { removeStore(older) }
        try FileManager.default.copyItem(atPath: path, toPath: older)
        store = try SQLiteStore(path: path, folding: .whenFull)
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }
        try store.flush()
        try commit(store, &w) { $0.nodes[1].state = .succeeded }
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        try FileManager.default.removeItem(atPath: killed)
        try? FileManager.default.removeItem(atPath: killed + "-wal")
        try FileManager.default.copyItem(atPath: older, toPath: killed)  // the tables as of before entry 3
        XCTAssertThrowsError(try SQLiteStore(path: killed)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeCorrupt")
            XCTAssertTrue((error as? StoreError)?.message.contains("remove the journal") ?? false)
        }
    }

    /// Two engines opening one store at the same moment: one after the other, and the one that
    /// opened last owns both the tables and the journal (the other is refused for both kinds of
    /// commit, never for one only).
    func testTwoStoresOpenedAtOnceEndWithOneOwnerOfBoth() throws {
        for round in 0..<10 {
            let path = tempPath()
            defer { removeStore(path) }
            try SQLiteStore(path: path).close()
            let stores = atOnce(2) { try SQLiteStore(path: path, folding: .whenFull) }.compactMap { try? $0.get() }
            XCTAssertEqual(stores.count, 2, "round \(round)")
            var owners: [Int] = []
            for (i, store) in stores.enumerated() {
                var journaled = ChangeSet()
                journaled.meta["counter.x"] = .int(Int64(i))
                var direct = ChangeSet()
                direct.metricInserts = [MetricEvent(seq: Int64(i + 1), body: ["event": "x"])]
                let a = (try? store.commit(journaled)) != nil
                let b = (try? store.commit(direct)) != nil
                XCTAssertEqual(a, b, "round \(round): store \(i) owns one and not the other")
                if a { owners.append(i) }
            }
            XCTAssertEqual(owners.count, 1, "round \(round)")
            for store in stores { store.close() }
        }
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
        XCTAssertEqual(try JournalCoding.decode(JournalCoding.encode(images, directCommits: 7)),
                       JournalCoding.Entry(directCommits: 7, images: images))
        XCTAssertEqual(try JournalCoding.decode(JournalCoding.encode([])), JournalCoding.Entry(directCommits: 0, images: []))
        XCTAssertEqual(try JournalCoding.decode(legacyEntry(images)), JournalCoding.Entry(directCommits: 0, images: images),
                       "an earlier version's entry (no count) reads as after none")
    }

    /// Merging keeps the last image of each row, and writing the merged images once leaves the
    /// tables as writing every image in order would.
    func testPendingRowsKeepTheLastImageOfEachRow() throws {
        var p = PendingRows()
        func merge(_ images: RowImage...) throws { try p.merge(entry: JournalCoding.encode(images)) }
        let e1 = EffectRow(seq: 1, effectId: "e-1", type: "t", answerKey: "k", taken: false, data: [])
        try merge(.effect(e1))
        try merge(.effectTaken(seq: 1))
        var taken = e1
        taken.taken = true
        XCTAssertEqual(try p.image(of: .effect(1)), .effect(taken), "handed out before it reached the table")
        try merge(.effectDelete(seq: 1))
        XCTAssertNil(try p.image(of: .effect(1)), "inserted and deleted between folds: never written")
        try merge(.effectTaken(seq: 2), .effectDelete(seq: 2))
        XCTAssertEqual(try p.image(of: .effect(2)), .effectDelete(seq: 2), "a row of the table is deleted")

        let first = RunRow(runId: "r", workflowId: "wf", nodeId: "n", seq: 0, status: "running", jobId: "j", data: [1],
                           existed: true, columnsKept: true)
        var second = first
        second.data = [2]
        second.existed = true
        try merge(.run(first))
        try merge(.run(second))
        XCTAssertEqual(try p.image(of: .run("r")), .run(second), "same status and job: the columns still hold them")
        var third = second
        third.status = "succeeded"
        third.columnsKept = true  // relative to `second`, not to the table
        try merge(.run(third))
        guard case .run(let merged)? = try p.image(of: .run("r")) else { return XCTFail("the run is pending") }
        XCTAssertFalse(merged.columnsKept, "the table still says running")
        XCTAssertTrue(merged.existed)
        var back = third
        back.status = "running"
        back.columnsKept = false  // relative to `third`
        try merge(.run(back))
        guard case .run(let again)? = try p.image(of: .run("r")) else { return XCTFail("the run is pending") }
        XCTAssertTrue(again.columnsKept, "running again, as the table says: only its data is written")
        let node = NodeRow(workflowId: "wf", nodeId: "n", position: 0, state: "ready", data: [], existed: false)
        var later = node
        later.existed = true
        try merge(.node(node), .node(later))
        XCTAssertEqual(try p.image(of: .node("wf", "n")), .node(node), "new before the first image: still new")
        XCTAssertEqual(p.count, 3, "the effect deleted, the run, the node")
    }

    /// A row's key is its fields, not their bytes run together: node `c` of workflow `ab` is not
    /// node `bc` of workflow `a`, and a run and an asset of the same id are two rows.
    func testPendingRowsTellRowsApartByEachFieldOfTheirKey() throws {
        var p = PendingRows()
        try p.merge(entry: JournalCoding.encode([
            .node(NodeRow(workflowId: "ab", nodeId: "c", position: 0, state: "ready", data: [1], existed: true)),
            .node(NodeRow(workflowId: "a", nodeId: "bc", position: 0, state: "ready", data: [2], existed: true)),
            .run(RunRow(runId: "x", workflowId: "a", nodeId: "bc", seq: 0, status: "queued", jobId: nil, data: [3],
                        existed: false, columnsKept: false)),
            .asset(AssetRow(assetId: "x", type: "TextRef", createdAt: 0, pinned: false, orphanedAt: nil, data: [4])),
            .meta(key: "x", value: Array("1".utf8)),
        ]))
        XCTAssertEqual(p.count, 5)
        guard case .node(let n)? = try p.image(of: .node("ab", "c")) else { return XCTFail("node ab/c") }
        XCTAssertEqual(n.data, [1])
        guard case .node(let m)? = try p.image(of: .node("a", "bc")) else { return XCTFail("node a/bc") }
        XCTAssertEqual(m.data, [2])
    }

    /// Entries merged from their bytes and written once leave the tables as writing each of their
    /// images in order does, whatever the rows they rewrite and whatever the tables held (random
    /// images over a few rows of every kind, then over many, so that rows the table does not hold
    /// are inserted many at a time, some of them held after all; effects inserted only where none
    /// is, as the engine does).
    func testMergedEntriesWrittenOnceLeaveTheTablesAsEveryImageWrittenInOrder() throws {
        var rng = SplitMix64(seed: 11)
        var rows = 2
        func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
        func id(_ prefix: String) -> String { "\(prefix)-\(rng.next() % UInt64(rows))" }
        func bytes() -> [UInt8] { Array("{\"v\":\(rng.next() % 1000)}".utf8) }
        var present: Set<Int64> = []
        func image() -> RowImage {
            let existed = rng.next() % 2 == 0, kept = rng.next() % 2 == 0
            switch rng.next() % 8 {
            case 0: return .meta(key: id("m"), value: bytes())
            case 1: return .asset(AssetRow(assetId: id("as"), type: "TextRef", createdAt: 5, pinned: rng.next() % 2 == 0,
                                           orphanedAt: rng.next() % 2 == 0 ? nil : 7, data: bytes()))
            case 2:
                let w = id("wf")
                return .workflow(WorkflowRow(workflowId: w, seq: Int64(w.dropFirst(3))!, templateId: "tpl-1",
                                             title: pick(["t", "u"]), status: pick(["active", "done"]), archived: false,
                                             createdAt: 1, updatedAt: 2, stepsDone: Int64(rng.next() % 5), stepsTotal: 5,
                                             awaitCount: 0, hasBlockingAwait: false, searchText: "t", nextDeadline: nil,
                                             queuedRemote: 0, queuedLocal: 1, runningRemote: 0, runningLocal: 0,
                                             inboxCount: 0, data: bytes(), existed: existed))
            case 3, 4:
                // Workflow `wf-1` node `2a` and workflow `wf-12` node `a`: two rows.
                return .node(NodeRow(workflowId: pick(["wf-1", "wf-12"]), nodeId: pick(["a", "2a"]) + id(""), position: 0,
                                     state: pick(["ready", "blocked", "succeeded"]), data: bytes(), existed: existed))
            case 5, 6:
                return .run(RunRow(runId: id("run"), workflowId: "wf-1", nodeId: "a", seq: 0,
                                   status: pick(["queued", "running", "succeeded"]), jobId: pick([nil, "j-1"]), data: bytes(),
                                   existed: existed, columnsKept: kept))
            default:
                let seq = Int64(rng.next() % 3)
                if !present.contains(seq) {
                    present.insert(seq)
                    return .effect(EffectRow(seq: seq, effectId: "e-\(seq)", type: "notify", answerKey: nil, taken: false,
                                             data: bytes()))
                }
                if rng.next() % 2 == 0 { return .effectTaken(seq: seq) }
                present.remove(seq)
                return .effectDelete(seq: seq)
            }
        }
        func tables(_ q: DatabaseQueue) throws -> [String] {
            try q.read { db in
                try ["meta", "assets", "workflows", "nodes", "runs", "effects"].flatMap { table in
                    try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map { "\(table) \($0)" }
                }
            }
        }
        for round in 0..<60 {
            rows = round < 30 ? 2 : 60
            let inOrder = try DatabaseQueue(), merged = try DatabaseQueue()
            for q in [inOrder, merged] { try StoreSchema.migrator.migrate(q) }
            // What the tables held before: the same in both.
            let before = (0..<(rows * 2)).map { _ in image() }.filter { if case .effect = $0 { false } else { true } }
            for q in [inOrder, merged] {
                try q.write { db in
                    let statements = PreparedStatements()
                    for i in before { try TableWriter.write(i, statements, db) }
                }
            }
            present = []
            var p = PendingRows()
            for _ in 0..<(1 + rng.next() % 6) {
                let images = (0..<(1 + rng.next() % UInt64(rows * 4))).map { _ in image() }
                try p.merge(entry: JournalCoding.encode(images))
                try inOrder.write { db in
                    let statements = PreparedStatements()
                    for i in images { try TableWriter.write(i, statements, db) }
                }
            }
            try merged.write { db in try p.write(PreparedStatements(), db) }
            XCTAssertEqual(try tables(merged), try tables(inOrder), "round \(round)")
            present = []
        }
    }

    /// Rows rewritten by many commits between two folds (a node queued, started and finished, a
    /// run's progress) are written to their tables once, with their last image.
    func testRowsRewrittenByManyCommitsBetweenTwoFoldsAreWrittenOnce() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var w = try closedStoreWithOneWorkflow(path)
        let (connection, queue, folded) = try owningConnection(path)
        defer { connection.close() }
        let backlog = JournalBacklog()
        var seq = folded
        var old = w
        w.runs.append(makeRun("run-1", node: "a"))
        seq += 1
        backlog.append(try journalEntry(seq, from: old, to: w))
        for i in 1...30 {
            old = w
            w.nodes[0].params["i"] = .int(Int64(i))
            w.nodes[1].state = i % 2 == 0 ? .ready : .blocked
            w.runs[0].progress = Double(i) / 100
            seq += 1
            backlog.append(try journalEntry(seq, from: old, to: w))
        }
        XCTAssertEqual(backlog.counts.entries, 31)
        XCTAssertGreaterThanOrEqual(backlog.counts.rows, 93, "three rows or more each time")
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        queue.inDatabase { db in db.trace(options: .statement) { lines.all.append($0.description) } }
        backlog.writeLock.lockForEngine()
        try backlog.foldAll(on: connection)
        backlog.writeLock.unlock()
        queue.inDatabase { db in db.trace(options: []) }
        let writes = lines.all.filter { $0.hasPrefix("INSERT") || $0.hasPrefix("UPDATE") }
        XCTAssertEqual(writes.filter { $0.contains("INTO runs") || $0.hasPrefix("UPDATE runs") }.count, 1, "\(writes)")
        XCTAssertEqual(writes.filter { $0.contains("INTO nodes") || $0.hasPrefix("UPDATE nodes") }.count, 2, "\(writes)")
        XCTAssertEqual(writes.filter { $0.contains("workflows") }.count, 1, "\(writes)")
        connection.close()
        let reopened = try SQLiteStore(path: path)
        defer { reopened.close() }
        w.markClean()
        XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w)
    }

    /// The backlog's bounds each fold it on the engine's thread, whichever comes first: its
    /// entries (one row each, a job's progress) and its rows (commits of several rows), with the
    /// folder held (as a load it cannot follow leaves it) and without a folder; and its bytes
    /// (large rows).
    func testTheRowsBoundTheEntriesBoundAndTheBytesBoundEachFoldTheBacklog() throws {
        func commits(_ store: SQLiteStore, _ w: inout Workflow, _ n: Int, _ what: String,
                     _ change: (inout Workflow, Int) -> Void) throws -> [Int] {
            var folds: [Int] = []
            for i in 1...n {
                let before = store.foldsWhenFull
                try commit(store, &w) { change(&$0, i) }
                let c = store.backlogCounts
                XCTAssertLessThanOrEqual(c.entries, store.journalLimit, "\(what), commit \(i)")
                XCTAssertLessThanOrEqual(c.rows, store.journalRowLimit, "\(what), commit \(i)")
                XCTAssertLessThanOrEqual(c.bytes, store.journalByteLimit, "\(what), commit \(i)")
                if store.foldsWhenFull > before { folds.append(i) }
            }
            return folds
        }
        for folding in JournalFolding.allCases {
            let path = tempPath()
            defer { removeStore(path) }
            let store = try SQLiteStore(path: path, folding: folding, journalLimit: 10, journalRowLimit: 25)
            XCTAssertEqual(store.journalLimit, 10)
            XCTAssertEqual(store.journalRowLimit, 25)
            var w = try driveOneWorkflow(store, 1)
            try store.withFoldsHeld {
                try store.flush()
                // One row each: the entries bound.
                XCTAssertEqual(try commits(store, &w, 25, "\(folding), entries") { w, i in w.runs[0].progress = Double(i) / 100 },
                               [11, 21])
                try store.flush()
                // Three rows each: the rows bound (8 commits hold 24 rows), long before 10 entries.
                XCTAssertEqual(try commits(store, &w, 20, "\(folding), rows") { w, i in
                    w.nodes[0].attempts = i
                    w.nodes[1].attempts = i
                    w.runs[0].progress = Double(i) / 100
                }, [9, 17])
            }
            try reopenAfterKill(store) { reopened, _ in XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w) }
        }
        // One row of about 1,200 bytes each: the bytes bound, long before the others.
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull, journalLimit: 10, journalRowLimit: 25,
                                    journalByteLimit: 4_000)
        var w = try driveOneWorkflow(store, 1)
        try store.flush()
        XCTAssertEqual(try commits(store, &w, 10, "bytes") { w, i in
            w.nodes[0].params["text"] = .string(String(repeating: "x", count: 1_000 + i))
        }, [4, 7, 10])
        try reopenAfterKill(store) { reopened, _ in XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w) }
    }

    /// The folder starts at ``JournalFolder/foldRows`` rows, but only once the engine's thread
    /// has not needed the tables (a commit written to them, a read folding first) for that many
    /// rows: until then it starts at a few hundred, so that such a commit or read never finds many
    /// rows to fold on the engine's thread. Entries and the journal's file start it too.
    func testTheFolderWaitsForManyRowsOnlyWhileTheEngineThreadDoesNotNeedTheTables() throws {
        let path = tempPath()
        defer { removeStore(path) }
        _ = try closedStoreWithOneWorkflow(path)
        let (connection, _, _) = try owningConnection(path)
        defer { connection.close() }
        let backlog = JournalBacklog()
        let folder = JournalFolder(backlog: backlog, connection: connection, foldRows: 1_000, foldEntries: 50,
                                   foldBytes: 1 << 20, foldRowsAfterTablesNeeded: 100)
        var seq: Int64 = 0
        func append(rows: Int, fileBytes: Int = 0) {
            seq += 1
            backlog.append(JournalBacklog.Entry(seq: seq, body: [JournalCoding.version], rows: rows, workflowIds: []),
                           fileBytes: fileBytes)
        }
        append(rows: 90)
        XCTAssertFalse(folder.isDue)
        append(rows: 10)
        XCTAssertTrue(folder.isDue, "100 rows since the store opened: a small fold")
        backlog.folded(through: seq, synced: true)
        for _ in 0..<8 { append(rows: 100) }
        XCTAssertTrue(folder.isDue, "900 rows since the tables were needed: still small folds")
        backlog.folded(through: seq, synced: true)
        append(rows: 100)
        XCTAssertEqual(backlog.rowsSinceTablesNeeded, 1_000)
        append(rows: 100)
        XCTAssertFalse(folder.isDue, "1,000 rows without the tables: the folder waits for 1,000")
        for _ in 0..<7 { append(rows: 100) }
        XCTAssertFalse(folder.isDue)
        append(rows: 100)
        XCTAssertTrue(folder.isDue, "1,000 rows waiting")
        backlog.folded(through: seq, synced: true)
        append(rows: 150)
        backlog.noteTablesNeeded()
        XCTAssertTrue(folder.isDue, "the engine's thread needed the tables: small folds again")
        backlog.folded(through: seq, synced: true)
        for _ in 0..<49 { append(rows: 0) }
        XCTAssertFalse(folder.isDue)
        append(rows: 0)
        XCTAssertTrue(folder.isDue, "50 entries")
        backlog.folded(through: seq, synced: true)
        append(rows: 1, fileBytes: 1 << 20)
        XCTAssertTrue(folder.isDue, "the journal's file at its bound")
    }

    /// Under a steady load the folder keeps the backlog under its limits: the engine's thread
    /// never folds because it is full, the folder folds many commits at once, and every commit
    /// survives a kill.
    func testTheFolderKeepsTheBacklogUnderItsLimitsUnderASteadyLoad() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalRowLimit: 3_000)
        var workflows = try (1...10).map { try driveOneWorkflow(store, $0) }
        for i in 0..<1_000 {
            try commit(store, &workflows[i % 10]) {
                $0.nodes[0].attempts = i
                $0.nodes[1].attempts = i
                $0.runs[0].progress = Double(i) / 1_000
            }
            XCTAssertLessThanOrEqual(store.backlogCounts.rows, 3_000)
            Thread.sleep(forTimeInterval: 0.002)
        }
        XCTAssertEqual(store.foldsWhenFull, 0, "the folder kept up")
        XCTAssertGreaterThan(store.backlogFolds, 1, "the folder folded along the way")
        XCTAssertLessThan(store.backlogFolds, 100, "many commits to a fold, not one each")
        try reopenAfterKill(store) { reopened, _ in
            for w in workflows { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        }
    }

    /// A commit that finds the backlog full while the folder is folding waits for that fold to
    /// end, which makes room, instead of folding the rest on the engine's thread (which did the
    /// folder's work there: in `wf-bench throughput` on a machine whose folder fell behind, a
    /// fifth of the engine thread's time). Here the folder's fold is kept under way by holding the
    /// store's writes; the commit that fills the backlog returns only once they are let go and
    /// that fold is done, having folded nothing itself, and every commit survives a kill.
    func testACommitThatFindsTheBacklogFullWaitsForTheFoldersFoldInsteadOfFolding() throws {
        let path = tempPath()
        defer { removeStore(path) }
        // The folder starts at 10 rows (half the rows limit); one row per commit below.
        let store = try SQLiteStore(path: path, journalLimit: 1_000, journalRowLimit: 20)
        var w = try driveOneWorkflow(store, 1)
        try store.flush()  // nothing waits: the folder's fold below is of these commits alone
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let shared = Box(store)  // its writes held on another thread; a third reads a count
        Thread {
            shared.value.withWritesHeld {
                holding.signal()
                release.wait()
            }
        }.start()
        holding.wait()
        var i = 0
        func commitOne() throws {
            i += 1
            try commit(store, &w) { $0.nodes[0].attempts = i }
        }
        for _ in 0..<10 { try commitOne() }
        eventually("the folder took the rows waiting and waits for the writes") { store.folderFoldUnderWay }
        for _ in 0..<10 { try commitOne() }
        XCTAssertEqual(store.backlogCounts.rows, 20, "the backlog is full")
        XCTAssertEqual(store.waitsWhenFull, 0)
        // The writes are let go once the next commit waits for the folder's fold, and a while after.
        final class LetGo: @unchecked Sendable {
            let lock = NSLock()
            var done = false
        }
        let letGo = LetGo()
        Thread {
            let deadline = Date(timeIntervalSinceNow: 10)
            while shared.value.folderFoldWaiters == 0, Date() < deadline { usleep(1_000) }
            usleep(100_000)
            letGo.lock.withLock { letGo.done = true }
            release.signal()
        }.start()
        try commitOne()
        XCTAssertTrue(letGo.lock.withLock { letGo.done }, "the commit returned only once the folder's fold could end")
        XCTAssertEqual(store.waitsWhenFull, 1)
        XCTAssertEqual(store.foldsWhenFull, 0, "the engine's thread folded nothing")
        XCTAssertLessThanOrEqual(store.backlogCounts.rows, 20, "the rows the folder's fold took left the backlog")
        try reopenAfterKill(store) { reopened, _ in XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w) }
    }

    /// Commits as fast as they come against a backlog the folder can seldom keep under its limits
    /// (30 rows: it starts at 15, and every fold is a synced transaction): commits find it full
    /// again and again (here, 6 to 49 times in 2,000 commits), each waiting for the folder's fold
    /// or folding, and whatever the mix, the bounds hold after every commit, nothing deadlocks,
    /// and every commit survives a kill.
    func testCommitsFasterThanTheFolderKeepTheBoundsAndSurviveAKill() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalLimit: 1_000, journalRowLimit: 30)
        var workflows = try (1...5).map { try driveOneWorkflow(store, $0) }
        for i in 0..<2_000 {
            try commit(store, &workflows[i % 5]) {
                $0.nodes[0].attempts = i
                if i % 3 == 0 { $0.nodes[1].attempts = i }
            }
            XCTAssertLessThanOrEqual(store.backlogCounts.rows, 30, "commit \(i)")
        }
        XCTAssertGreaterThan(store.backlogFolds, 10)
        try reopenAfterKill(store) { reopened, _ in
            for w in workflows { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w) }
        }
    }

    /// The journal's file, emptied only by an append that finds every entry it holds folded, is
    /// emptied once past its bound (half the bytes limit) however the load leaves the folder: with
    /// the folder held (it folds nothing), the engine's thread folds what little waits before the
    /// next append; with the folder free, under a load that seldom leaves it nothing to fold, it
    /// folds at once until it has caught up, and the file stays near its bound.
    func testTheJournalsFileIsEmptiedOncePastItsBound() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, journalLimit: 100_000, journalRowLimit: 100_000, journalByteLimit: 200_000)
        var w = try driveOneWorkflow(store, 1)
        func size() throws -> Int {
            let attributes = try FileManager.default.attributesOfItem(atPath: JournalFile.path(forStore: path))
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        }
        func commits(_ n: Int) throws -> Int {
            var largest = 0
            for i in 0..<n {
                try commit(store, &w) { $0.nodes[0].params["text"] = .string(String(repeating: "y", count: 200 + i % 7)) }
                largest = max(largest, try size())
            }
            return largest
        }
        let largestHeld = try store.withFoldsHeld { try commits(1_000) }
        XCTAssertGreaterThan(store.catchUpFolds, 0)
        XCTAssertEqual(store.foldsWhenFull, 0)
        XCTAssertLessThan(largestHeld, 101_000, "emptied past 100,000 bytes (1,000 entries of some 400 bytes appended)")
        XCTAssertLessThan(try commits(3_000), 400_000)
        XCTAssertEqual(store.foldsWhenFull, 0)
        try reopenAfterKill(store) { reopened, _ in XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w) }
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

    /// An open's claim of the store is not synced, and never turns syncing off: a checkpoint its
    /// commit starts runs at the commit's level, and at `OFF` it syncs neither the log before it
    /// nor the file after it, so the log could be restarted over frames the file never got on
    /// disk and a power loss would take commits that were on disk. Traced on both durabilities,
    /// with a log that checkpoints at every commit.
    func testTheOwnershipClaimIsNotSyncedButNeverTurnsSyncingOff() throws {
        for durability in [Durability.normal, .full] {
            let path = tempPath()
            defer { removeStore(path) }
            XCTAssertNil(try SQLiteStore(path: path, durability: durability).close())  // the schema
            let queue = try StoreConnection.open(path: path, durability: durability, autocheckpointPages: 1)
            let connection = StoreConnection(queue: queue, path: path, ownerToken: "test", durability: durability)
            defer { connection.close() }
            final class Lines: @unchecked Sendable { var all: [String] = [] }
            let lines = Lines()
            queue.inDatabase { db in db.trace(options: .statement) { lines.all.append($0.description) } }
            try connection.claimOwnership()
            queue.inDatabase { db in db.trace(options: []) }
            let sql = lines.all
            let commit = sql.firstIndex { $0.hasPrefix("COMMIT") }
            XCTAssertNotNil(commit, "\(durability): the claim committed: \(sql)")
            XCTAssertFalse(sql.contains("PRAGMA synchronous = OFF"), "\(durability): \(sql)")
            if durability == .full, let commit {
                XCTAssertEqual(sql.firstIndex(of: "PRAGMA synchronous = NORMAL").map { $0 < commit }, true,
                               "not synced on \"full\" either: \(sql)")
                XCTAssertEqual(sql.lastIndex(of: "PRAGMA synchronous = FULL").map { $0 > commit }, true,
                               "back to FULL after it: \(sql)")
            }
            let level = try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
            XCTAssertEqual(level, durability == .full ? 2 : 1, "\(durability): the connection's level after the claim")
        }
    }

    func testNormalDurabilityIsTheDefault() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.synchronousLevel(), 1)
    }

    /// GRDB's `read` brackets a read with `PRAGMA query_only`, after which SQLite expires every
    /// statement prepared on the connection: each read made every later commit and fold compile
    /// its statements again (and an engine's open of 100 workflows, which loads workflow after
    /// workflow, took 2.4 times as long).
    func testReadsLeaveTheStatementsPreparedOnTheConnectionAsTheyAre() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        var w = try driveOneWorkflow(store, 1)
        try store.flush()  // folded: the write path's statements are prepared
        // Those prepared before the schema was brought up to date at open were compiled again once.
        let atFirst = try store.statementRecompilations()
        for i in 0..<3 {
            XCTAssertEqual(try store.loadWorkflow("wf-1")?.runs.map(\.runId), ["run-1"])
            XCTAssertEqual(try store.loadSnapshot().workflows.map(\.workflowId), ["wf-1"])
            XCTAssertEqual(try store.workflowId(forRun: "run-1"), "wf-1")
            XCTAssertNil(try store.loadAsset("missing"))
            try commit(store, &w) { $0.nodes[1].params["n"] = .int(Int64(i)) }
            try store.flush()
        }
        XCTAssertEqual(try store.loadWorkflow("wf-1")?.nodes[1].params["n"], .int(2))
        XCTAssertEqual(try store.statementRecompilations(), atFirst, "a read expired the connection's statements")
    }
}

// Added after mutation testing of the journal (docs/ARCHITECTURE.md, "The store's journal";
// DESIGN §5): each test below fails on a change to the store that every earlier test let through.

/// The records of a journal file: (offset, length including the 24-byte head, entry number).
private func records(_ bytes: [UInt8]) -> [(at: Int, size: Int, seq: Int64)] {
    var out: [(Int, Int, Int64)] = []
    var at = JournalFile.headerSize
    while bytes.count - at >= JournalFile.recordHead {
        let length = Int(bytes.loadLE(UInt32.self, at))
        let seq = Int64(bitPattern: bytes.loadLE(UInt64.self, at + 8))
        out.append((at, JournalFile.recordHead + length, seq))
        at += JournalFile.recordHead + length
    }
    return out
}

final class JournalRecoveryTests: XCTestCase {
    /// ARCHITECTURE: "Entry numbers follow each other by one; reading stops at the first record
    /// that … breaks the sequence". A journal whose entry 2 is missing (valid records 1 and 3)
    /// is read up to entry 1 only: replaying 3 without 2 would leave a hole in the store.
    /// (JournalFile.records must not accept any increasing entry number.)
    func testAGapInTheEntryNumbersEndsTheJournal() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = try driveOneWorkflow(store, 1)
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }  // entry 3
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        let file = JournalFile.path(forStore: killed)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let recs = records(bytes)
        XCTAssertEqual(recs.map(\.seq), [1, 2, 3])
        bytes.removeSubrange(recs[1].at..<recs[1].at + recs[1].size)  // entry 2 gone, 1 and 3 whole
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [1], "reading stops where the numbers do not follow on")
        let reopened = try SQLiteStore(path: killed)
        defer { reopened.close() }
        let back = try XCTUnwrap(try reopened.loadWorkflow("wf-1"))
        XCTAssertEqual(back.runs.first?.status, .running, "entry 1 is replayed")
        XCTAssertEqual(back.nodes[1].state, .blocked, "entry 3 is not replayed without entry 2")
    }

    /// The checksum covers every byte of the payload, the last partial word too: a record whose
    /// last byte was lost (zeroed by a power loss) is not read. (JournalFile.checksum must not
    /// leave out the tail of the payload.)
    func testTheChecksumCoversTheLastBytesOfThePayload() throws {
        for count in 1...23 {
            var body = [UInt8](repeating: 0x41, count: count)
            let sum = JournalFile.checksum(seq: 1, body)
            body[count - 1] = 0
            XCTAssertNotEqual(JournalFile.checksum(seq: 1, body), sum, "a payload of \(count) bytes")
        }
        let path = tempPath()
        defer { removeStore(path) }
        try SQLiteStore(path: path).close()
        // 1 + 1 + (1 + 1 + 9) + (1 + 1) = 15 bytes: the last word is partial.
        let entry = JournalCoding.encode([.meta(key: "counter.x", value: Array("1".utf8))])
        XCTAssertNotEqual(entry.count % 8, 0)
        try writeJournal(path, [(1, entry)])
        let file = JournalFile.path(forStore: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[bytes.count - 1] ^= 0x01  // the last byte of the payload
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: path), [], "the damaged record is not the journal")
    }

    /// An entry of a version this library does not write is refused, not guessed at (Journal.swift:
    /// "an entry of another version is refused"): decoding throws `storeCorrupt`, and a store whose
    /// journal holds one does not open and keeps it (JournalCoding.decode's version check).
    func testAnEntryOfAnUnknownVersionIsRefused() throws {
        var entry = JournalCoding.encode([.meta(key: "counter.x", value: Array("1".utf8))])
        entry[0] = JournalCoding.version + 1
        XCTAssertThrowsError(try JournalCoding.decode(entry)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeCorrupt")
        }
        let path = tempPath()
        defer { removeStore(path) }
        try SQLiteStore(path: path).close()
        try writeJournal(path, [(1, entry)])
        XCTAssertThrowsError(try SQLiteStore(path: path)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeCorrupt")
        }
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: path), [1], "kept for a later look")
    }

    /// A journal left beside a store that was deleted and made again is never replayed into the
    /// new one, even when its entries were appended before any direct commit (so the count of
    /// direct commits does not tell them apart). (JournalFile.recover must compare the store's
    /// id, not only the magic.)
    func testAJournalOfAnotherStoreIsNotReplayedEvenWithNoDirectCommitBeforeIt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var cs = ChangeSet()
        cs.meta["counter.x"] = .int(41)  // a journaled commit, appended after 0 direct commits
        try store.commit(cs)
        let killed = copyAsKilled(store)
        defer { removeStore(killed) }
        store.close()
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [1])
        for file in SQLiteStore.files(ofStore: killed).prefix(3) { try? FileManager.default.removeItem(atPath: file) }
        let fresh = try SQLiteStore(path: killed)
        defer { fresh.close() }
        XCTAssertNil(try fresh.loadSnapshot().meta["counter.x"], "another store's entry is not replayed")
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: killed), [])
    }

    /// A commit written straight to the tables folds the journal in a transaction that is not
    /// synced (durability normal): the journal must keep those entries until a synced fold, so
    /// the next journaled commit does not empty it. Otherwise a power loss taking that fold
    /// leaves the store with neither the entries nor their rows (ARCHITECTURE: "A fold is synced
    /// ... only then may the journal delete the entries it holds"). (JournalBacklog.folded must
    /// not count every fold as synced.)
    func testAnUnsyncedFoldKeepsItsEntriesInTheJournal() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        defer { store.close() }
        var w = try driveOneWorkflow(store, 1)  // entries 1, 2
        try commit(store, &w, effects: [effect(1)]) { $0.nodes[1].state = .ready }  // direct: folds 1, 2 unsynced
        try commit(store, &w) { $0.nodes[1].state = .runningRemote }  // entry 3
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: path), [1, 2, 3], "1 and 2 are folded, not synced")
        try store.flush()  // a synced fold of 3: 1…3 are now in the tables and on disk
        try commit(store, &w) { $0.nodes[1].state = .succeeded }  // entry 4 empties the journal first
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: path), [4])
    }
}

/// TableWriter: deleting a workflow deletes every row of it (DESIGN §5: nothing half-written).
final class WorkflowDeletionRowsTests: XCTestCase {
    /// A deleted workflow leaves no await behind: its open await must not come back as open at
    /// the next open (loadSnapshot's openAwaits), nor linger in the table (TableWriter's deletion
    /// covers the `awaits` table).
    func testDeletingAWorkflowDeletesItsAwaits() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        var w = workflow(1)
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(nil, w, summary(w))]
        try store.commit(cs)
        w.markClean()
        let old = w
        w.runs.append(makeRun("run-1", node: "a"))
        w.awaits.append(AwaitRequest(awaitId: "aw-1", workflowId: "wf-1", nodeId: "a", runId: "run-1",
                                     type: .drawMask, title: "Mask", detail: nil, urgency: .normal, blocking: true,
                                     createdAt: t0, expiresAt: nil, deepLink: "app://x", onTimeout: .cancel,
                                     onCancel: nil, skippable: false, notificationTitle: "t", notificationBody: "b"))
        cs = ChangeSet()
        cs.workflows = [WorkflowWrite(old, w, summary(w))]
        try store.commit(cs)
        w.markClean()
        XCTAssertEqual(try store.loadSnapshot().openAwaits.map(\.awaitId), ["aw-1"])
        cs = ChangeSet()
        cs.workflows = [WorkflowWrite(w, nil, nil)]
        try store.commit(cs)
        store.close()
        let reopened = try SQLiteStore(path: path)
        defer { reopened.close() }
        let snapshot = try reopened.loadSnapshot()
        XCTAssertTrue(snapshot.workflows.isEmpty)
        XCTAssertTrue(snapshot.activeRuns.isEmpty)
        XCTAssertTrue(snapshot.openAwaits.isEmpty, "the deleted workflow's await is gone")
        let q = try DatabaseQueue(path: path)
        defer { try? q.close() }
        for table in ["workflows", "nodes", "runs", "awaits"] {
            XCTAssertEqual(try q.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") }, 0, table)
        }
    }
}

private final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// The folder and the engine's thread folding the same entries (JournalBacklog.foldInBackground).
final class FolderRaceTests: XCTestCase {
    /// The folder merges the entries waiting before it takes the write lock. When the engine's
    /// thread folds them first, in a commit written straight to the tables that also changes one
    /// of their rows, the folder must fold nothing: writing its merged images then would put the
    /// row back as the journal had it, and the committed change would be lost from the tables.
    /// Deterministic: the test holds the store's writes while the folder merges, and a commit is
    /// already waiting for the lock (the engine's thread goes first) when it lets go.
    /// (foldInBackground's `firstSeq == first` check.)
    func testTheFolderDoesNotRewriteEntriesTheEnginesThreadFoldedMeanwhile() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path)  // background folding: the folder folds once idle 0.1 s
        XCTAssertEqual(store.folding, .background)
        let w = Box(try driveOneWorkflow(store, 1))  // entries 1, 2: node b ready
        let done = DispatchSemaphore(value: 0)
        let failure = Box<Error?>(nil)
        let shared = Box(store)
        store.withWritesHeld {
            // Meanwhile the folder wakes (idle), merges entries 1 and 2, and waits for the lock.
            let engine = Thread {
                do {
                    try commit(shared.value, &w.value, effects: [effect(1)]) { $0.nodes[1].state = .failed }  // direct
                } catch {
                    failure.value = error
                }
                done.signal()
            }
            Thread.sleep(forTimeInterval: 0.4)
            engine.start()  // waits for the lock: it gets it before the folder
            Thread.sleep(forTimeInterval: 0.3)
        }
        done.wait()
        XCTAssertNil(failure.value)
        Thread.sleep(forTimeInterval: 0.5)  // whatever the folder does next, it has done it
        XCTAssertEqual(try store.loadWorkflow("wf-1")?.nodes[1].state, .failed)
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w.value)
        store.close()
        let reopened = try SQLiteStore(path: path)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w.value)
    }
}

/// Runs `body` on a disk that refuses every new byte (``withFileSizeLimit(_:_:)`` at 0): for the
/// final writes of a close.
private func withFilesGrowingRefused<T>(_ body: () throws -> T) rethrows -> T {
    try withFileSizeLimit(0, body)
}

/// wf_engine_close: a close puts every commit on disk, and says so when the disk refuses.
final class CloseTests: XCTestCase {
    func testACloseWithEveryWriteAcceptedReportsNothingAndSoDoesASecondClose() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        _ = try driveOneWorkflow(store, 1)
        XCTAssertNil(store.close())
        XCTAssertNil(store.close())
        XCTAssertEqual(try count(path, "runs"), 1, "the close folded the journal")
    }

    /// The journal's entries cannot be folded: the close says so, and the next open replays them.
    func testACloseWhoseFoldTheDiskRefusesReportsStoreWriteFailedAndTheNextOpenReplaysTheJournal() throws {
        for durability in Durability.allCases {
            let path = tempPath()
            defer { removeStore(path) }
            let store = try SQLiteStore(path: path, durability: durability, folding: .whenFull)
            let w = try driveOneWorkflow(store, 1)
            XCTAssertGreaterThan(try unfoldedEntries(path), 0)
            let failure = withFilesGrowingRefused { store.close() }
            XCTAssertEqual(failure?.code, "storeWriteFailed", "\(durability)")
            XCTAssertNil(store.close(), "closed all the same")
            let reopened = try SQLiteStore(path: path, durability: durability)
            XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w, "\(durability)")
            XCTAssertNil(reopened.close())
        }
    }

    /// On "normal" a commit the journal does not take (effects inserted) is written to the tables
    /// without a sync: the close's checkpoint puts it on disk, and reports when it cannot.
    func testACloseWhoseCheckpointTheDiskRefusesReportsStoreWriteFailed() throws {
        let path = tempPath()
        defer { removeStore(path) }
        var w = try closedStoreWithOneWorkflow(path)
        let reopened = try SQLiteStore(path: path, folding: .whenFull)
        try commit(reopened, &w, effects: [effect(1)]) { $0.nodes[0].state = .runningRemote }
        XCTAssertEqual(try unfoldedEntries(path), 0, "written straight to the tables")
        let failure = withFilesGrowingRefused { reopened.close() }
        XCTAssertEqual(failure?.code, "storeWriteFailed")
        XCTAssertTrue(failure?.message.contains("wal_checkpoint") ?? false, failure?.message ?? "")
        let again = try SQLiteStore(path: path)
        XCTAssertEqual(try again.loadWorkflow("wf-1"), w)
        XCTAssertNil(again.close())
    }

    /// A fold the tables refuse because they are no longer the engine's (a table renamed behind
    /// its back) makes the close report `storeCorrupt`, as a read finding it does.
    func testACloseWhoseFoldFindsATableRenamedBehindItsBackReportsStoreCorrupt() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let store = try SQLiteStore(path: path, folding: .whenFull)
        _ = try driveOneWorkflow(store, 1)
        XCTAssertGreaterThan(try unfoldedEntries(path), 0)
        let other = try DatabaseQueue(path: path)
        try other.write { try $0.execute(sql: "ALTER TABLE nodes RENAME TO nodes_renamed") }
        try other.close()
        let failure = store.close()
        XCTAssertEqual(failure?.code, "storeCorrupt", failure?.message ?? "no failure")
    }

    /// Another engine opened the store since: it replayed this one's journal and owns the file,
    /// so this one's close writes nothing, and has nothing to report.
    func testAStoreAnotherEngineOpenedSinceClosesWithNothingToReport() throws {
        let path = tempPath()
        defer { removeStore(path) }
        let first = try SQLiteStore(path: path, folding: .whenFull)
        let w = try driveOneWorkflow(first, 1)
        let second = try SQLiteStore(path: path, folding: .whenFull)
        XCTAssertNil(first.close())
        XCTAssertEqual(try second.loadWorkflow("wf-1"), w)
        XCTAssertNil(second.close())
    }
}
