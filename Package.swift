// swift-tools-version:6.0
import PackageDescription

// Layers point one way (docs/ARCHITECTURE.md):
//   WorkflowCore  <-  WorkflowStore  <-  WorkflowEngine  <-  WorkflowCAPI (libworkflow.so)
//   WorkflowCore  <-  WorkflowTools (the Swift Tool SDK and the built-in text tools)
// Core is sans-IO; Store persists through GRDB; Engine is the facade and op dispatcher;
// the C API converts Jansson values and catches every error at the boundary.
let package = Package(
    name: "workflow",
    products: [
        .library(name: "workflow", type: .dynamic, targets: ["WorkflowCAPI"]),
        .library(name: "WorkflowEngine", targets: ["WorkflowEngine"]),
        .library(name: "WorkflowTools", targets: ["WorkflowTools"]),
        .executable(name: "wf-bench", targets: ["wf-bench"]),
        .executable(name: "wf-conformance", targets: ["wf-conformance"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // glibc's mallinfo2, for wf-bench's memory figures.
        .systemLibrary(name: "CMallocInfo"),
        .target(
            name: "WorkflowCore",
            dependencies: [
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "WorkflowStore",
            dependencies: [
                "WorkflowCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "WorkflowEngine",
            dependencies: [
                "WorkflowCore",
                "WorkflowStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "WorkflowTools",
            dependencies: ["WorkflowCore"]
        ),
        .target(
            name: "WorkflowCAPI",
            dependencies: ["CJansson", "WorkflowCore", "WorkflowEngine"],
            linkerSettings: [
                // A SONAME so the dynamic linker and find_library locate it; nodelete because
                // Swift runtime threads outlive an engine, so the library must never be unloaded.
                .unsafeFlags(["-Xlinker", "-soname=libworkflow.so", "-Xlinker", "-z", "-Xlinker", "nodelete"]),
            ]
        ),
        .target(
            name: "WorkflowConformance",
            dependencies: ["WorkflowCore", "WorkflowEngine"]
        ),
        .executableTarget(
            name: "wf-conformance",
            dependencies: ["WorkflowConformance"]
        ),
        .executableTarget(
            name: "wf-bench",
            dependencies: ["CJansson", "CMallocInfo", "WorkflowCore", "WorkflowStore", "WorkflowEngine", "WorkflowCAPI",
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "WorkflowCoreTests", dependencies: ["WorkflowCore"]),
        .testTarget(name: "WorkflowStoreTests", dependencies: ["WorkflowStore", "WorkflowCore"]),
        // GRDB: the store-integrity tests change a store's rows behind the engine's back.
        .testTarget(name: "WorkflowEngineTests", dependencies: ["WorkflowEngine", "WorkflowCore", "WorkflowStore", "WorkflowTools",
                                                               .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "WorkflowToolsTests", dependencies: ["WorkflowTools", "WorkflowEngine", "WorkflowCore"]),
        .testTarget(name: "WorkflowCAPITests", dependencies: ["WorkflowCAPI", "CJansson", "WorkflowCore"]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["WorkflowConformance"],
            path: "Tests/ConformanceTests"
        ),
    ]
)
