// wf-bench: the speed goals of the issues, each printed as a figure next to a baseline measured
// in the same run. Build it in release: `swift run -c release wf-bench [name…]`.

import Foundation

/// Every benchmark runs when none is named, except the profiling aids (`onlyByName`).
let benchmarks: [(name: String, onlyByName: Bool, run: () -> Void)] = [
    ("validate", false, { ValidationBench.run(repeats: 15) }),
    ("throughput", false, { ThroughputBench.run() }),
    // The batched drive alone on an in-memory store, for profilers: instruction counts under
    // callgrind are steady where times are not (docs/BENCHMARKS.md).
    ("throughput-memory", true, { ThroughputBench.profile() }),
    // Both drives on a file store, 200 workflows: where the file's costs go, under a profiler.
    ("throughput-file", true, { ThroughputBench.profileFile() }),
    ("rehydration", false, { RehydrationBench.run() }),
    // The 100-workflow store alone: its opens under a profiler, or timed again on a noisy machine.
    ("rehydration-100", true, { RehydrationBench.run(sizes: [(100, 0.020)]) }),
    ("events", false, { EventBench.run() }),
    // One size alone, for profilers (the measured call is `EventBench.update`) and for timing
    // the two sizes in separate processes.
    ("events-1000", true, { EventBench.runOne(jobs: 1_000) }),
    ("events-100000", true, { EventBench.runOne(jobs: 100_000) }),
    ("timers", false, { TimerBench.run() }),
    ("views", false, { ViewsBench.run() }),
    ("memory", false, { MemoryBench.run() }),
    ("scale", false, { ScaleBench.run() }),
    ("store", false, {
        StoreBench.run(memory: true)
        StoreBench.run(memory: false)
        StoreBench.run(memory: true, effects: false)
        StoreBench.run(memory: false, effects: false)
    }),
]

let arguments = Array(CommandLine.arguments.dropFirst())
let known = benchmarks.map(\.name)
if let unknown = arguments.first(where: { !known.contains($0) }) {
    FileHandle.standardError.write(Data("wf-bench: unknown benchmark '\(unknown)'; known: \(known.joined(separator: ", "))\n".utf8))
    exit(2)
}
for benchmark in benchmarks where arguments.isEmpty ? !benchmark.onlyByName : arguments.contains(benchmark.name) {
    benchmark.run()
}
