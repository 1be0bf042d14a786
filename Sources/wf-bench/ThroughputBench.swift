import Foundation
import GRDB
import WorkflowCore
import WorkflowEngine
import WorkflowStore

/// Issue 3's durable throughput: 1,000 workflows of a 20-node DAG of pure local tools, driven to
/// completion through the engine with a file store (every call one committed transaction),
/// against the raw SQLite transaction rate of the same machine, measured in the same run.
enum ThroughputBench {
    static func run(workflows: Int = 1000, nodes: Int = 20) {
        print("throughput: \(workflows) workflows × \(nodes)-node DAG of pure local tools, file store (WAL, synchronous=NORMAL)")
        let raw = rawTransactionRate()
        print(String(format: "  raw SQLite transactions (baseline)   %8.0f tx/s", raw))
        // What the goal is up against: SQLite alone writing the rows the batched drive writes.
        let rows = RowFloor.rate(workflows: workflows, nodes: nodes)
        print(String(format: "  SQLite alone writing a batched completion's ten rows (baseline) %8.0f /s (%.1f µs each)",
                     rows.rate, rows.micros))
        for batch in [false, true] {
            let r = drive(workflows: workflows, nodes: nodes, memory: false, batch: batch)
            let how = batch ? "batched (one transaction per take)" : "one call and one transaction each"
            let floor = batch ? String(format: ", %.2f× the rows alone", r.rate / rows.rate) : ""
            print(String(format: "  node completions, %@ %8.0f /s = %.2f× the raw transaction rate%@ (CPU %.0f µs each, %.0f µs of it the calling thread's); goal ≥ 25,000/s: %@",
                         how, r.rate, r.rate / raw, floor, r.cpuMicros, r.threadMicros, Measure.verdict(r.rate >= 25_000)))
        }
        // Diagnostic: the same batched drive on an in-memory store, to split engine and file costs.
        let m = drive(workflows: workflows, nodes: nodes, memory: true, batch: true)
        print(String(format: "  (diagnostic) batched, in-memory store %8.0f /s (CPU %.0f µs each)", m.rate, m.cpuMicros))
    }

    /// The batched drive alone, on an in-memory store: what a profiler should look at.
    static func profile(workflows: Int = 1000, nodes: Int = 20) {
        let r = drive(workflows: workflows, nodes: nodes, memory: true, batch: true)
        print(String(format: "throughput-memory: %d node completions, batched, in-memory store: %.0f /s (CPU %.0f µs each)",
                     workflows * nodes, r.rate, r.cpuMicros))
    }

    /// Both drives on a file store, fewer workflows: for profilers looking at the file's costs.
    static func profileFile(workflows: Int = 200, nodes: Int = 20) {
        // WF_BENCH_DRIVE=batched or =single runs one of the two (a profiler's run is long);
        // WF_BENCH_WORKFLOWS sets how many workflows (1000 for `throughput`'s own working set).
        let env = ProcessInfo.processInfo.environment
        let only = env["WF_BENCH_DRIVE"]
        let workflows = env["WF_BENCH_WORKFLOWS"].flatMap { Int($0) }.map { max(1, $0) } ?? workflows
        for batch in [false, true] where only == nil || only == (batch ? "batched" : "single") {
            let r = drive(workflows: workflows, nodes: nodes, memory: false, batch: batch)
            print(String(format: "throughput-file: %d node completions, %@, file store: %.0f /s (CPU %.0f µs each, the calling thread %.0f µs)",
                         workflows * nodes, batch ? "batched" : "one call each", r.rate, r.cpuMicros, r.threadMicros))
        }
    }

    /// Drives the workflows to completion; returns node completions per second of wall time, and
    /// the CPU time each took.
    static func drive(workflows: Int, nodes: Int, memory: Bool, batch: Bool) -> (rate: Double, cpuMicros: Double, threadMicros: Double) {
        let path = memory ? ":memory:" : Driver.tempStore("throughput")
        defer { if !memory { Driver.remove(path) } }
        let d = Driver.open(store: path, extra: ["concurrency": ["local": 64]])
        let ids = d.startPureDAGs(workflows, nodes: nodes)
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = Measure.cpuSeconds()
        let threadStart = Measure.threadCPUSeconds()
        var completed = 0
        while true {
            let n = d.completeLocalRuns(batch: batch)
            if n == 0 { break }
            completed += n
        }
        var seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        var cpu = Measure.cpuSeconds() - cpuStart
        var threadCPU = Measure.threadCPUSeconds() - threadStart
        let done = ids.filter { d.call("workflow.get", ["workflowId": $0])["status"] == "done" }.count
        guard done == workflows, completed == workflows * nodes else {
            fatalError("wf-bench: only \(done) of \(workflows) workflows finished (\(completed) completions)")
        }
        // Closing writes what the store's journal still holds to its tables: part of the work.
        let closeStart = DispatchTime.now().uptimeNanoseconds
        let closeCPU = Measure.cpuSeconds()
        let closeThreadCPU = Measure.threadCPUSeconds()
        d.engine.close()
        seconds += Double(DispatchTime.now().uptimeNanoseconds - closeStart) / 1e9
        cpu += Measure.cpuSeconds() - closeCPU
        threadCPU += Measure.threadCPUSeconds() - closeThreadCPU
        return (Double(completed) / seconds, cpu / Double(completed) * 1e6, threadCPU / Double(completed) * 1e6)
    }

    /// Small write transactions per second on a file database with the engine's settings.
    static func rawTransactionRate() -> Double {
        let path = Driver.tempStore("raw")
        defer { Driver.remove(path) }
        do {
            let q = try Driver.rawDatabase(path)
            try q.write { db in
                try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            }
            let n = 20_000
            let start = DispatchTime.now().uptimeNanoseconds
            for i in 0..<n {
                try q.inTransaction { db in
                    try db.execute(sql: "INSERT INTO t (id, v) VALUES (?, ?)", arguments: [i, "value \(i)"])
                    return .commit
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            try q.close()
            return Double(n) / seconds
        } catch {
            fatalError("wf-bench: raw SQLite baseline failed: \(error)")
        }
    }
}
