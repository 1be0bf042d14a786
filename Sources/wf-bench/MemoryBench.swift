import CMallocInfo
import Foundation
import WorkflowCore
import WorkflowEngine

/// What reading many finished workflows costs in memory (added 2026-11-25, no goal in an issue):
/// a host showing a history reads done workflows one after another, and a workflow's full state
/// once loaded used to stay for good. Baseline in the same run: the same reads with every done
/// workflow kept (`memory.doneWorkflows` at its maximum). Then the price of dropping them: a
/// second pass over the same workflows, which the default setting must load again from the store.
enum MemoryBench {
    static func run(workflows: Int = 2_000, nodes: Int = 20) {
        print("memory: read \(workflows) done workflows of \(nodes) nodes (workflow.get each, twice), file store")
        let path = Driver.tempStore("memory")
        defer { Driver.remove(path) }
        let ids = populate(path, workflows: workflows, nodes: nodes)
        let all = measure(path, ids, keep: 10_000_000)
        let bounded = measure(path, ids, keep: EngineConfig().doneWorkflowsInMemory)
        print(String(format: "  every done workflow kept (baseline): heap +%.1f MB; first pass %@ per read, second %@",
                     all.heapGrowth / 1e6, Measure.us(all.firstPass), Measure.us(all.secondPass)))
        print(String(format: "  default (%d kept):                   heap +%.1f MB (%.2f× the baseline); first pass %@ per read, second %@ (%.1f× the baseline)",
                     EngineConfig().doneWorkflowsInMemory, bounded.heapGrowth / 1e6, bounded.heapGrowth / all.heapGrowth,
                     Measure.us(bounded.firstPass), Measure.us(bounded.secondPass), bounded.secondPass / all.secondPass))
    }

    /// A file store of `workflows` pure DAGs run to `done`; returns their ids.
    static func populate(_ path: String, workflows: Int, nodes: Int) -> [String] {
        let d = Driver.open(store: path, extra: ["concurrency": ["local": 64]])
        let ids = d.startPureDAGs(workflows, nodes: nodes).compactMap(\.stringValue)
        while d.completeLocalRuns(batch: true) > 0 {}
        d.engine.close()
        return ids
    }

    /// Bytes of heap in use (glibc's `mallinfo2`; 0 elsewhere).
    static func heapInUse() -> Double {
        #if os(Linux)
        return Double(mallinfo2().uordblks)
        #else
        return 0
        #endif
    }

    /// Heap growth (bytes in use) after reading every workflow once, and the
    /// seconds per read of the first and of a second pass.
    static func measure(_ path: String, _ ids: [String], keep: Int) -> (heapGrowth: Double, firstPass: Double, secondPass: Double) {
        let d = Driver.open(store: path, extra: ["memory": ["doneWorkflows": .int(Int64(keep))]])
        defer { d.engine.close() }
        let before = heapInUse()
        func pass() -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            for id in ids {
                guard d.call("workflow.get", ["workflowId": .string(id)])["status"] == "done" else {
                    fatalError("wf-bench: \(id) is not done")
                }
            }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(ids.count)
        }
        let first = pass()
        let growth = heapInUse() - before
        return (growth, first, pass())
    }
}
