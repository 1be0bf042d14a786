import Foundation
import Logging
import WorkflowCore
import WorkflowEngine
import XCTest

/// Implementation plan (003) step 10, "Asset Storage & Garbage Collection": assets are counted as
/// referenced while any run, node or binding of a live workflow refers to them; "delete upstream →
/// orphaned child cleaned after threshold"; an asset shared by several workflows lives (and is
/// re-gated) with all of them; `assets.retentionDays` sets the threshold; logs name assets by id.
final class AssetRefcountTests: XCTestCase {
    /// One `Uppercase` node whose input is bound at creation.
    private static let boundConsumer: JSON = [
        "schema": "app.workflow/v2", "name": "bound consumer",
        "nodes": [["id": "U", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
    ]

    /// A → B → C ran once in a new workflow; returns its id.
    private func ranChain(_ h: Harness) -> String {
        let wf = h.create(h.register(template: Templates.chain))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for _ in 0..<3 { h.runLocalTools() }
        XCTAssertEqual(h.state(wf, "C"), "succeeded")
        return wf
    }

    private func outputs(_ h: Harness, _ wf: String) -> [String] {
        ["A", "B", "C"].map { h.node(wf, $0)["outputs"]!["text"]!.stringValue! }
    }

    private func gc(_ h: Harness) -> Set<String> {
        Set((h.call("assets.gc")["removed"]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    func testAnAssetBoundOrPinnedEarlierInTheSameBatchIsNotCollected() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: ["schema": "app.workflow/v2", "name": "one",
                                         "nodes": [["id": "A", "kind": "Uppercase", "inputs": ["text": "TextRef"],
                                                    "outputs": ["text": "TextRef"]]]])
        let bound = h.call("asset.import", ["type": "TextRef", "uri": "file:///bound"])["assetId"]!
        let pinned = h.call("asset.import", ["type": "TextRef", "uri": "file:///pinned"])["assetId"]!
        let loose = h.call("asset.import", ["type": "TextRef", "uri": "file:///loose"])["assetId"]!
        h.advance(8 * 86_400)
        let r = h.call("batch", ["calls": [
            ["op": "workflow.create", "args": ["templateId": .string(tpl), "bindings": ["A": ["text": ["assetId": bound]]]]],
            ["op": "asset.pin", "args": ["assetId": pinned, "pinned": true]],
            ["op": "assets.gc"],
        ]])
        XCTAssertEqual(r["results"]?[2]?["removed"], [loose])
        let wf = r["results"]![0]!["workflowId"]!
        XCTAssertEqual(h.call("node.get", ["workflowId": wf, "nodeId": "A"])["state"], "ready", "its bound input is there")
        XCTAssertEqual(h.call("asset.get", ["assetId": pinned])["pinned"], true)
    }

    func testDeletingTheUpstreamWorkflowOrphansItsAssetsWhichAreCollectedOnlyAfterTheThreshold() throws {
        let h = try Harness(extra: ["assets": ["retentionDays": 2]])
        Templates.registerTextTools(h)
        let wf = ranChain(h)
        let produced = outputs(h, wf)
        h.advance(3 * 86_400)
        XCTAssertEqual(gc(h), [], "referenced by a live workflow: kept however old")
        h.call("workflow.delete", ["workflowId": .string(wf)])
        h.advance(2 * 86_400 - 1)
        XCTAssertEqual(gc(h), [], "orphaned 1 s less than retentionDays")
        h.advance(2)
        XCTAssertEqual(gc(h), Set(produced), "every orphan, and nothing else")
        for id in produced { XCTAssertEqual(h.fail("asset.get", ["assetId": .string(id)]).code, "unknownAsset") }
        XCTAssertEqual(gc(h), [], "collected once")
    }

    func testAnAssetSharedWithAnotherWorkflowOutlivesItsProducerUntilTheLastReferenceGoes() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let producer = ranChain(h)
        let produced = outputs(h, producer)
        let shared = produced[2]
        let consumer = h.create(h.register(template: Self.boundConsumer), ["bindings": ["U": ["text": ["assetId": .string(shared)]]]])
        XCTAssertEqual(h.state(consumer, "U"), "ready")
        h.call("workflow.delete", ["workflowId": .string(producer)])
        h.advance(8 * 86_400)
        XCTAssertEqual(gc(h), Set(produced.prefix(2)), "the producer's other outputs go; the shared one stays")
        XCTAssertEqual(h.call("asset.get", ["assetId": .string(shared)])["provenance"]?["workflowId"], .string(producer),
                       "provenance still names the deleted producer")
        h.call("workflow.delete", ["workflowId": .string(consumer)])
        h.advance(7 * 86_400 - 1)
        XCTAssertEqual(gc(h), [], "retention restarts when the last reference goes")
        h.advance(2)
        XCTAssertEqual(gc(h), [shared])
    }

    func testAPinnedOrphanIsNeverCollectedAndAnUnpinnedOneIsOnceUnpinned() throws {
        let h = try Harness(extra: ["assets": ["retentionDays": 1]])
        let pinned = h.call("asset.import", ["type": "ImageRef", "uri": "file:///a.png"])["assetId"]!.stringValue!
        h.call("asset.pin", ["assetId": .string(pinned), "pinned": true])
        h.advance(30 * 86_400)
        XCTAssertEqual(gc(h), [])
        h.call("asset.pin", ["assetId": .string(pinned), "pinned": false])
        XCTAssertEqual(gc(h), [pinned])
    }

    func testDeletingASharedAssetRegatesEveryWorkflowThatRefersToIt() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        // The producer: A ran, B never did, so B is ready with A's output.
        let producer = h.create(h.register(template: Templates.chain))
        h.call("node.run", ["workflowId": .string(producer), "nodeId": "A"])
        h.runLocalTools()
        XCTAssertEqual(h.state(producer, "B"), "ready")
        let shared = h.node(producer, "A")["outputs"]!["text"]!
        let consumerTemplate = h.register(template: Self.boundConsumer)
        let first = h.create(consumerTemplate, ["bindings": ["U": ["text": ["assetId": shared]]]])
        let second = h.create(consumerTemplate, ["bindings": ["U": ["text": ["assetId": shared]]]])
        let other = h.create(consumerTemplate, ["bindings": ["U": ["text": TextAsset.json("other")]]])
        // After a reopen no workflow is in memory: the store has to find them.
        try h.reopen()
        h.call("asset.delete", ["assetId": shared])
        XCTAssertEqual(h.node(producer, "B")["blockedReason"]?["message"], "Waiting for text from 'A' (its output is gone)")
        for wf in [first, second] {
            XCTAssertEqual(h.state(wf, "U"), "blocked", wf)
            XCTAssertEqual(h.node(wf, "U")["blockedReason"]?["message"], "Waiting for text (the bound asset is gone)", wf)
            let e = h.fail("node.run", ["workflowId": .string(wf), "nodeId": "U"])
            XCTAssertEqual(e.code, "notReady")
        }
        XCTAssertEqual(h.state(other, "U"), "ready", "a workflow not using the asset is untouched")
        try h.crash()
        XCTAssertEqual(h.state(second, "U"), "blocked", "the re-gating was committed")
    }

    func testDeletingAnAssetBoundEarlierInTheSameBatchRegatesTheNewWorkflow() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: Self.boundConsumer)
        let asset = h.call("asset.import", TextAsset.json("hi").objectValue!)["assetId"]!
        let r = h.call("batch", ["calls": [
            ["op": "workflow.create", "args": ["templateId": .string(tpl), "bindings": ["U": ["text": ["assetId": asset]]]]],
            ["op": "node.get", "args": ["workflowId": "wf-1", "nodeId": "U"]],
            ["op": "asset.delete", "args": ["assetId": asset]],
        ]])
        XCTAssertEqual(r["results"]?[0]?["workflowId"], "wf-1")
        XCTAssertEqual(r["results"]?[1]?["state"], "ready", "bound and ready before the delete")
        XCTAssertEqual(h.state("wf-1", "U"), "blocked")
        XCTAssertEqual(h.node("wf-1", "U")["blockedReason"]?["message"], "Waiting for text (the bound asset is gone)")
    }

    func testDeletingAnAssetTwiceOrAnUnknownOneIsUnknownAsset() throws {
        let h = try Harness()
        let id = h.call("asset.import", ["type": "ImageRef", "uri": "file:///a.png"])["assetId"]!
        h.call("asset.delete", ["assetId": id])
        for op in ["asset.get", "asset.delete"] {
            let e = h.fail(op, ["assetId": id])
            XCTAssertEqual(e.status, .notFound)
            XCTAssertEqual(e.code, "unknownAsset")
            XCTAssertEqual(e.details["assetId"], id)
        }
        XCTAssertEqual(h.fail("asset.pin", ["assetId": "as-404", "pinned": true]).code, "unknownAsset")
    }

    // MARK: Logs

    /// TEST PLAN §1.3: an asset whose `metaJSON` lacks `providerSchema` is saved with a warning
    /// logged and the default `"providerSchema": "v1"`.
    func testAssetMetaWithoutProviderSchemaLogsAWarningNamingTheAssetById() throws {
        let capture = LogCapture()
        let engine = try capture.engine(level: .warning)
        defer { engine.close() }
        let versioned = try engine.call("asset.import", ["type": "ImageRef", "uri": "file:///jane/a.png",
                                                          "meta": ["providerSchema": "v2"]]).get()
        XCTAssertTrue(capture.entries.isEmpty, "meta with a providerSchema is not warned about: \(capture.entries)")
        let bare = try engine.call("asset.import", ["type": "ImageRef", "uri": "file:///jane/b.png",
                                                     "meta": ["width": 10]]).get()
        XCTAssertEqual(bare["meta"]?["providerSchema"], "v1")
        let id = bare["assetId"]!.stringValue!
        let warnings = capture.entries.filter { $0.level == .warning }
        XCTAssertEqual(warnings.count, 1, "\(capture.entries)")
        XCTAssertTrue(warnings.first?.text.contains("providerSchema") ?? false, "\(warnings)")
        XCTAssertTrue(warnings.first?.text.contains("assetId=\(id)") ?? false, "\(warnings)")
        XCTAssertFalse(capture.entries.contains { $0.text.contains("jane") || $0.text.contains(".png") }, "assets by id only")
        XCTAssertNotEqual(versioned["assetId"], bare["assetId"])
    }

    /// TEST PLAN §1.3 for a tool's output, and "no partial commit on failure".
    func testAnOutputWithoutProviderSchemaLogsAWarningAndAFailedCallLogsNothing() throws {
        let capture = LogCapture()
        let engine = try capture.engine(level: .warning)
        defer { engine.close() }
        func call(_ op: String, _ args: JSONObject) throws -> JSON { try engine.call(op, args).get() }
        _ = try call("tool.register", ["kind": "Text", "outputs": ["text": "TextRef"]])
        let tpl = try call("template.register", ["template": ["schema": "app.workflow/v2", "name": "t",
                                                              "nodes": [["id": "A", "kind": "Text", "outputs": ["text": "TextRef"]]]]])
        let wf = try call("workflow.create", ["templateId": tpl["templateId"]!])["workflowId"]!
        let run = try call("node.run", ["workflowId": wf, "nodeId": "A"])["runId"]!
        // A call that fails rolls back, and so do its log lines.
        XCTAssertThrowsError(try call("local.completed", ["runId": run, "outputs": ["text": ["type": "MaskRef", "uri": "data:,x"]]]))
        XCTAssertTrue(capture.entries.filter { $0.level == .warning }.isEmpty, "\(capture.entries)")
        _ = try call("local.completed", ["runId": run, "outputs": ["text": ["type": "TextRef", "uri": "data:,x"]]])
        let asset = try call("node.get", ["workflowId": wf, "nodeId": "A"])["outputs"]!["text"]!.stringValue!
        let warnings = capture.entries.filter { $0.level == .warning && $0.text.contains("providerSchema") }
        XCTAssertEqual(warnings.count, 1, "\(capture.entries)")
        XCTAssertTrue(warnings.first?.text.contains("assetId=\(asset)") ?? false, "\(warnings)")
    }
}
