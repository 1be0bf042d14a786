import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import WorkflowCore
import WorkflowEngine
import XCTest

/// The store is the engine's: a second engine on the same file, or rows changed behind its back,
/// end in a structured `WF_ESTORE` error, never in lost changes or a crash.
final class StoreIntegrityTests: XCTestCase {
    private var path = ""

    override func setUp() {
        path = NSTemporaryDirectory() + "wf-integrity-\(UUID().uuidString).sqlite"
    }

    override func tearDown() {
        for file in Engine.storeFiles(path) { try? FileManager.default.removeItem(atPath: file) }
    }

    private func open() throws -> Engine {
        try Engine(configJSON: ["store": .string(path), "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"]])
    }

    /// The store's files as they are now (the engine closed), and a function putting them back
    /// so, removing whatever was written since: each damage of a test starts from the same store.
    private func keepStoreFiles() throws -> () throws -> Void {
        let files = Engine.storeFiles(path).filter { FileManager.default.fileExists(atPath: $0) }
        let kept = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        return { [path] in
            for file in Engine.storeFiles(path) { try? FileManager.default.removeItem(atPath: file) }
            for (file, data) in zip(files, kept) { try data.write(to: URL(fileURLWithPath: file)) }
        }
    }

    /// Runs SQL on the store file as another program would.
    private func tamper(_ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }

    /// A one-node local workflow (Uppercase of a bound text), its run started unless `run` is
    /// false; returns its id.
    private func startedWorkflow(_ engine: Engine, run: Bool = true) throws -> String {
        try engine.callOrThrow("tool.register", ["kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "one",
                       "nodes": [["id": "up", "kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]]]
        let tpl = try engine.callOrThrow("template.register", ["template": t])["templateId"]!
        let wf = try engine.callOrThrow("workflow.create", ["templateId": tpl, "bindings": ["up": ["text": ["type": "TextRef", "uri": "file:///t"]]]])["workflowId"]!
        if run { try engine.callOrThrow("node.run", ["workflowId": wf, "nodeId": "up"]) }
        return wf.stringValue!
    }

    /// `Engine.close()` (wf_engine_close) reports success when every commit is on disk: a second
    /// close too, and the close of an engine another one took the store from (the later one
    /// replayed its journal). A closed engine refuses calls.
    func testCloseSucceedsTwiceAndAnEngineWhoseStoreAnotherOpenedClosesWithNothingToReport() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)
        let b = try open()
        guard case .success = a.close() else { return XCTFail("a's close failed") }
        guard case .success = a.close() else { return XCTFail("a second close failed") }
        guard case let .failure(e) = a.call("clock.now", [:]) else { return XCTFail("a closed engine answered") }
        XCTAssertEqual(e.code, "engineClosed")
        try b.callOrThrow("workflow.archive", ["workflowId": .string(wf)])
        guard case .success = b.close() else { return XCTFail("b's close failed") }
        let reopened = try open()
        XCTAssertEqual(try reopened.callOrThrow("workflow.get", ["workflowId": .string(wf)])["archived"], true)
        reopened.close()
    }

    func testTheEngineOpenedLastOwnsTheFileAndTheOneBeforeIsRefusedChangingNothing() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)
        let b = try open()
        let refused = a.call("workflow.archive", ["workflowId": .string(wf)])
        guard case let .failure(e) = refused else { return XCTFail("a's write was accepted: \(refused)") }
        XCTAssertEqual(e.status, .store)
        XCTAssertEqual(e.code, "storeInUse")
        XCTAssertEqual(e.details["store"], .string(path), "names the store, as a failed open does")
        try b.callOrThrow("workflow.setPolling", ["workflowId": .string(wf), "paused": true])  // b goes on
        guard case .failure = a.call("workflow.archive", ["workflowId": .string(wf)]) else { return XCTFail("a wrote later") }
        a.close()  // a's close writes nothing over b's changes
        b.close()
        let reopened = try open()
        let got = try reopened.callOrThrow("workflow.get", ["workflowId": .string(wf)])
        XCTAssertEqual(got["pollingPaused"], true, "b's change was kept")
        XCTAssertEqual(got["archived"], false, "a's change was refused whole")
        reopened.close()
    }

    /// Two engines making one new store at once (two threads here; two processes race the same
    /// way) both open it: the one whose schema migration comes second finds the tables the first
    /// made and goes on (it used to fail, with "table meta already exists", or as
    /// `storeCorrupt`), and the one opened last owns the store.
    func testTwoEnginesMakingOneNewStoreAtOnceBothOpen() throws {
        for round in 0..<24 {
            let file = NSTemporaryDirectory() + "wf-race-\(UUID().uuidString).sqlite"
            defer { for f in Engine.storeFiles(file) { try? FileManager.default.removeItem(atPath: f) } }
            let config: JSON = ["store": .string(file), "clock": ["mode": "manual"]]
            let results = OpenResults()
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                results.add(Result { try Engine(configJSON: config) })
            }
            var opened: [Engine] = []
            for result in results.all {
                switch result {
                case .success(let engine): opened.append(engine)
                case .failure(let error): XCTFail("round \(round): an open failed: \(error)")
                }
            }
            // Exactly one of them owns the file: the other's commit is refused.
            let owners = opened.filter { (try? $0.callOrThrow("tool.register", ["kind": "Up", "outputs": ["text": "TextRef"]])) != nil }
            XCTAssertEqual(owners.count, opened.count == 2 ? 1 : opened.count, "round \(round)")
            for engine in opened { engine.close() }
        }
    }

    /// A store opened by another name (a symbolic link to its file, or to its folder) is the same
    /// store: the journal a killed engine left is found (SQLite follows the link for its own
    /// log; the journal is named as it does), so no committed call is lost and no id is issued
    /// again; the store's files are listed by the name they really have.
    func testAStoreOpenedThroughALinkFindsWhatAKilledEngineLeftInItsJournal() throws {
        let dir = NSTemporaryDirectory() + "wf-link-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.sqlite", withDestinationPath: "real/store.sqlite")
        try FileManager.default.createSymbolicLink(atPath: dir + "/folder", withDestinationPath: dir + "/real")
        func config(_ store: String) -> JSON {
            ["store": .string(store), "clock": ["mode": "manual"], "backgroundWrites": false]
        }
        var abandoned: [Engine] = []
        defer { for engine in abandoned { engine.close() } }
        var name = dir + "/real/store.sqlite"
        let first = try Engine(configJSON: config(name))
        abandoned.append(first)
        let wf = try startedWorkflow(first)
        let runs = try first.callOrThrow("effects.take").objectValue?["effects"]?.arrayValue ?? []
        XCTAssertEqual(runs.count, 1)
        try first.callOrThrow("local.completed", ["runId": runs[0]["runId"]!, "outputs": ["text": ["uri": "file:///T"]]])
        let output = try first.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["outputs"]?["text"]
        // Killed, then opened by each other name in turn, each left as killed in its turn.
        for other in [dir + "/link.sqlite", dir + "/folder/store.sqlite", dir + "/folder/../real/./store.sqlite"] {
            XCTAssertEqual(Set(Engine.storeFiles(other)), Set(Engine.storeFiles(name)), other)
            name = other
            let engine = try Engine(configJSON: config(name))
            abandoned.append(engine)
            let node = try engine.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])
            XCTAssertEqual(node["state"], "succeeded", other)
            XCTAssertEqual(node["outputs"]?["text"], output, other)
            // The bound input is as-1, the output as-2; each import the next.
            let imported = try engine.callOrThrow("asset.import", ["type": "TextRef", "uri": .string("file:///\(abandoned.count)")])
            XCTAssertEqual(imported["assetId"], .string("as-\(abandoned.count + 1)"), "\(other): a new id, none issued again")
        }
        XCTAssertEqual(Engine.storeFiles(dir + "/link.sqlite").first, dir + "/real/store.sqlite")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/real/store.sqlite-wfjournal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/link.sqlite-wfjournal"))
    }

    /// An earlier version named the journal after the path as given: a host that opened the
    /// store through a link to its file has it beside the link. Opened again (by the link or by
    /// the file's own name) after a kill, that journal is taken over under its new name, so the
    /// killed engine's commits are there.
    func testAJournalAnEarlierVersionLeftBesideALinkIsTakenOver() throws {
        let dir = NSTemporaryDirectory() + "wf-oldlink-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.sqlite", withDestinationPath: "store.sqlite")
        let config: JSON = ["store": .string(dir + "/store.sqlite"), "clock": ["mode": "manual"], "backgroundWrites": false]
        let killed = try Engine(configJSON: config)
        defer { killed.close() }
        let wf = try startedWorkflow(killed)
        let runs = try killed.callOrThrow("effects.take").objectValue?["effects"]?.arrayValue ?? []
        try killed.callOrThrow("local.completed", ["runId": runs[0]["runId"]!, "outputs": ["text": ["uri": "file:///T"]]])
        // Where an earlier version opening it through the link would have left the journal.
        try killed.withStoreWritesHeld {
            try FileManager.default.moveItem(atPath: dir + "/store.sqlite-wfjournal", toPath: dir + "/link.sqlite-wfjournal")
        }
        let reopened = try Engine(configJSON: ["store": .string(dir + "/link.sqlite"), "clock": ["mode": "manual"]])
        defer { reopened.close() }
        XCTAssertEqual(try reopened.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["state"], "succeeded")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/link.sqlite-wfjournal"), "moved to its name now")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/store.sqlite-wfjournal"))
    }

    func testAnotherProgramCheckpointingTheLogTakesNothingFromTheOwner() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)
        let other = try DatabaseQueue(path: path)
        _ = try other.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        _ = try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM workflows") }
        try other.close()
        try a.callOrThrow("workflow.archive", ["workflowId": .string(wf)])
        XCTAssertEqual(try a.callOrThrow("workflow.get", ["workflowId": .string(wf)])["archived"], true)
        a.close()
    }

    func testADamagedWorkflowIsLeftOutOfCallsOverAllWorkflowsAndCorruptWhenAskedFor() throws {
        let a = try open()
        let damaged = try startedWorkflow(a, run: false)
        let sound = try a.callOrThrow("workflow.duplicate", ["workflowId": .string(damaged)])["workflowId"]!
        a.close()
        try tamper("DELETE FROM nodes WHERE workflowId = '\(damaged)'")
        let b = try open()
        // Registering a tool re-gates every workflow not done: the damaged one is left out.
        try b.callOrThrow("tool.register", ["kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                            "defaults": ["v": 2]])
        XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": sound])["workflowId"], sound)
        guard case let .failure(e) = b.call("workflow.get", ["workflowId": .string(damaged)]) else { return XCTFail("read it") }
        XCTAssertEqual(e.code, "storeCorrupt")
        b.close()
    }

    func testAnAbandonedEngineDoesNotStopTheNextFromWriting() throws {
        // What a killed process leaves: its engine never writes again.
        let a = try open()
        let wf = try startedWorkflow(a)
        let b = try open()
        try b.callOrThrow("workflow.archive", ["workflowId": .string(wf)])
        XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": .string(wf)])["archived"], true)
        withExtendedLifetime(a) {}
        b.close()
    }

    func testATemplateAnEarlierVersionStoredWithLooseDurationsStillOpens() throws {
        // Before 2026-11-25 "pt24h" and "PT.5S" were read; templates then still refuse them.
        let a = try open()
        let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                       "nodes": [["id": "note", "kind": "UserText", "outputs": ["text": "TextRef"],
                                  "await": ["type": "enter_text", "expiresIn": "PT24H"]]]]
        let tpl = try a.callOrThrow("template.register", ["template": t])["templateId"]!
        a.close()
        try tamper("UPDATE templates SET canonical = replace(canonical, 'PT24H', 'pt24h')")
        let b = try open()
        let wf = try b.callOrThrow("workflow.create", ["templateId": tpl])["workflowId"]!
        let id = try b.callOrThrow("node.get", ["workflowId": wf, "nodeId": "note"])["awaitId"]!
        XCTAssertEqual(try b.callOrThrow("await.get", ["awaitId": id])["expiresAt"], "2026-01-02T00:00:00.000Z")
        var lower = t.objectValue!
        lower["name"] = "ask again"
        lower["nodes"] = [["id": "note", "kind": "UserText", "outputs": ["text": "TextRef"],
                           "await": ["type": "enter_text", "expiresIn": "pt24h"]]]
        guard case let .failure(e) = b.call("template.register", ["template": .object(lower)]) else {
            return XCTFail("a new template with a lower-case duration was accepted")
        }
        XCTAssertEqual(e.details["errors"]?[0]?["code"], "invalidDuration")
        b.close()
    }

    func testATemplateAnEarlierVersionStoredWithADotSegmentNodeIdStillOpens() throws {
        // Before 2026-12-03 node ids "." and ".." were accepted; templates now refuse them (a URL
        // library drops them from a deep link), and one stored then still reads.
        let a = try open()
        let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                       "nodes": [["id": "dotdot", "kind": "UserText", "outputs": ["text": "TextRef"],
                                  "await": ["type": "enter_text"]]]]
        let tpl = try a.callOrThrow("template.register", ["template": t])["templateId"]!
        a.close()
        try tamper("UPDATE templates SET canonical = replace(canonical, '\"dotdot\"', '\"..\"')")
        let b = try open()
        let wf = try b.callOrThrow("workflow.create", ["templateId": tpl])["workflowId"]!
        XCTAssertEqual(try b.callOrThrow("node.get", ["workflowId": wf, "nodeId": ".."])["state"], "awaitingUser")
        var again = t.objectValue!
        again["name"] = "ask again"
        again["nodes"] = [["id": "..", "kind": "UserText", "outputs": ["text": "TextRef"], "await": ["type": "enter_text"]]]
        guard case let .failure(e) = b.call("template.register", ["template": .object(again)]) else {
            return XCTFail("a new template with the node id '..' was accepted")
        }
        XCTAssertEqual(e.details["errors"]?[0]?["code"], "malformedTemplate")
        XCTAssertEqual(e.details["errors"]?[0]?["path"], "$.nodes[0].id")
        b.close()
    }

    func testAStoreWhoseNodeRowsWereDeletedIsRefusedAsCorruptNotACrash() throws {
        let a = try open()
        _ = try startedWorkflow(a)
        a.close()
        try tamper("DELETE FROM nodes")
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.status, .store)
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt")
        }
    }

    func testAWorkflowWhoseNodeRowsWereDeletedIsCorruptWhenRead() throws {
        let a = try open()
        let wf = try startedWorkflow(a)
        try a.callOrThrow("node.cancel", ["workflowId": .string(wf), "nodeId": "up"])  // nothing to resume on open
        a.close()
        try tamper("DELETE FROM nodes")
        let b = try open()
        guard case let .failure(e) = b.call("workflow.get", ["workflowId": .string(wf)]) else { return XCTFail("read a damaged workflow") }
        XCTAssertEqual(e.code, "storeCorrupt")
        XCTAssertEqual(e.details["workflowId"], .string(wf))
        b.close()
    }

    /// SQLite keeps text in an integer column if something else than the engine puts it there;
    /// GRDB's row subscripts trap on it (found by damaging stores at random and reading them
    /// through the C ABI): each such value, in every table the engine reads when it opens, is
    /// refused as corrupt, naming the table and the column. So are counts the engine keeps
    /// within 0 … 2^31 − 1 (a negative one, or one whose sum overflows, trapped in the
    /// scheduler's totals), cached sizes past 2^53 − 1, tables missing a column, and journal
    /// entry counts past 2^53.
    func testWhatTheEngineNeverWritesInAColumnItReadsAtOpenIsRefusedAsCorruptNotACrash() throws {
        var damage: [(sql: String, message: String)] = [
            ("workflows", "queuedLocal"), ("workflows", "updatedAt"), ("workflows", "archived"),
            ("templates", "seq"), ("tools", "registeredAt"), ("effects", "taken"),
            ("cache_entries", "useOrder"), ("cache_entries", "bytes"),
        ].map { ("UPDATE \($0) SET \($1) = 'x'", "\($0) table holds text in column \($1)") }
        damage += [
            ("UPDATE workflows SET queuedLocal = -9223372036854775808", "workflows table holds -9223372036854775808 in column queuedLocal"),
            ("UPDATE workflows SET runningLocal = 9223372036854775807", "workflows table holds 9223372036854775807 in column runningLocal"),
            ("UPDATE workflows SET awaitCount = -1", "workflows table holds -1 in column awaitCount, where the engine writes 0 … 2147483647"),
            ("UPDATE cache_entries SET bytes = -9223372036854775808", "cache_entries table holds -9223372036854775808 in column bytes"),
            ("ALTER TABLE workflows RENAME COLUMN runningLocal TO running", "tables are not the ones the engine made: no such column: runningLocal"),
            // The journal's numbering goes on from these: Int64.max overflowed it.
            ("UPDATE meta SET value = '9223372036854775807' WHERE key = 'journal.foldedThrough'",
             "journal.foldedThrough is not an entry count"),
            ("UPDATE meta SET value = '-1' WHERE key = 'journal.directCommits'", "journal.directCommits is not an entry count"),
        ]
        let a = try open()
        let wf = try startedWorkflow(a)  // a workflow with a local run
        let asset = try a.callOrThrow("asset.import", ["type": "ImageRef", "uri": "file:///cat.png"])["assetId"]!
        try a.callOrThrow("cache.record", ["assetId": asset, "variant": "thumbnail", "bytes": 80])
        try a.callOrThrow("cache.record", ["assetId": asset, "variant": "preview", "bytes": 800])
        try a.callOrThrow("cache.freeUpSpace")  // a cache.evict effect, kept in the store
        a.close()
        let restore = try keepStoreFiles()  // put back before each damage
        for (sql, message) in damage {
            try restore()
            try tamper(sql)
            XCTAssertThrowsError(try open(), sql) { error in
                let e = error as? EngineError
                XCTAssertEqual(e?.status, .store, sql)
                XCTAssertEqual(e?.code, "storeCorrupt", sql)
                XCTAssertTrue(e?.message.contains(message) == true, "\(sql): \(e?.message ?? "\(error)")")
            }
        }
        try restore()
        let b = try open()  // the sound copy opens
        XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": .string(wf)])["workflowId"], .string(wf))
        b.close()
    }

    func testAnAssetRowWithAValueOfTheWrongTypeIsCorruptWhenReadAndTheEngineGoesOn() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)
        let asset = try a.callOrThrow("asset.import", ["type": "ImageRef", "uri": "file:///cat.png"])["assetId"]!
        a.close()
        try tamper("UPDATE assets SET createdAt = 'x' WHERE assetId = '\(asset.stringValue!)'")
        let b = try open()
        guard case let .failure(e) = b.call("asset.get", ["assetId": asset]) else { return XCTFail("read a damaged asset") }
        XCTAssertEqual(e.status, .store)
        XCTAssertEqual(e.code, "storeCorrupt")
        XCTAssertTrue(e.message.contains("assets table holds text in column createdAt"), e.message)
        XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": .string(wf)])["workflowId"], .string(wf))
        b.close()
    }

    /// Records decode forgivingly, so a count no engine writes (a node's attempts at Int64.max,
    /// found by damaged stores) loads; it is kept within 0 … 2^31 − 1, so the next run's
    /// `attempts + 1` does not overflow.
    func testAHugeCountInARecordLoadsWithinRangeAndTheNextRunDoesNotOverflow() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)
        a.close()
        try tamper("UPDATE nodes SET data = json_set(data, '$.attempts', 9223372036854775807)")
        let b = try open()
        try b.callOrThrow("node.run", ["workflowId": .string(wf), "nodeId": "up"])
        XCTAssertEqual(try b.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["attempts"],
                       .int(Int64(Int32.max) + 1))
        b.close()
    }

    /// A cache entry of a variant this library does not know used to load as a preview, and took
    /// the place of the asset's real preview entry (its size, its purge time) when it was read
    /// after it (rows come in variant order: "xlarge" after "preview").
    func testACacheEntryOfAnUnknownVariantIsLeftOutAndTheRealPreviewKept() throws {
        let a = try open()
        let asset = try a.callOrThrow("asset.import", ["type": "ImageRef", "uri": "file:///cat.png"])["assetId"]!
        try a.callOrThrow("cache.record", ["assetId": asset, "variant": "preview", "bytes": 20])
        try a.callOrThrow("clock.advance", ["seconds": 60])
        try a.callOrThrow("cache.record", ["assetId": asset, "variant": "thumbnail", "bytes": 10])
        a.close()
        try tamper("UPDATE cache_entries SET variant = 'xlarge' WHERE variant = 'thumbnail'")
        let b = try open()
        let entries = try b.callOrThrow("cache.entries")["entries"]
        XCTAssertEqual(entries?.arrayValue?.count, 1, "\(String(describing: entries))")
        XCTAssertEqual(entries?[0]?["variant"], "preview")
        XCTAssertEqual(entries?[0]?["bytes"], 20)
        XCTAssertEqual(entries?[0]?["lastUsedAt"], "2026-01-01T00:00:00.000Z")
        b.close()
    }

    /// Found by damaged stores: a run's status edited into a value that no longer reads (it
    /// decodes as failed) under a succeeded node made a later call fail on an illegal
    /// transition (`WF_EINTERNAL`). Such a workflow, or one whose node names another node's
    /// run, is damaged: `storeCorrupt` when read, and left out of calls over every workflow.
    func testANodeWhoseCurrentRunContradictsItIsCorruptWhenRead() throws {
        let damage = [
            "UPDATE runs SET data = json_set(data, '$.status', 'succe}ded')",
            "UPDATE nodes SET data = json_set(data, '$.currentRunId', 'run-999')",
        ]
        let a = try open()
        let wf = try startedWorkflow(a)
        let run = try a.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["runId"]!
        try a.callOrThrow("local.completed", ["runId": run, "outputs": ["text": ["type": "TextRef", "uri": "file:///u"]]])
        XCTAssertEqual(try a.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["state"], "succeeded")
        let sound = try a.callOrThrow("workflow.duplicate", ["workflowId": .string(wf)])["workflowId"]!
        a.close()
        let restore = try keepStoreFiles()
        for sql in damage {
            try restore()
            try tamper(sql + " WHERE workflowId = '\(wf)'")
            let b = try open()
            guard case let .failure(e) = b.call("workflow.runAllReady", ["workflowId": .string(wf)]) else {
                return XCTFail("\(sql): used a damaged workflow")
            }
            XCTAssertEqual(e.code, "storeCorrupt", "\(sql): \(e)")
            XCTAssertEqual(e.details["workflowId"], .string(wf))
            // Calls over every workflow leave it out (re-gating them all when a tool changes).
            try b.callOrThrow("tool.register", ["kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                                "defaults": ["v": 2]])
            XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": sound])["workflowId"], sound)
            b.close()
        }
    }

    /// Found by damaged stores: a node record cut so that it read as blocked while its local run
    /// was running, or waiting for its slot, made the open, which interrupts running local runs
    /// and starts queued ones, fail on an illegal transition (`WF_EINTERNAL`). A node and its
    /// run under way out of step, in any of the ways the rules never leave them, is damaged: the
    /// open refuses the store with `storeCorrupt` naming the workflow when it must resume that
    /// workflow's work, and a later call reading the workflow gets `storeCorrupt` otherwise.
    func testANodeOutOfStepWithItsRunUnderWayIsCorrupt() throws {
        let running = [
            // The seeds' damage: the node blocked while its local run runs.
            "UPDATE nodes SET data = json_set(data, '$.state', 'blocked')",
            // The node in another in-flight state than its run's.
            "UPDATE nodes SET data = json_set(data, '$.state', 'runningRemote')",
            // A run under way that is not its node's current run.
            "UPDATE nodes SET data = json_remove(data, '$.currentRunId')",
            // A status the run's mode never takes: a local run submitted to a provider.
            "UPDATE runs SET data = json_set(data, '$.status', 'submitted')",
            // The run's mode changed under it: an interactive run running.
            "UPDATE runs SET data = json_set(data, '$.mode', 'interactive')",
        ]
        let a = try open()
        let wf = try startedWorkflow(a)
        XCTAssertEqual(try a.callOrThrow("node.get", ["workflowId": .string(wf), "nodeId": "up"])["state"], "runningLocal")
        a.close()
        let restore = try keepStoreFiles()
        try open().close()  // the store as it was opens: the check refuses nothing the rules make
        for sql in running {
            try restore()
            try tamper(sql + " WHERE workflowId = '\(wf)'")
            XCTAssertThrowsError(try open(), sql) { error in
                XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", "\(sql): \(error)")
                XCTAssertEqual((error as? EngineError)?.details["workflowId"], .string(wf), sql)
            }
        }
        // A local run waiting for its slot under a node cut to read as blocked: the open frees
        // the slot (the first workflow's run is interrupted) and starts it.
        try restore()
        let oneSlot: JSON = ["store": .string(path), "concurrency": ["local": 1],
                             "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"]]
        let q = try Engine(configJSON: oneSlot)
        let tpl = try q.callOrThrow("template.list")["templates"]?[0]?["templateId"]
        let bound: JSON = ["up": ["text": ["type": "TextRef", "uri": "file:///w"]]]
        let holder = try q.callOrThrow("workflow.create", ["templateId": tpl!, "bindings": bound])["workflowId"]!
        try q.callOrThrow("node.run", ["workflowId": holder, "nodeId": "up"])  // takes the one slot
        let waiting = try q.callOrThrow("workflow.create", ["templateId": tpl!, "bindings": bound])["workflowId"]!
        try q.callOrThrow("node.run", ["workflowId": waiting, "nodeId": "up"])
        XCTAssertEqual(try q.callOrThrow("node.get", ["workflowId": waiting, "nodeId": "up"])["state"], "ready")
        q.close()
        try tamper("UPDATE nodes SET data = json_set(data, '$.state', 'blocked') WHERE workflowId = '\(waiting.stringValue!)'")
        XCTAssertThrowsError(try Engine(configJSON: oneSlot)) { error in
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", "\(error)")
            XCTAssertEqual((error as? EngineError)?.details["workflowId"], waiting)
        }
        // A workflow nothing runs in is read on first use: a node in flight without a run.
        try restore()
        let c = try open()
        let idle = try startedWorkflow(c, run: false)
        c.close()
        try tamper("UPDATE nodes SET data = json_set(data, '$.state', 'awaitingUser') WHERE workflowId = '\(idle)'")
        let d = try open()
        guard case let .failure(e) = d.call("workflow.get", ["workflowId": .string(idle)]) else {
            return XCTFail("used a damaged workflow")
        }
        XCTAssertEqual(e.code, "storeCorrupt", "\(e)")
        XCTAssertEqual(e.details["workflowId"], .string(idle))
        XCTAssertTrue(e.message.contains("without a run under way"), e.message)
        d.close()
    }

    func testAFileThatIsNotADatabaseIsRefusedAsCorrupt() throws {
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.status, .store)
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", "\(error)")
        }
    }

    func testAStoreWhosePagesSQLiteFindsMalformedIsRefusedAsCorrupt() throws {
        let a = try open()
        _ = try startedWorkflow(a)
        a.close()
        // Every b-tree page after the schema's gets a page type SQLite does not know.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        for page in stride(from: UInt64(4096), to: size, by: 4096) {
            try handle.seek(toOffset: page)
            try handle.write(contentsOf: Data([0x7F]))
        }
        try handle.close()
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.status, .store)
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", "\(error)")
        }
    }

    func testATemplateRowThatNoLongerValidatesIsRefusedNamingTheTemplate() throws {
        let a = try open()
        _ = try startedWorkflow(a, run: false)
        a.close()
        try tamper("UPDATE templates SET canonical = replace(canonical, '\"Up\"', '\"\"')")
        XCTAssertThrowsError(try open()) { error in
            let e = error as? EngineError
            XCTAssertEqual(e?.code, "storeCorrupt")
            XCTAssertEqual(e?.details["templateId"], "tpl-1")
            XCTAssertTrue(e?.message.hasPrefix("template tpl-1 in the store cannot be read: it no longer validates (") == true,
                          e?.message ?? "\(error)")
        }
    }

    func testACounterPushedToItsLimitIsRefusedAsCorruptNotAnOverflow() throws {
        let a = try open()
        _ = try startedWorkflow(a)
        a.close()
        try tamper("UPDATE meta SET value = '9223372036854775807' WHERE key LIKE 'counter.%'")
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt")
        }
    }

    /// Found by damaged stores: with the run counter deleted, the next workflow's runs were
    /// numbered from 1 again and their rows written over the first workflow's (its history
    /// showed another workflow's run). Every counter now starts at the highest id in use,
    /// whether another program deleted it or lowered it, and nothing is overwritten.
    func testACounterDeletedOrLoweredGoesOnFromTheHighestIdInUseAndOverwritesNothing() throws {
        let a = try open()
        let first = try startedWorkflow(a)
        let up: JSONObject = ["workflowId": .string(first), "nodeId": "up"]
        let firstRun = try a.callOrThrow("node.get", up)["runId"]!
        try a.callOrThrow("local.completed", ["runId": firstRun, "outputs": ["text": ["type": "TextRef", "uri": "file:///u"]]])
        let firstNode = try a.callOrThrow("node.get", up)
        let firstAsset = firstNode["outputs"]?["text"]
        XCTAssertNotNil(firstAsset)
        a.close()
        let restore = try keepStoreFiles()
        for sql in ["DELETE FROM meta WHERE key LIKE 'counter.%'", "UPDATE meta SET value = '0' WHERE key LIKE 'counter.%'"] {
            try restore()
            try tamper(sql)
            let b = try open()
            let tpl = try b.callOrThrow("template.list")["templates"]?[0]?["templateId"]
            XCTAssertEqual(tpl, "tpl-1", sql)
            let second = try b.callOrThrow("workflow.create", ["templateId": tpl!, "title": "second",
                                                               "bindings": ["up": ["text": ["type": "TextRef", "uri": "file:///s"]]]])["workflowId"]!
            XCTAssertNotEqual(second, .string(first), sql)
            let at: JSONObject = ["workflowId": second, "nodeId": "up"]
            try b.callOrThrow("node.run", at)
            let secondRun = try b.callOrThrow("node.get", at)["runId"]!
            XCTAssertNotEqual(secondRun, firstRun, sql)
            try b.callOrThrow("local.completed", ["runId": secondRun, "outputs": ["text": ["type": "TextRef", "uri": "file:///v"]]])
            XCTAssertNotEqual(try b.callOrThrow("node.get", at)["outputs"]?["text"], firstAsset, sql)
            b.close()
            // The first workflow's node, run and output are as they were, read from the file
            // after the second's were written.
            let c = try open()
            XCTAssertEqual(try c.callOrThrow("node.get", up), firstNode, sql)
            let history = try c.callOrThrow("node.history", up)["runs"]
            XCTAssertEqual(history?.arrayValue?.count, 1, sql)
            XCTAssertEqual(history?[0]?["runId"], firstRun, sql)
            XCTAssertEqual(try c.callOrThrow("asset.get", ["assetId": firstAsset!])["uri"], "file:///u", sql)
            c.close()
        }
    }

    /// The cache's use order is numbered from a counter too: deleted, a thumbnail used after
    /// the reopen took an order below one used before it, and the LRU evicted the one just used.
    func testACacheUseCounterDeletedGoesOnFromTheLatestUseAndTheLRUEvictsTheRightFile() throws {
        let config: JSON = ["store": .string(path), "cache": ["thumbnailBytes": 150],
                            "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"]]
        let a = try Engine(configJSON: config)
        var ids: [JSON] = []
        for uri in ["file:///a", "file:///b", "file:///c"] {
            ids.append(try a.callOrThrow("asset.import", ["type": "ImageRef", "uri": .string(uri)])["assetId"]!)
        }
        for id in ids.prefix(2) { try a.callOrThrow("cache.record", ["assetId": id, "variant": "thumbnail", "bytes": 60]) }
        a.close()
        try tamper("DELETE FROM meta WHERE key = 'counter.cacheUse'")
        let b = try Engine(configJSON: config)
        try b.callOrThrow("cache.touch", ["assetId": ids[0], "variant": "thumbnail"])  // the first is now the latest used
        let evicted = try b.callOrThrow("cache.record", ["assetId": ids[2], "variant": "thumbnail", "bytes": 60])["evicted"]
        XCTAssertEqual(evicted?.arrayValue?.map { $0["assetId"] }, [ids[1]])
        b.close()
    }

    /// Ids numbered past what a counter may hold (another program's, or damage) are not taken
    /// as the highest in use: the counters would overflow. The highest below them still is.
    func testAnIdNumberedPastTheCountersRangeIsNotTakenAsTheHighestInUse() throws {
        let a = try open()
        _ = try startedWorkflow(a, run: false)  // its bound text is as-1
        XCTAssertEqual(try a.callOrThrow("asset.import", ["type": "TextRef", "uri": "file:///y"])["assetId"], "as-2")
        a.close()
        try tamper("UPDATE assets SET assetId = 'as-99999999999999999999' WHERE assetId = 'as-2'")
        try tamper("UPDATE templates SET templateId = 'tpl-9223372036854775807'")
        try tamper("DELETE FROM meta WHERE key LIKE 'counter.%'")
        let b = try open()
        let second = try b.callOrThrow("workflow.create", ["templateId": "tpl-9223372036854775807"])["workflowId"]
        XCTAssertEqual(second, "wf-2")
        let asset = try b.callOrThrow("asset.import", ["type": "TextRef", "uri": "file:///x"])["assetId"]
        XCTAssertEqual(asset, "as-2")
        b.close()
    }

    /// Found by damaged stores: an effect whose stored body lost its `id` and `type` (edited) was
    /// handed out without them, so a host could neither dispatch nor acknowledge it. They come
    /// from the effect's columns now.
    func testAnEffectWhoseStoredBodyChangedItsIdAndTypeIsHandedOutWithTheColumns() throws {
        let h = try Harness(file: true)
        h.startOneRemote()
        h.engine.close()
        let id = try DatabaseQueue(path: h.storePath!).write { db in
            try db.execute(sql: "UPDATE effects SET data = json_set(data, '$.id', 'e-999', '$.type', 'remote.cancel') WHERE type = 'remote.submit'")
            return try String.fetchOne(db, sql: "SELECT effectId FROM effects WHERE type = 'remote.submit'")
        }
        h.engine = try Engine(configJSON: .object(h.config))
        let effects = h.take()
        XCTAssertEqual(effects.count, 1)
        XCTAssertEqual(effects.first?["id"], id.map(JSON.string))
        XCTAssertEqual(effects.first?["type"], "remote.submit")
        XCTAssertNotNil(effects.first?["runId"]?.stringValue, "the rest of the body as stored")
    }

    /// Found by damaged stores: an effect whose stored body no longer read, or lost what its
    /// host acts on (a submit without its run, a poll without its job), was handed out so: no
    /// host could carry it out, and no event could settle it. Nor could an effect whose answer
    /// key no longer matches its body, or of a type this library never emits. The store is
    /// refused as corrupt at open, naming the effect, and the file is left as it was.
    func testAStoredEffectThatCanBeNeitherCarriedOutNorSettledIsCorrupt() throws {
        let a = try open()
        try a.callOrThrow("tool.register", ["kind": "Remote", "resourceClass": "remote", "outputs": ["image": "ImageRef"]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "r",
                       "nodes": [["id": "r", "kind": "Remote", "outputs": ["image": "ImageRef"], "resources": ["class": "remote"]]]]
        let tpl = try a.callOrThrow("template.register", ["template": t])["templateId"]!
        let wf = try a.callOrThrow("workflow.create", ["templateId": tpl])["workflowId"]!
        try a.callOrThrow("node.run", ["workflowId": wf, "nodeId": "r"])
        a.close()
        let restore = try keepStoreFiles()
        let damages = [
            "UPDATE effects SET data = '{}'",
            "UPDATE effects SET data = '[1, 2'",
            "UPDATE effects SET data = json_remove(data, '$.runId')",
            "UPDATE effects SET data = json_set(data, '$.inputs', 'x')",
            "UPDATE effects SET data = json_set(data, '$.kind', 7)",
            "UPDATE effects SET answerKey = 'submit:run-77'",
            "UPDATE effects SET answerKey = NULL",
            "UPDATE effects SET type = 'remote.teleport'",
            "UPDATE effects SET type = 'remote.poll'",
            "UPDATE effects SET type = 'cache.evict'",
            // Every other type's members, which a submit's body lacks (or its answer key, for local.run).
            "UPDATE effects SET type = 'remote.download'",
            "UPDATE effects SET type = 'remote.cancel'",
            "UPDATE effects SET type = 'notify'",
            "UPDATE effects SET type = 'notify.withdraw'",
            "UPDATE effects SET type = 'local.run'",
        ]
        for damage in damages {
            try restore()
            try tamper(damage)
            XCTAssertThrowsError(try open(), damage) { error in
                XCTAssertEqual((error as? EngineError)?.status, .store, damage)
                XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", damage)
                XCTAssertTrue((error as? EngineError)?.message.contains("stored effect e-") == true, "\(error)")
            }
        }
        // Undamaged, the same store opens and hands the submit out again.
        try restore()
        let b = try open()
        let taken = try b.callOrThrow("effects.take")["effects"]?.arrayValue ?? []
        XCTAssertEqual(taken.map { $0["type"] }, ["remote.submit"])
        b.close()
    }

    /// Found by damaged stores (seed 593 of six hundred): a killed process left a workflow's
    /// progress in the journal, and another program changed that workflow's id in its table (to
    /// the real 1.5). Replaying the journal wrote the workflow's row again, which the table
    /// refused (its `seq` taken by the changed row), and the open failed with `storeOpenFailed`,
    /// as if the file could not be opened at all. Rows the engine writes never break the tables'
    /// constraints unless the tables were changed behind its back: `storeCorrupt`.
    func testAJournalThatNoLongerFitsTheTablesChangedBehindItIsCorrupt() throws {
        let a = try Engine(configJSON: ["store": .string(path), "backgroundWrites": false,
                                        "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"]])
        _ = try startedWorkflow(a)  // its workflow row is updated through the journal
        let killed = NSTemporaryDirectory() + "wf-integrity-killed-\(UUID().uuidString).sqlite"
        defer { for file in Engine.storeFiles(killed) { try? FileManager.default.removeItem(atPath: file) } }
        for (from, to) in zip(Engine.storeFiles(path), Engine.storeFiles(killed))
        where !from.hasSuffix("-shm") && FileManager.default.fileExists(atPath: from) {
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
        a.close()
        XCTAssertGreaterThan((try? FileManager.default.attributesOfItem(atPath: killed + "-wfjournal")[.size] as? Int) ?? 0, 0,
                             "the kill left entries in the journal")
        let queue = try DatabaseQueue(path: killed)
        try queue.write { db in try db.execute(sql: "UPDATE workflows SET workflowId = 1.5") }
        try queue.close()
        XCTAssertThrowsError(try Engine(configJSON: ["store": .string(killed)])) { error in
            XCTAssertEqual((error as? EngineError)?.status, .store)
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt", "\(error)")
        }
    }

    /// Found by damaged stores (seed 6307 of the 6000s): an await's run id edited to a run that
    /// does not exist. Its expiry timer fired, found no run to settle, and fired again, until
    /// `clock.advance` gave up with `WF_EINTERNAL timerStuck`. An await names an interactive run
    /// of its node, as the rules file it: one that does not is `storeCorrupt` when its workflow
    /// is read, and a call over every workflow leaves that workflow out.
    func testAnAwaitNamingNoRunOfItsNodeIsCorruptWhenItsWorkflowIsRead() throws {
        for damage in ["UPDATE awaits SET runId = 'x'", "UPDATE awaits SET nodeId = 'up'"] {
            let a = try open()
            try a.callOrThrow("tool.register", ["kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]])
            let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                           "nodes": [["id": "ask", "kind": "UserMaskEditor", "outputs": ["mask": "MaskRef"],
                                      "await": ["type": "draw_mask", "expiresIn": "PT1M"]],
                                     ["id": "up", "kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]]]
            let tpl = try a.callOrThrow("template.register", ["template": t])["templateId"]!
            let wf = try a.callOrThrow("workflow.create", ["templateId": tpl])["workflowId"]!
            a.close()
            try tamper(damage)
            let b = try open()
            guard case let .failure(e) = b.call("workflow.get", ["workflowId": wf]) else { return XCTFail("read a damaged workflow") }
            XCTAssertEqual(e.code, "storeCorrupt", "\(damage): \(e)")
            XCTAssertTrue(e.message.contains("not an interactive run of node"), e.message)
            if case let .failure(e) = b.call("clock.advance", ["seconds": 120]) {
                XCTAssertNotEqual(e.status, .internal, "\(damage): \(e)")
            }
            b.close()
            tearDown()
        }
    }

    /// Found by damaged stores (seed 2246 of three thousand): bits flipped in the schema's text
    /// renamed a column of `assets`, and reading an asset failed with `storeReadFailed`, as if
    /// the disk had failed once. A table or column gone is a schema no longer the engine's:
    /// `storeCorrupt`, whichever read finds it.
    func testAColumnRenamedBehindTheEnginesBackIsCorruptWhenRead() throws {
        let a = try open()
        _ = try startedWorkflow(a, run: false)
        a.close()
        try tamper("ALTER TABLE assets RENAME COLUMN createdAt TO createdAx")
        let b = try open()
        guard case let .failure(e) = b.call("asset.get", ["assetId": "as-1"]) else { return XCTFail("read a damaged table") }
        XCTAssertEqual(e.status, .store)
        XCTAssertEqual(e.code, "storeCorrupt", "\(e)")
        b.close()
    }

    /// A call whose commit fails (the disk refuses every write: the process's file size limit,
    /// as a full disk would) leaves nothing behind in memory either: the poll timer the call took
    /// out of the queue to fire is put back, so the next `clock.advance` still polls the job
    /// (DESIGN §5: a failure leaves nothing half-written; a live job is never given up).
    func testACommitTheDiskRefusesPutsBackTheTimersItTookSoPollingGoesOn() throws {
        let h = try Harness(file: true)
        h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        let deadline = h.call("engine.nextDeadline")["at"]
        XCTAssertNotEqual(deadline, .null)
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        // A write past the limit fails with EFBIG instead of ending the process.
        let handler = signal(SIGXFSZ, SIG_IGN)
        var limit = saved
        limit.rlim_cur = 1
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let result = h.engine.call("clock.advance", ["seconds": 11.5])
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        signal(SIGXFSZ, handler)
        guard case .failure(let error) = result else { return XCTFail("the commit should have failed: \(result)") }
        XCTAssertEqual(error.code, "storeWriteFailed")
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], deadline, "the poll is still due")
        h.advance(11.5)
        XCTAssertEqual(h.effects("remote.poll").count, 1, "the job is polled")
    }
}

/// What threads opening engines at once got, gathered under a lock.
private final class OpenResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<Engine, Error>] = []

    func add(_ result: Result<Engine, Error>) { lock.withLock { results.append(result) } }

    var all: [Result<Engine, Error>] { lock.withLock { results } }
}
