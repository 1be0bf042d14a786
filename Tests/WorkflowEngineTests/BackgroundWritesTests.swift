import Foundation
import WorkflowCore
@testable import WorkflowEngine
import XCTest

/// DESIGN §5 "a state change is durable before the call returns", with the store's journal: a
/// call's rows are in the journal when it returns, and the tables get them later (on the store's
/// own thread by default, `"backgroundWrites": false` on the caller's). Whatever the tables hold
/// at the moment of a kill, the next open finds every call that returned.
final class BackgroundWritesTests: XCTestCase {
    /// The store's files as a process killed now would leave them, in a new place.
    private func copyAsKilled(_ h: Harness) -> String {
        let copy = NSTemporaryDirectory() + "wf-killed-\(UUID().uuidString).sqlite"
        h.engine.withStoreWritesHeld {
            for (from, to) in zip(Engine.storeFiles(h.storePath!), Engine.storeFiles(copy))
            where !from.hasSuffix("-shm") && FileManager.default.fileExists(atPath: from) {
                try! FileManager.default.copyItem(atPath: from, toPath: to)
            }
        }
        return copy
    }

    private func open(_ path: String, _ h: Harness) throws -> Engine {
        var config = h.config
        config["store"] = .string(path)
        return try Engine(configJSON: .object(config))
    }

    /// The chain sample (Text → Uppercase → Append) run step by step, a copy taken after every
    /// call as a kill would leave it: every copy opens to the workflow the live engine shows.
    func testEveryCallThatReturnedSurvivesAKillWhateverTheTablesHold() throws {
        for background in [true, false] {
            let h = try Harness(file: true, extra: ["backgroundWrites": .bool(background)])
            Templates.registerTextTools(h)
            let wf = h.create(h.register(template: Templates.chain))
            h.call("workflow.runAllReady", ["workflowId": .string(wf)])
            var steps = 0
            repeat {
                let live = h.call("workflow.get", ["workflowId": .string(wf)])
                let copy = copyAsKilled(h)
                defer { for file in Engine.storeFiles(copy) { try? FileManager.default.removeItem(atPath: file) } }
                let reopened = try open(copy, h)
                var seen = try reopened.callOrThrow("workflow.get", ["workflowId": .string(wf)])
                // A local run that was running comes back interrupted: the rest is as it was.
                for (i, node) in (live["nodes"]?.arrayValue ?? []).enumerated() where node["state"] == "runningLocal" {
                    XCTAssertEqual(seen["nodes"]?[i]?["state"], "failed", "background \(background), step \(steps)")
                    seen = live
                }
                XCTAssertEqual(seen["nodes"], live["nodes"], "background \(background), step \(steps)")
                reopened.close()
                steps += 1
            } while h.runLocalTools() > 0
            XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
            XCTAssertGreaterThan(steps, 3)
        }
    }

    /// By default the store folds on a thread of its own; the option is a boolean.
    func testBackgroundWritesIsABooleanAndOnByDefault() throws {
        XCTAssertEqual(try EngineConfig.parse(nil).journalFolding, .background)
        XCTAssertEqual(try EngineConfig.parse(["backgroundWrites": false]).journalFolding, .whenFull)
        XCTAssertEqual(try EngineConfig.parse(["backgroundWrites": true]).journalFolding, .background)
        XCTAssertThrowsError(try EngineConfig.parse(["backgroundWrites": "yes"])) { error in
            XCTAssertEqual((error as? EngineError)?.code, "invalidConfig")
            XCTAssertEqual((error as? EngineError)?.details["argument"], "config.backgroundWrites")
        }
    }

    /// The files a store keeps, for hosts that copy or remove one.
    func testAFileStoreIsItsSQLiteFilesAndItsJournal() {
        XCTAssertEqual(Engine.storeFiles("/data/flows.sqlite"),
                       ["/data/flows.sqlite", "/data/flows.sqlite-wal", "/data/flows.sqlite-shm",
                        "/data/flows.sqlite-wfjournal"])
    }
}
