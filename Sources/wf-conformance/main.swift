// wf-conformance: replays conformance fixtures (shared/conformance/FORMAT.md) through the Swift
// host and prints one line per fixture, `PASS name` or `FAIL name: step N (op): what differed`,
// then `N passed, N failed`. Exits 0 only when nothing failed (1 otherwise, 2 for bad usage).

import Foundation
import WorkflowConformance

let usage = """
    usage: wf-conformance [--] PATH...
      Runs every fixture in the given files and folders (folders: every *.json under them,
      recursively, sorted by path) on the Swift host. "--" ends the options: every argument
      after it is a PATH, even one that starts with "-".
    """

func usageError(_ message: String?) -> Never {
    FileHandle.standardError.write(Data(((message.map { "wf-conformance: \($0)\n" } ?? "") + usage + "\n").utf8))
    exit(2)
}

// Options may stand anywhere before "--": -h and --help; any other argument starting with "-"
// is a usage error, as for the C and Python runners.
var arguments: [String] = []
var optionsOver = false
for argument in CommandLine.arguments.dropFirst() {
    if !optionsOver {
        if argument == "--" {
            optionsOver = true
            continue
        }
        if argument == "-h" || argument == "--help" {
            print(usage)
            exit(0)
        }
        if argument.hasPrefix("-"), argument != "-" { usageError("unknown option \(argument)") }
    }
    arguments.append(argument)
}
if arguments.isEmpty { usageError(nil) }

let files: [String]
do {
    files = try ConformanceSuite.fixtureFiles(arguments)
} catch {
    usageError(error.message)
}
let tally = ConformanceSuite.run(files: files, host: SwiftHost()) { result in
    print(result.line)
    fflush(nil)  // each line as soon as it is decided, even into a pipe
}
print(tally.line)
exit(tally.failed == 0 ? 0 : 1)
