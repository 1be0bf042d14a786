import Foundation
import GRDB
import WorkflowCore
import WorkflowEngine
import WorkflowStore

/// Issue 3's rehydration: reopening a file store of 10,000 workflows, half of them mid-run (jobs
/// in flight and polling, local runs queued or running), in ≤ 1 s; 100 workflows in ≤ 20 ms.
/// The baseline is SQLite alone running the same queries over the same file in the same run,
/// stepping every row without decoding it.
enum RehydrationBench {
    /// Caps that let many jobs be in flight at once, as on a host with a generous provider quota.
    static let config: JSONObject = ["concurrency": ["remote": 2_000, "local": 16]]

    static func run(sizes: [(workflows: Int, goalSeconds: Double)] = [(100, 0.020), (10_000, 1.0)]) {
        print("rehydration: reopen a file store, half the workflows mid-run (20-node DAG, every fifth node remote)")
        for (count, goal) in sizes {
            let path = Driver.tempStore("rehydrate")
            defer { Driver.remove(path) }
            build(path: path, workflows: count)
            let raw = Measure.median(repeats: 5) { rawRead(path) }
            let snapshot = Measure.median(repeats: 5) { _ = try! SQLiteStore(path: path).loadSnapshot() }
            // Each open works on a fresh copy: reopening marks running local runs interrupted, and
            // the next open would otherwise find nothing to repair.
            var samples: [Double] = []
            for i in 0..<6 {
                let copy = Driver.tempStore("rehydrate-copy")
                defer { Driver.remove(copy) }
                copyStore(from: path, to: copy)
                let start = DispatchTime.now().uptimeNanoseconds
                let d = Driver.open(store: copy, extra: config)
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                if i == 0 { verify(d, workflows: count) } else { samples.append(elapsed) }  // the first warms up
                d.engine.close()
            }
            let open = Measure.percentile(samples, 50)
            print(String(format: "  %6d workflows (%@): SQLite reading the same rows (baseline) %@, store snapshot %@ (%.1f×), "
                         + "engine open %@ = %.1f× the baseline; goal ≤ %@: %@",
                         count, inFlight(path), Measure.ms(raw), Measure.ms(snapshot), snapshot / raw, Measure.ms(open), open / raw,
                         Measure.ms(goal), Measure.verdict(open <= goal)))
            for background in [false, true] {
                let killed = openAfterKill(path, background: background)
                let how = background ? "the journal folded by its own thread (the default)"
                    : "the journal folded by the engine's thread when full (\"backgroundWrites\": false)"
                print(String(format: "          after a kill amid progress reports, %@, %d commits unfolded: engine open %@ = %.1f× the baseline; goal ≤ %@: %@",
                             how, killed.entries, Measure.ms(killed.seconds), killed.seconds / raw, Measure.ms(goal),
                             Measure.verdict(killed.seconds <= goal)))
            }
            let full = openAfterKillWithAFullJournal(path)
            print(String(format: "          after a kill with the journal at its limits (batched progress reports of every job, %d commits, %d rows unfolded): engine open %@ = %.1f× the baseline; goal ≤ %@: %@",
                         full.entries, full.rows, Measure.ms(full.seconds), full.seconds / raw, Measure.ms(goal),
                         Measure.verdict(full.seconds <= goal)))
        }
    }

    /// A store of `workflows` workflows: the first half run partway, the second half created idle.
    static func build(path: String, workflows: Int) {
        let d = Driver.open(store: path, extra: config)
        Population.registerTools(d)
        let tpl = d.call("template.register", ["template": Population.mixedDAG(nodes: 20)])["templateId"]!
        let ids = Population.create(d, templateId: tpl, count: workflows)
        Population.runPartway(d, Array(ids.prefix(workflows / 2)), rounds: 3)
        d.engine.close()
    }

