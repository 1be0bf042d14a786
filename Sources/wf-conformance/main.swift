// wf-conformance: replays conformance fixtures (shared/conformance/FORMAT.md) through the Swift
// host and prints one line per fixture, `PASS name` or `FAIL name: step N (op): what differed`,
// then `N passed, N failed`. Exits 0 only when nothing failed (1 otherwise, 2 for bad usage).

import Foundation
import WorkflowConformance

let usage = """
    usage: wf-conformance PATH...
      Runs every fixture in the given files and folders (folders: every *.json under them,
      recursively, sorted by path) on the Swift host.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("-h") || arguments.contains("--help") {
    print(usage)
    exit(0)
}
guard !arguments.isEmpty else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}

let files: [String]
do {
    files = try ConformanceSuite.fixtureFiles(arguments)
} catch {
    FileHandle.standardError.write(Data("wf-conformance: \(error.message)\n\(usage)\n".utf8))
    exit(2)
}
let tally = ConformanceSuite.run(files: files, host: SwiftHost()) { result in
    print(result.line)
    fflush(nil)  // each line as soon as it is decided, even into a pipe
}
print(tally.line)
exit(tally.failed == 0 ? 0 : 1)
