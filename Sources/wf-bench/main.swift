// wf-bench: the speed goals of the issues, each printed as a figure next to a baseline measured
// in the same run. Build it in release: `swift run -c release wf-bench [name…]`.

import Foundation

let benchmarks: [(name: String, run: () -> Void)] = [
    ("validate", { ValidationBench.run(repeats: 15) }),
    ("throughput", { ThroughputBench.run() }),
    ("rehydration", { RehydrationBench.run() }),
    ("events", { EventBench.run() }),
    ("views", { ViewsBench.run() }),
    ("store", {
        StoreBench.run(memory: true)
        StoreBench.run(memory: false)
    }),
]

let arguments = Array(CommandLine.arguments.dropFirst())
let known = benchmarks.map(\.name)
if let unknown = arguments.first(where: { !known.contains($0) }) {
    FileHandle.standardError.write(Data("wf-bench: unknown benchmark '\(unknown)'; known: \(known.joined(separator: ", "))\n".utf8))
    exit(2)
}
for benchmark in benchmarks where arguments.isEmpty || arguments.contains(benchmark.name) {
    benchmark.run()
}