    /// "N jobs in flight, M local runs queued or running", read with SQLite.
    static func inFlight(_ path: String) -> String {
        let q = try! DatabaseQueue(path: path)
        defer { try? q.close() }
        return try! q.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(jobId), COUNT(*) - COUNT(jobId) FROM runs
                WHERE status <> 'succeeded' AND status <> 'failed' AND status <> 'cancelled' AND status <> 'skipped'
                """)!
            let jobs: Int = row[0]
            let local: Int = row[1]
            return "\(jobs) jobs in flight, \(local) other runs unfinished"
        }
    }

    /// The realistic reopen: the process was killed after a stream of progress reports, one call
    /// each (1,023 of them). With the journal folded on the engine's thread (`background` false)
    /// it holds what came after the last fold, up to 1,024 rows; with its own thread folding it
    /// (the default), what that thread had not folded yet. Times opening a copy of the files taken
    /// while the engine was still open (its writes held, as a kill leaves them), replay included.
    static func openAfterKill(_ path: String, background: Bool) -> (entries: Int, seconds: Double) {
        let jobs: [String] = try! DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT jobId FROM runs WHERE jobId IS NOT NULL AND status IN ('submitted', 'running')")
        }
        let live = Driver.tempStore("rehydrate-live")
        defer { Driver.remove(live) }
        copyStore(from: path, to: live)
        var liveConfig = config
        liveConfig["backgroundWrites"] = .bool(background)
        let d = Driver.open(store: live, extra: liveConfig)
        // Each report is one journaled commit of one run's row.
        for i in 0..<(SQLiteStore.defaultJournalLimit - 1) {
            let progress = Double(i / jobs.count + 1) / 100
            d.call("job.update", ["jobId": .string(jobs[i % jobs.count]), "status": "running", "progress": .double(progress)])
        }
        var samples: [Double] = []
        var entries = 0
        for i in 0..<4 {
            let copy = Driver.tempStore("rehydrate-killed")
            defer { Driver.remove(copy) }
            d.engine.withStoreWritesHeld { copyStore(from: live, to: copy) }
            if i == 0 { entries = unfoldedEntries(copy) }
            let start = DispatchTime.now().uptimeNanoseconds
            let reopened = Driver.open(store: copy, extra: config)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if i > 0 { samples.append(elapsed) }  // the first warms up
            reopened.engine.close()
        }
        d.engine.close()
        return (entries, Measure.percentile(samples, 50))
    }

    /// The slowest reopen after a kill: the process was killed with its journal as full as the
    /// store's limits let it (``SQLiteStore/defaultBackgroundJournalRowLimit`` rows, fewer than
    /// ``SQLiteStore/defaultBackgroundJournalLimit`` commits), which a load the folder cannot
    /// follow leaves: the folder is held while `batch` calls report a progress for every job in
    /// flight (one commit each), until the next would pass the rows limit. Times opening a copy
    /// of the files taken then, replay included.
    static func openAfterKillWithAFullJournal(_ path: String) -> (entries: Int, rows: Int, seconds: Double) {
        let jobs: [String] = try! DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT jobId FROM runs WHERE jobId IS NOT NULL AND status IN ('submitted', 'running')")
        }
        let live = Driver.tempStore("rehydrate-live")
        defer { Driver.remove(live) }
        copyStore(from: path, to: live)
        let d = Driver.open(store: live, extra: config)
        defer { d.engine.close() }
        return d.engine.withStoreFoldsHeld {
            var round = 0
            var batchRows = 0
            while true {
                let before = d.engine.storeBacklog
                guard before.rows + batchRows <= SQLiteStore.defaultBackgroundJournalRowLimit,
                      before.entries + 1 < SQLiteStore.defaultBackgroundJournalLimit else { break }
                round += 1
                let calls: [JSON] = jobs.map { job in
                    ["op": "job.update", "args": ["jobId": .string(job), "status": "running",
                                                  "progress": .double(Double(round) / 10_000)]]
                }
                d.call("batch", ["calls": .array(calls)])
                batchRows = max(batchRows, d.engine.storeBacklog.rows - before.rows)
            }
            var samples: [Double] = []
            let waiting = d.engine.storeBacklog
            for i in 0..<4 {
                let copy = Driver.tempStore("rehydrate-killed")
                defer { Driver.remove(copy) }
                d.engine.withStoreWritesHeld { copyStore(from: live, to: copy) }
                let start = DispatchTime.now().uptimeNanoseconds
                let reopened = Driver.open(store: copy, extra: config)
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                if i > 0 { samples.append(elapsed) }  // the first warms up
                reopened.engine.close()
            }
            return (waiting.entries, waiting.rows, Measure.percentile(samples, 50))
        }
    }

    /// Entries of the store's journal its tables do not hold yet.
    static func unfoldedEntries(_ path: String) -> Int {
        let folded = try! DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'journal.foldedThrough'").flatMap { Int64($0) } ?? 0
        }
        return JournalFile.entryNumbers(ofStore: path).filter { $0 > folded }.count
    }

    /// Copies a store's files (not the shared-memory indexes, which SQLite rebuilds), as they are.
    static func copyStore(from: String, to: String) {
        for (source, target) in zip(Engine.storeFiles(from), Engine.storeFiles(to))
        where !source.hasSuffix("-shm") && FileManager.default.fileExists(atPath: source) {
            try! FileManager.default.copyItem(atPath: source, toPath: target)
        }
    }

    /// The reopened engine sees every workflow, and the mid-run ones are still mid-run.
    static func verify(_ d: Driver, workflows: Int) {
        let all = d.call("workflow.list", ["limit": 1])["total"]?.intValue ?? -1
        let active = d.call("badges.get")
        guard all == Int64(workflows), active.objectValue != nil else {
            fatalError("wf-bench: the reopened store lists \(all) workflows, expected \(workflows)")
        }
    }

    /// The rows `loadSnapshot` reads, stepped through with SQLite alone.
    static func rawRead(_ path: String) {
        let queries = [
            "SELECT key, value FROM meta",
            "SELECT templateId, seq, name, createdAt, canonical, sourceSchema FROM templates ORDER BY seq",
            "SELECT spec, registeredAt FROM tools ORDER BY kind",
            "SELECT kind, params FROM provider_defaults",
            """
            SELECT workflowId, seq, templateId, title, status, archived, createdAt, updatedAt, stepsDone, stepsTotal,
                   awaitCount, hasBlockingAwait, searchText, nextDeadline, queuedRemote, queuedLocal, runningRemote,
                   runningLocal, inboxCount FROM workflows ORDER BY seq
            """,
            "SELECT seq, effectId, type, answerKey, taken, data FROM effects ORDER BY seq",
            "SELECT assetId, variant, bytes, lastUsedAt, pinned FROM cache_entries",
            """
            SELECT runId, workflowId, jobId FROM runs
            WHERE status <> 'succeeded' AND status <> 'failed' AND status <> 'cancelled' AND status <> 'skipped'
            """,
            "SELECT awaitId, workflowId FROM awaits WHERE status != 'done'",
        ]
        do {
            let q = try DatabaseQueue(path: path)
            var rows = 0
            try q.read { db in
                for sql in queries {
                    let cursor = try Row.fetchCursor(db, sql: sql)
                    while try cursor.next() != nil { rows += 1 }
                }
            }
            try q.close()
            if rows == 0 { fatalError("wf-bench: the store is empty") }
        } catch {
            fatalError("wf-bench: raw read failed: \(error)")
        }
    }
}
