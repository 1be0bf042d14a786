// wf-bench: the project's speed goals, measured. Each figure is reported as a ratio against a
// baseline measured in the same run. Build it in release: `swift run -c release wf-bench [name…]`.

let arguments = Array(CommandLine.arguments.dropFirst())
let all = ["validate"]
let selected = arguments.isEmpty ? all : arguments
for name in selected {
    switch name {
    case "validate": ValidationBench.run(repeats: 15)
    default:
        print("unknown benchmark '\(name)'; known: \(all.joined(separator: ", "))")
    }
}
