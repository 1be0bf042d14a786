import Foundation
import GRDB
import WorkflowCore
import WorkflowEngine
import XCTest

/// The store is the engine's: a second engine on the same file, or rows changed behind its back,
/// end in a structured `WF_ESTORE` error, never in lost changes or a crash.
final class StoreIntegrityTests: XCTestCase {
    private var path = ""

    override func setUp() {
        path = NSTemporaryDirectory() + "wf-integrity-\(UUID().uuidString).sqlite"
    }

    override func tearDown() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private func open() throws -> Engine {
        try Engine(configJSON: ["store": .string(path), "clock": ["mode": "manual", "start": "2026-01-01T00:00:00.000Z"]])
    }

    /// Runs SQL on the store file as another program would.
    private func tamper(_ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }

    /// A one-node local workflow (Uppercase of a bound text), its run started unless `run` is
    /// false; returns its id.
    private func startedWorkflow(_ engine: Engine, run: Bool = true) throws -> String {
        try engine.callOrThrow("tool.register", ["kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "one",
                       "nodes": [["id": "up", "kind": "Up", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]]]
        let tpl = try engine.callOrThrow("template.register", ["template": t])["templateId"]!
        let wf = try engine.callOrThrow("workflow.create", ["templateId": tpl, "bindings": ["up": ["text": ["type": "TextRef", "uri": "file:///t"]]]])["workflowId"]!
        if run { try engine.callOrThrow("node.run", ["workflowId": wf, "nodeId": "up"]) }
        return wf.stringValue!
    }

    func testASecondEngineOnTheSameFileIsRefusedAtItsFirstWriteAndTheFirstKeepsItsChanges() throws {
        let a = try open()
        let wf = try startedWorkflow(a, run: false)  // nothing running: opening b writes nothing
        let b = try open()
        try a.callOrThrow("workflow.archive", ["workflowId": .string(wf)])
        let refused = b.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true])
        guard case let .failure(e) = refused else { return XCTFail("b's write was accepted: \(refused)") }
        XCTAssertEqual(e.status, .store)
        XCTAssertEqual(e.code, "storeInUse")
        try a.callOrThrow("workflow.setActive", ["workflowId": .string(wf)])  // a goes on
        a.close()
        b.close()
        let reopened = try open()
        let got = try reopened.callOrThrow("workflow.get", ["workflowId": .string(wf)])
        XCTAssertEqual(got["archived"], true, "a's change was not overwritten")
        XCTAssertEqual(got["pollingPaused"], false, "b's change was refused whole")
        reopened.close()
    }

    func testAnAbandonedEngineDoesNotStopTheNextFromWriting() throws {
        // What a killed process leaves: its engine never writes again.
        let a = try open()
        let wf = try startedWorkflow(a)
        let b = try open()
        try b.callOrThrow("workflow.archive", ["workflowId": .string(wf)])
        XCTAssertEqual(try b.callOrThrow("workflow.get", ["workflowId": .string(wf)])["archived"], true)
        withExtendedLifetime(a) {}
        b.close()
    }

    func testAStoreWhoseNodeRowsWereDeletedIsRefusedAsCorruptNotACrash() throws {
        let a = try open()
        _ = try startedWorkflow(a)
        a.close()
        try tamper("DELETE FROM nodes")
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.status, .store)
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt")
        }
    }

    func testAWorkflowWhoseNodeRowsWereDeletedIsCorruptWhenRead() throws {
        let a = try open()
        let wf = try startedWorkflow(a)
        try a.callOrThrow("node.cancel", ["workflowId": .string(wf), "nodeId": "up"])  // nothing to resume on open
        a.close()
        try tamper("DELETE FROM nodes")
        let b = try open()
        guard case let .failure(e) = b.call("workflow.get", ["workflowId": .string(wf)]) else { return XCTFail("read a damaged workflow") }
        XCTAssertEqual(e.code, "storeCorrupt")
        XCTAssertEqual(e.details["workflowId"], .string(wf))
        b.close()
    }

    func testACounterPushedToItsLimitIsRefusedAsCorruptNotAnOverflow() throws {
        let a = try open()
        _ = try startedWorkflow(a)
        a.close()
        try tamper("UPDATE meta SET value = '9223372036854775807' WHERE key LIKE 'counter.%'")
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual((error as? EngineError)?.code, "storeCorrupt")
        }
    }
}
