import Foundation
import GRDB
import WorkflowCore
@testable import WorkflowStore
import XCTest

private func tempPath() -> String { NSTemporaryDirectory() + "wf-store-\(UUID().uuidString).sqlite" }

private func summary(_ w: Workflow) -> WorkflowSummary {
    WorkflowSummary(workflowId: w.workflowId, seq: w.seq, templateId: w.templateId, title: w.title, status: w.status,
                    archived: w.archived, createdAt: w.createdAt, updatedAt: w.updatedAt, stepsDone: 0,
                    stepsTotal: w.nodes.count, awaitCount: 0, hasBlockingAwait: false, searchText: w.title.lowercased(),
                    nextDeadline: nil, queuedRemote: 0, queuedLocal: 0, runningRemote: 0, runningLocal: 0, inboxCount: 0)
}

/// Step 3: create → persist → fetch → equal, for seeded random workflows with runs and awaits.
final class PersistenceRoundTripTests: XCTestCase {
    func testRandomWorkflowsRoundTripThroughTheStore() throws {
        let path = tempPath()
        defer { for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) } }
        let store = try SQLiteStore(path: path)
        var rng = SplitMix64(seed: 11)
        var written: [Workflow] = []
        for i in 0..<40 {
            let w = randomWorkflow(i, &rng)
            var cs = ChangeSet()
            cs.workflows = [WorkflowWrite(nil, w, summary(w))]
            try store.commit(cs)
            written.append(w)
        }
        // A change writes only what changed, and the result reads back equal.
        var changed = written[3]
        changed.nodes[0].state = .failed
        changed.runs.append(Run(runId: "extra", nodeId: changed.nodes[0].nodeId, number: 9, mode: .remote, kind: "K",
                                trigger: .retry, status: .submitted, params: ["a": 1], inputs: [:], idempotencyKey: "k",
                                createdAt: Timestamp(milliseconds: 5)))
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(written[3], changed, summary(changed))]
        try store.commit(cs)
        written[3] = changed
        store.close()
        let reopened = try SQLiteStore(path: path)
        for w in written { XCTAssertEqual(try reopened.loadWorkflow(w.workflowId), w, w.workflowId) }
        XCTAssertEqual(try reopened.loadSnapshot().workflows.count, 40)
        XCTAssertEqual(try reopened.run(forJob: "job-3-0")?.workflowId, "wf-3")
    }

    /// Rows the committed workflow already held are updated in place; the columns still end up
    /// exactly as the upsert wrote them, a legacy status name included.
    func testUpdatesInPlaceWriteTheSameColumnsAsTheUpsert() throws {
        let path = tempPath()
        defer { for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) } }
        var store = try SQLiteStore(path: path)
        let now = Timestamp(milliseconds: 1_000)
        var w = Workflow(workflowId: "wf-1", seq: 1, templateId: "tpl-1", title: "t", createdAt: now,
                         nodes: [NodeInstance(nodeId: "a", state: .ready, params: [:], updatedAt: now)])
        var run = Run(runId: "run-1", nodeId: "a", number: 1, mode: .remote, kind: "K", trigger: .run, status: .running,
                      params: [:], inputs: [:], idempotencyKey: "run-1", createdAt: now)
        run.jobId = "job-1"
        w.runs.append(run)
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(nil, w, summary(w))]
        try store.commit(cs)
        try store.flush()  // into the tables, for the other connection below
        w.markClean()
        // A store an older library wrote (the store is closed: one writer at a time).
        store.close()
        let db = try DatabaseQueue(path: path)
        try db.write { try $0.execute(sql: "UPDATE runs SET status = 'waiting' WHERE runId = 'run-1'") }  // legacy name
        store = try SQLiteStore(path: path)
        // A progress report: status and job id unchanged.
        var old = try XCTUnwrap(store.loadWorkflow("wf-1"))
        XCTAssertEqual(old.runs[0].status, .running, "data, not the column, is what loads")
        old = w
        w.runs[0].progress = 0.25
        cs = ChangeSet()
        cs.workflows = [WorkflowWrite(old, w, nil)]
        try store.commit(cs)
        try store.flush()
        w.markClean()
        var row = try XCTUnwrap(db.read { try Row.fetchOne($0, sql: "SELECT status, jobId FROM runs WHERE runId = 'run-1'") })
        XCTAssertEqual(row["status"] as String, "running", "the legacy name is rewritten, as the upsert did")
        XCTAssertEqual(row["jobId"] as String?, "job-1")
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        // A status change, and a node change.
        old = w
        w.runs[0].status = .succeeded
        w.nodes[0].state = .succeeded
        cs = ChangeSet()
        cs.workflows = [WorkflowWrite(old, w, summary(w))]
        try store.commit(cs)
        try store.flush()
        row = try XCTUnwrap(db.read { try Row.fetchOne($0, sql: "SELECT status FROM runs WHERE runId = 'run-1'") })
        XCTAssertEqual(row["status"] as String, "succeeded")
        let state = try db.read { try String.fetchOne($0, sql: "SELECT state FROM nodes WHERE nodeId = 'a'") }
        XCTAssertEqual(state, "succeeded")
        XCTAssertEqual(try store.loadWorkflow("wf-1"), w)
        XCTAssertEqual(try store.loadSnapshot().activeRuns.count, 0)
    }

    func testAFailingCommitWritesNothing() throws {
        let store = try SQLiteStore(path: ":memory:")
        let t = StoredTemplate(templateId: "tpl-1", seq: 1, name: "t", createdAt: Timestamp(milliseconds: 0), canonicalText: "{}",
                               sourceSchema: "app.workflow/v2")
        var first = ChangeSet()
        first.templates = [t]
        try store.commit(first)
        var bad = ChangeSet()
        bad.meta["counter.wf"] = .int(7)
        bad.templates = [t]  // a duplicate key: the whole transaction fails
        XCTAssertThrowsError(try store.commit(bad))
        let snapshot = try store.loadSnapshot()
        XCTAssertNil(snapshot.meta["counter.wf"], "nothing half-written")
        XCTAssertEqual(snapshot.templates.count, 1)
    }

    /// A row's texts are bound in place from the store's reusable arena of 64 KB chunks
    /// (`BindArena`). Texts larger than a chunk, a row whose texts overflow the chunk they began
    /// in, and a later row needing more than the larger chunk an earlier row left, all bind whole:
    /// node and run records of 70 KB to 200 KB read back equal, written straight to the tables
    /// (in memory) and folded from the journal into them (on file, reopened). An empty title is
    /// bound as an empty text, not NULL.
    func testRowsLargerThanTheStoresBindChunkRoundTripWhole() throws {
        func text(_ bytes: Int, _ seed: Int) -> String {
            // Letters cycling from a different start in each text: one text written over another,
            // or cut short, reads back different.
            String((0..<bytes).map { Character(Unicode.Scalar(UInt8(97 + ($0 * 7 + seed) % 26))) })
        }
        let now = Timestamp(milliseconds: 1_000)
        var w = Workflow(workflowId: "wf-1", seq: 1, templateId: "tpl-1", title: "", createdAt: now, nodes: [])
        for (i, size) in [70_000, 200_000, 100_000].enumerated() {
            w.nodes.append(NodeInstance(nodeId: "n\(i)", state: .ready, params: ["text": .string(text(size, i))], updatedAt: now))
            w.runs.append(Run(runId: "run-\(i)", nodeId: "n\(i)", number: 1, mode: .local, kind: "Text", trigger: .run,
                              status: .succeeded, params: ["text": .string(text(size + 1_000, i + 10))], inputs: [:],
                              idempotencyKey: "run-\(i)", createdAt: now))
        }
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(nil, w, summary(w))]

        let memory = try SQLiteStore(path: ":memory:")
        try memory.commit(cs)
        XCTAssertEqual(try memory.loadWorkflow("wf-1"), w, "in memory: straight to the tables")

        let path = tempPath()
        defer { for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) } }
        let store = try SQLiteStore(path: path)
        try store.commit(cs)
        store.close()  // folds the journal into the tables
        let reopened = try SQLiteStore(path: path)
        XCTAssertEqual(try reopened.loadWorkflow("wf-1"), w, "on file: folded into the tables")
        let title = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT title FROM workflows WHERE workflowId = 'wf-1'") }
        XCTAssertEqual(title, "", "an empty text, not NULL")
    }

    /// 003 step 5, `AwaitUniquenessTests`: one await per (workflow, node, run), in the store too.
    func testTheUniqueAwaitKeyIsEnforcedByTheStoreToo() throws {
        let store = try SQLiteStore(path: ":memory:")
        var rng = SplitMix64(seed: 4)
        var w = randomWorkflow(1, &rng)
        w.awaits = [makeAwait("a1", w), makeAwait("a2", w)]  // same (workflow, node, run)
        var cs = ChangeSet()
        cs.workflows = [WorkflowWrite(nil, w, summary(w))]
        XCTAssertThrowsError(try store.commit(cs))
    }

    /// Deleting an asset re-gates every workflow that refers to it: a run's frozen inputs or its
    /// outputs, a node's bindings, outputs or selected inputs. Each place is found, from the
    /// committed rows; a workflow naming the asset nowhere is not.
    func testWorkflowsReferringToAnAssetAreFoundWhereverTheyNameIt() throws {
        let store = try SQLiteStore(path: ":memory:")
        var seq: Int64 = 0
        func workflow(_ id: String, _ edit: (inout Workflow) -> Void) -> Workflow {
            seq += 1
            var w = Workflow(workflowId: id, seq: seq, templateId: "tpl-1", title: id,
                             createdAt: Timestamp(milliseconds: 1), nodes: [NodeInstance(nodeId: "n1", updatedAt: Timestamp(milliseconds: 1))])
            edit(&w)
            return w
        }
        func run(_ inputs: [String: String]) -> Run {
            Run(runId: "r-\(inputs.values.sorted().joined())", nodeId: "n1", number: 1, mode: .local, kind: "K",
                trigger: .run, status: .succeeded, params: [:], inputs: inputs, idempotencyKey: "k",
                createdAt: Timestamp(milliseconds: 1))
        }
        let all = [
            workflow("wf-run-input") { $0.runs.append(run(["text": "as-x"])) },
            workflow("wf-run-output") { var r = run([:]); r.outputs = ["text": "as-x"]; $0.runs.append(r) },
            workflow("wf-binding") { $0.nodes[0].bindings = ["text": "as-x"] },
            workflow("wf-node-output") { $0.nodes[0].outputs = ["text": "as-x"] },
            workflow("wf-selection") { $0.nodes[0].inputSelections = ["text": "as-x"] },
            workflow("wf-other") {
                $0.nodes[0].bindings = ["text": "as-y"]
                $0.nodes[0].params = ["note": "as-x"]  // a param that happens to hold the id is not a reference
                $0.runs.append(run(["text": "as-xx"]))
            },
        ]
        var cs = ChangeSet()
        cs.workflows = all.map { WorkflowWrite(nil, $0, summary($0)) }
        try store.commit(cs)
        XCTAssertEqual(try store.workflowIds(referencingAsset: "as-x"),
                       ["wf-binding", "wf-node-output", "wf-run-input", "wf-run-output", "wf-selection"])
        XCTAssertEqual(try store.workflowIds(referencingAsset: "as-y"), ["wf-other"])
        XCTAssertEqual(try store.workflowIds(referencingAsset: "as-none"), [])
    }

    private func makeAwait(_ id: String, _ w: Workflow) -> AwaitRequest {
        AwaitRequest(awaitId: id, workflowId: w.workflowId, nodeId: w.nodes[0].nodeId, runId: "r", type: .drawMask,
                     title: "t", detail: nil, urgency: .normal, blocking: true, createdAt: Timestamp(milliseconds: 1),
                     expiresAt: nil, deepLink: "app://x", onTimeout: .cancel, onCancel: nil, skippable: false,
                     notificationTitle: "t", notificationBody: "b")
    }

    private func randomWorkflow(_ i: Int, _ rng: inout SplitMix64) -> Workflow {
        func t() -> Timestamp { Timestamp(milliseconds: Int64.random(in: 0...4_000_000_000_000, using: &rng)) }
        let states = NodeState.allCases
        var nodes: [NodeInstance] = []
        for n in 0..<Int.random(in: 1...6, using: &rng) {
            var node = NodeInstance(nodeId: "n\(n)", state: states.randomElement(using: &rng)!, updatedAt: t())
            if node.state == .blocked {
                node.blockedReason = BlockedReason(code: "waitingForInput", message: "Waiting", details: ["missing": ["image"]])
            }
            node.params = ["steps": .int(Int64(n)), "label": "é"]
            if Bool.random(using: &rng) { node.outputs = ["image": "as-\(i)-\(n)"] }
            if Bool.random(using: &rng) {
                // Whether a failure is the engine's interruption survives whatever its code.
                // (Chosen by position, not drawn: the draws stay those the other checks rely on.)
                node.lastError = NodeError(code: n % 2 == 0 ? "interrupted" : "E", message: "m", hint: "h",
                                           isInterruption: (i + n) % 3 == 0)
            }
            node.attempts = n
            nodes.append(node)
        }
        var runs: [Run] = []
        for r in 0..<Int.random(in: 0...5, using: &rng) {
            var run = Run(runId: "run-\(i)-\(r)", nodeId: nodes.randomElement(using: &rng)!.nodeId, number: r + 1,
                          mode: RunMode.allCases.randomElement(using: &rng)!, kind: "K",
                          trigger: RunTrigger.allCases.randomElement(using: &rng)!,
                          status: RunStatus.allCases.randomElement(using: &rng)!, params: ["cfg": 4.0],
                          inputs: ["image": "as-x"], idempotencyKey: "key-\(r)", createdAt: t())
            run.jobId = "job-\(i)-\(r)"
            run.nextPollAt = t()
            if (i + r) % 2 == 0 {
                run.cancelFailures = r + 1
                run.nextCancelAt = Timestamp(milliseconds: Int64(1_000 * (i + r)))
            }
            run.pollCount = r
            run.progress = 0.5
            run.logTail = ["line 1", "line 2"]
            run.pendingDownloads = ["image": "https://x/y"]
            run.holdsSlot = Bool.random(using: &rng)
            run.startedAt = t()
            run.error = r % 2 == 0 ? NodeError(code: "x", message: "y", details: ["httpStatus": 503]) : nil
            runs.append(run)
        }
        var w = Workflow(workflowId: "wf-\(i)", seq: Int64(i + 1), templateId: "tpl-1", title: "Workflow \(i)", createdAt: t(),
                         nodes: nodes)
        w.runs = ChangeTrackedArray(runs)
        w.autoRun = Bool.random(using: &rng)
        w.pollingPaused = Bool.random(using: &rng)
        if !runs.isEmpty {
            var a = AwaitRequest(awaitId: "aw-\(i)", workflowId: w.workflowId, nodeId: runs[0].nodeId, runId: runs[0].runId,
                                 type: .selectAsset, title: "Pick", detail: "d", urgency: .low, blocking: false,
                                 createdAt: t(), expiresAt: t(), deepLink: "app://workflow/wf-\(i)", onTimeout: .skip,
                                 onCancel: .autoDefault, skippable: true, notificationTitle: "n", notificationBody: "b")
            a.claim = AwaitClaim(claimant: "phone", claimedAt: t(), leaseExpiresAt: t())
            a.snoozeCount = 2
            a.inputs = ["a": "as-1", "b": "as-2"]
            w.awaits = [a]
        }
        return w
    }
}

