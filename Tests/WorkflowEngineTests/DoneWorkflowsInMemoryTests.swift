import WorkflowCore
import XCTest

@testable import WorkflowEngine

/// A host that reads many finished workflows (a history or a gallery) must not grow the engine
/// without bound: beyond `memory.doneWorkflows`, the least recently used done workflows leave
/// memory between calls and are read from the store again, the same, when needed. Workflows
/// with work going on stay loaded whatever the number.
final class DoneWorkflowsInMemoryTests: XCTestCase {
    static let chain: JSON = [
        "schema": "app.workflow/v2", "name": "Text chain",
        "nodes": [
            ["id": "text1", "kind": "Text", "params": ["text": "hello"], "outputs": ["text": "TextRef"]],
            ["id": "upper1", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
        ],
        "edges": [["from": ["text1", "text"], "to": ["upper1", "text"]]],
    ]

    /// `count` workflows of the chain, run to `done` by a host answering every `local.run`.
    func finishedWorkflows(_ h: Harness, _ count: Int) -> [String] {
        h.register(tool: "Text", outputs: ["text": "TextRef"])
        h.register(tool: "Uppercase", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        let tpl = h.register(template: Self.chain)
        let ids = (0..<count).map { _ in h.create(tpl) }
        for id in ids { h.call("workflow.runAllReady", ["workflowId": .string(id)]) }
        while case let effects = h.take(), !effects.isEmpty {
            for e in effects where e["type"] == "local.run" { h.call("local.completed", TextTools.run(e).objectValue ?? [:]) }
        }
        for id in ids { XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(id)])["status"], "done") }
        return ids
    }

    func testDoneWorkflowsBeyondTheConfiguredNumberLeaveMemoryAndReadBackTheSameFromTheStore() throws {
        for file in [false, true] {
            let h = try Harness(file: file, extra: ["memory": ["doneWorkflows": 3]])
            let ids = finishedWorkflows(h, 60)
            var first: [String: JSON] = [:]
            for id in ids {
                first[id] = h.call("workflow.get", ["workflowId": .string(id)])
                XCTAssertLessThanOrEqual(h.engine.state.loadedWorkflows.count, 3, "file: \(file)")
            }
            // Read again, each comes back from the store as it was; so do its runs and outputs.
            for id in ids {
                XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(id)]), first[id], "\(id) (file: \(file))")
                let history = h.call("node.history", ["workflowId": .string(id), "nodeId": "upper1"])["runs"]?.arrayValue
                XCTAssertEqual(history?.count, 1)
                let output = h.node(id, "upper1")["outputs"]?["text"]?.stringValue ?? ""
                XCTAssertEqual(TextAsset.text(h.call("asset.get", ["assetId": .string(output)])["uri"]?.stringValue ?? ""), "HELLO")
            }
            // A dropped workflow runs again like any other.
            let again = try XCTUnwrap(ids.first)
            XCTAssertNil(h.engine.state.loadedWorkflows[again], "the least recently read is not in memory")
            let output = try XCTUnwrap(h.engine.store.loadWorkflow(again)?.nodes[1].outputs["text"])
            XCTAssertNil(h.engine.state.assets[output], "nor are the assets it refers to")
            let run = h.call("node.run", ["workflowId": .string(again), "nodeId": "upper1"])
            XCTAssertEqual(run["state"], "runningLocal")
            XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(again)])["status"], "active")
        }
    }

    func testTheMostRecentlyReadDoneWorkflowsAreTheOnesKept() throws {
        let h = try Harness(extra: ["memory": ["doneWorkflows": 8]])
        let ids = finishedWorkflows(h, 30)
        // Every workflow read, then two of them again: the next drop keeps those two among the
        // eight (8 + 8 / 4 = 10 may be loaded between drops).
        for id in ids + [ids[4], ids[7]] {
            h.call("workflow.get", ["workflowId": .string(id)])
            XCTAssertLessThanOrEqual(h.engine.state.loadedWorkflows.count, 10)
        }
        h.engine.state.dropLeastRecentlyUsed(keeping: 2)  // what a call past the margin does, with 2
        XCTAssertEqual(Set(h.engine.state.quietLoaded.keys), [ids[4], ids[7]])
        XCTAssertEqual(Set(h.engine.state.loadedWorkflows.keys), [ids[4], ids[7]])
    }

    func testWorkflowsWithWorkGoingOnStayLoadedWhateverTheNumber() throws {
        let h = try Harness(extra: ["memory": ["doneWorkflows": 0], "concurrency": ["local": 64]])
        h.register(tool: "Text", outputs: ["text": "TextRef"])
        h.register(tool: "Uppercase", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        let tpl = h.register(template: Self.chain)
        let ids = (0..<40).map { _ in h.create(tpl) }
        for id in ids { h.call("workflow.runAllReady", ["workflowId": .string(id)]) }
        XCTAssertEqual(h.engine.state.loadedWorkflows.count, 40, "every workflow has a local run going")
        XCTAssertTrue(h.engine.state.quietLoaded.isEmpty)
        // Finished, they are quiet: with none kept, the next calls drop them.
        while case let effects = h.take(), !effects.isEmpty {
            for e in effects where e["type"] == "local.run" { h.call("local.completed", TextTools.run(e).objectValue ?? [:]) }
        }
        XCTAssertEqual(h.engine.state.loadedWorkflows.count, 0)
        XCTAssertEqual(h.call("workflow.list")["rows"]?.arrayValue?.count, 40, "the list reads summaries, not workflows")
    }

    func testADoneWorkflowWithAnAwaitInTheActionCenterStaysLoaded() throws {
        let h = try Harness(extra: ["memory": ["doneWorkflows": 0]])
        h.register(tool: "Text", outputs: ["text": "TextRef"])
        let tpl = h.register(template: [
            "schema": "app.workflow/v2", "name": "Approve, then run",
            "nodes": [["id": "text1", "kind": "Text", "params": ["text": "hi"], "outputs": ["text": "TextRef"],
                       "await": ["type": "confirm_params"]]],
        ])
        let wf = h.create(tpl)
        let awaitId = try XCTUnwrap(h.node(wf, "text1")["awaitId"])
        h.call("await.complete", ["awaitId": awaitId, "result": ["params": ["text": "hello"]]])
        for e in h.take() where e["type"] == "local.run" { h.call("local.completed", TextTools.run(e).objectValue ?? [:]) }
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
        // The done await stays in the Action Center (7 days): the workflow is not quiet yet.
        XCTAssertEqual(h.call("await.list")["done"]?.arrayValue?.count, 1)
        XCTAssertNotNil(h.engine.state.loadedWorkflows[wf])
        XCTAssertNil(h.engine.state.quietLoaded[wf])
        // Once its await has left the Action Center, the workflow is quiet: the first to go.
        h.advance(8 * 86_400)
        XCTAssertEqual(h.call("await.list")["done"]?.arrayValue?.count, 0)
        XCTAssertNil(h.engine.state.loadedWorkflows[wf])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
    }

    func testTheNumberOfDoneWorkflowsKeptIsAConfigKeyCheckedLikeTheOthers() {
        for (value, accepted) in [(JSON.int(0), true), (.int(10_000_000), true), (.int(-1), false), (.double(2.5), false),
                                  ("many", false), (.int(10_000_001), false)] {
            let result = Result { () throws(EngineError) in try EngineConfig.parse(["memory": ["doneWorkflows": value]]) }
            switch result {
            case .success(let c):
                XCTAssertTrue(accepted, "\(value) should be refused")
                XCTAssertEqual(c.doneWorkflowsInMemory, value.intValue.map(Int.init))
            case .failure(let e):
                XCTAssertFalse(accepted, "\(value) should be accepted: \(e)")
                XCTAssertEqual(e.code, "invalidConfig")
                XCTAssertEqual(e.details["argument"], "config.memory.doneWorkflows")
            }
        }
        let unknown = Result { () throws(EngineError) in try EngineConfig.parse(["memory": ["workflows": 3]]) }
        guard case .failure(let e) = unknown else { return XCTFail("memory.workflows should be refused") }
        XCTAssertEqual(e.details["argument"], "config.memory.workflows")
        XCTAssertEqual(EngineConfig().doneWorkflowsInMemory, 256)
    }
}
