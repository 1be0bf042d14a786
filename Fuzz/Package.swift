// swift-tools-version:6.0
import PackageDescription

// Coverage-guided fuzzing of the engine through the C ABI with libFuzzer. A package of its own, so
// that the main package's build and tests never see `-sanitize=fuzzer`; `scripts/fuzz` builds and
// runs it (Fuzz/README.md).
let package = Package(
    name: "workflow-fuzz",
    dependencies: [.package(name: "workflow", path: "..")],
    targets: [
        .executableTarget(
            name: "wf-fuzz-calls",
            dependencies: [.product(name: "workflow", package: "workflow")]
        ),
    ]
)