/// Step 3: the migration harness: a new store is created at the current schema, a store from a
/// newer library is refused, and legacy records load with defaults.
final class MigrationTests: XCTestCase {
    func testAStoreWrittenByANewerLibraryIsRefused() throws {
        let path = tempPath()
        defer { for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) } }
        let store = try SQLiteStore(path: path)
        store.close()
        let q = try DatabaseQueue(path: path)
        try q.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        try q.close()
        XCTAssertThrowsError(try SQLiteStore(path: path)) { error in
            XCTAssertEqual((error as? StoreError)?.code, "storeTooNew")
        }
    }

    /// 003 step 3 MigrationTests: a store written at schema `v1` (before cache entries had a use
    /// order) opens at the current schema, keeps its rows, and the migrated entries sort before
    /// anything used since.
    func testAV1StoreMigratesToTheCurrentSchemaKeepingItsCacheEntries() throws {
        let path = tempPath()
        defer { for file in SQLiteStore.files(ofStore: path) { try? FileManager.default.removeItem(atPath: file) } }
        let q = try DatabaseQueue(path: path)
        try StoreSchema.migrator.migrate(q, upTo: "v1")
        try q.write { db in
            try db.execute(sql: "INSERT INTO cache_entries (assetId, variant, bytes, lastUsedAt, pinned) VALUES ('as-1', 'thumbnail', 100, 5, 0)")
            try db.execute(sql: "INSERT INTO cache_entries (assetId, variant, bytes, lastUsedAt, pinned) VALUES ('as-2', 'preview', 200, 5, 1)")
        }
        XCTAssertFalse(try q.read { try $0.columns(in: "cache_entries").map(\.name).contains("useOrder") })
        try q.close()

        let store = try SQLiteStore(path: path)
        let migrated = try store.loadSnapshot().cacheEntries.sorted { $0.assetId < $1.assetId }
        XCTAssertEqual(migrated, [
            CacheEntry(assetId: "as-1", variant: .thumbnail, bytes: 100, lastUsedAt: Timestamp(milliseconds: 5), useOrder: 0),
            CacheEntry(assetId: "as-2", variant: .preview, bytes: 200, lastUsedAt: Timestamp(milliseconds: 5), pinned: true, useOrder: 0),
        ])
        var cs = ChangeSet()
        cs.cacheEntries[ChangeSet.cacheKey("as-3", "thumbnail")] =
            CacheEntry(assetId: "as-3", variant: .thumbnail, bytes: 300, lastUsedAt: Timestamp(milliseconds: 5), useOrder: 1)
        try store.commit(cs)
        store.close()

        let reopened = try SQLiteStore(path: path)
        let entries = try reopened.loadSnapshot().cacheEntries
        XCTAssertEqual(entries.count, 3)
        // All three last used at the same instant: the migrated entry (use order 0) goes first.
        let tight = CachePolicy(thumbnailCapBytes: 300)
        XCTAssertEqual(tight.thumbnailEvictions(entries).map(\.assetId), ["as-1"])
        XCTAssertEqual(entries.sorted(by: CachePolicy.leastRecentlyUsedFirst).map(\.assetId).last, "as-3")
        XCTAssertEqual(try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") },
                       ["v1", "v2-cache-use-order", "v3-journal", "v4-journal-file"])
    }

    func testLegacyRecordsWithMissingFieldsAndOldNamesLoad() throws {
        let store = try SQLiteStore(path: ":memory:")
        var rng = SplitMix64(seed: 1)
        _ = rng.next()
        let node = RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: #"{"state": "done"}"#))
        XCTAssertEqual(node.state, .succeeded)
        XCTAssertEqual(node.attempts, 0)
        let run = RecordCoding.decodeRun(runId: "r", nodeId: "n", try JSON(parsing: #"{"status": "completed", "mode": "remote"}"#))
        XCTAssertEqual(run.status, .succeeded)
        XCTAssertEqual(run.idempotencyKey, "r", "a missing key defaults to the run id")
        // A member this library no longer writes (a run's providerStatus, before 2026-11-27) is
        // left out, and the rest reads as it did.
        let older = RecordCoding.decodeRun(runId: "r", nodeId: "n", try JSON(parsing: #"""
            {"status": "running", "mode": "remote", "jobId": "job-1", "providerStatus": "queued", "pollCount": 2}
            """#))
        XCTAssertEqual(older.status, .running)
        XCTAssertEqual(older.jobId, "job-1")
        XCTAssertEqual(older.pollCount, 2)
        XCTAssertNil(RecordCoding.encode(older).objectValue?["providerStatus"], "not written back")
        XCTAssertNil(try store.loadWorkflow("nope"))
    }

    /// 003 step 1's `ToolState` shim: `{"failed": "reason"}` reads as `failed` with the reason
    /// kept as the node's error (code `failed`; `"interrupted"` is the engine's interruption),
    /// which is written back in today's form; a record's own `lastError` wins, and an empty
    /// reason leaves the node without one.
    func testALegacyFailedStateKeepsItsReasonAsTheNodesError() throws {
        let legacy = RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: #"{"state": {"failed": "GPU out of memory"}}"#))
        XCTAssertEqual(legacy.state, .failed)
        XCTAssertEqual(legacy.lastError, NodeError(code: "failed", message: "GPU out of memory"))
        let text = JSONWriter.string(RecordCoding.encode(legacy))
        XCTAssertTrue(text.contains(#""state":"failed""#), text)
        XCTAssertEqual(RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: text)).lastError, legacy.lastError, text)
        let both = RecordCoding.decodeNode(nodeId: "n", try JSON(parsing:
            #"{"state": {"failed": "old words"}, "lastError": {"code": "providerError", "message": "Provider said no."}}"#))
        XCTAssertEqual(both.lastError?.code, "providerError")
        XCTAssertNil(RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: #"{"state": {"failed": ""}}"#)).lastError)
        // What the shim wrote for a local run a kill cut short (003 §7) is the engine's interruption.
        let interrupted = RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: #"{"state": {"failed": "interrupted"}}"#))
        XCTAssertEqual(interrupted.lastError, NodeError.interrupted)
        XCTAssertEqual(interrupted.lastError?.isInterruption, true)
    }

    /// Records written before the interruption flag existed: only the engine wrote the code
    /// `interrupted` then, for a local run a crash cut short, and it still reads as that.
    func testAnOlderRecordCodedInterruptedReadsAsTheEnginesInterruption() throws {
        let older = RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: #"""
            {"state": "failed", "lastError": {"code": "interrupted", "message": "Interrupted: the app stopped while this step was running."}}
            """#))
        XCTAssertEqual(older.lastError?.isInterruption, true)
        var host = older
        host.lastError = NodeError(code: "interrupted", message: "Preempted.")
        let text = JSONWriter.string(RecordCoding.encode(host))
        XCTAssertTrue(text.contains(#""interruption":false"#), text)
        XCTAssertEqual(RecordCoding.decodeNode(nodeId: "n", try JSON(parsing: text)).lastError?.isInterruption, false)
        let engine = JSONWriter.string(RecordCoding.encode(older))
        XCTAssertFalse(engine.contains("interruption"), "written as before: \(engine)")
    }
}
