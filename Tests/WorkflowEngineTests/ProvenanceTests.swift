import WorkflowCore
import WorkflowEngine
import XCTest

/// TEST PLAN §4 (Provenance & Invalidation) and sections 2, 3, 7 and 8 of the tool-card plan.
final class ProvenanceTests: XCTestCase {
    /// A → B → C all run once; returns the workflow id.
    private func ranChain(_ h: Harness) -> String {
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for _ in 0..<3 { h.runLocalTools() }
        XCTAssertEqual(h.state(wf, "C"), "succeeded")
        return wf
    }

    func testEveryOutputIsStampedWithWorkflowNodeRunAndPort() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let b = h.node(wf, "B")
        let asset = h.call("asset.get", ["assetId": b["outputs"]!["text"]!])
        XCTAssertEqual(asset["provenance"], ["workflowId": .string(wf), "nodeId": "B", "runId": b["runId"]!, "port": "text"])
        XCTAssertEqual(asset["type"], "TextRef")
    }

    func testEveryNodeOpRefusesAnUnknownNodeIdNamingItAndChangesNothing() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        let ops: [(String, JSONObject)] = [
            ("node.get", [:]), ("node.run", [:]), ("node.rerunLatest", [:]), ("node.retry", [:]), ("node.cancel", [:]),
            ("node.setParams", ["params": ["suffix": "!"]]), ("node.resetParams", [:]), ("node.applyPreset", ["preset": "p"]),
            ("node.selectInput", ["port": "text", "assetId": .null]), ("node.inputCandidates", ["port": "text"]),
            ("node.selectOutput", ["port": "text", "assetId": "a"]), ("node.history", [:]),
        ]
        for (op, extra) in ops {
            var args = extra
            args["workflowId"] = .string(wf)
            args["nodeId"] = "b"  // node ids are case-sensitive: the template has "B"
            let e = h.fail(op, args)
            XCTAssertEqual(e.code, "unknownNode", op)
            XCTAssertEqual(e.details["nodeId"], "b", op)
        }
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before)
        // Another spelling of the same text names no node either: the Kelvin sign is not "K".
        let t: JSON = ["schema": "app.workflow/v2", "name": "kelvin",
                       "nodes": [["id": "K", "kind": "Text", "outputs": ["text": "TextRef"]]]]
        let k = h.create(h.register(template: t))
        XCTAssertEqual(h.node(k, "K")["nodeId"], "K")
        XCTAssertEqual(h.fail("node.get", ["workflowId": .string(k), "nodeId": "\u{212A}"]).code, "unknownNode")
    }

    func testRerunningAProducerBlocksItsConsumerWithInputFromAHasChanged() throws {
        let h = try Harness()
        let wf = ranChain(h)
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        XCTAssertEqual(h.state(wf, "C"), "succeeded", "C keeps its result while B runs")
        h.runLocalTools()
        XCTAssertEqual(h.state(wf, "B"), "succeeded")
        XCTAssertEqual(h.state(wf, "C"), "blocked")
        XCTAssertEqual(h.node(wf, "C")["blockedReason"], ["code": "inputChanged", "message": "Input from 'B' has changed."])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "active")
    }

    /// Completes the pending `local.run` of `nodeId` (taken from `pending`) with a new text asset.
    private func complete(_ h: Harness, _ pending: inout [JSON], _ nodeId: String, _ uri: String) {
        guard let i = pending.firstIndex(where: { $0["type"] == "local.run" && $0["nodeId"] == .string(nodeId) }) else {
            return XCTFail("no local.run for \(nodeId)")
        }
        let e = pending.remove(at: i)
        h.call("local.completed", ["runId": e["runId"]!, "outputs": ["text": ["type": "TextRef", "uri": .string(uri)]]])
    }

    func testAResultWhoseOtherInputIsStillRunningIsBlockedOnceOneInputChanged() throws {
        let h = try Harness()
        h.register(tool: "Src", outputs: ["text": "TextRef"])
        h.register(tool: "Join", inputs: ["x": "TextRef", "y": "TextRef"], outputs: ["text": "TextRef"])
        h.register(tool: "Use", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "join",
                       "nodes": [["id": "a", "kind": "Src", "outputs": ["text": "TextRef"]],
                                 ["id": "b", "kind": "Src", "outputs": ["text": "TextRef"]],
                                 ["id": "c", "kind": "Join", "inputs": ["x": "TextRef", "y": "TextRef"], "outputs": ["text": "TextRef"]],
                                 ["id": "d", "kind": "Use", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["a", "text"], "to": ["c", "x"]], ["from": ["b", "text"], "to": ["c", "y"]],
                                 ["from": ["c", "text"], "to": ["d", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        var pending = h.take()
        complete(h, &pending, "a", "file:///a1")
        complete(h, &pending, "b", "file:///b1")
        pending += h.take()
        complete(h, &pending, "c", "file:///c1")
        pending += h.take()
        complete(h, &pending, "d", "file:///d1")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "b"])  // b runs again, and is left running
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "a"])
        pending = h.take()
        complete(h, &pending, "a", "file:///a2")
        XCTAssertEqual(h.state(wf, "c"), "blocked", "c's result was made from a's old output")
        XCTAssertEqual(h.node(wf, "c")["blockedReason"]?["message"], "Input from 'a' has changed.")
        XCTAssertEqual(h.fail("node.run", ["workflowId": .string(wf), "nodeId": "d"]).code, "notReady",
                       "d is never run on c's out-of-date result")
        XCTAssertTrue(h.take().filter { $0["type"] == "local.run" }.isEmpty)
    }

    func testARemoteResultWhoseInputChangedWhileOfflineIsBlockedAtOnce() throws {
        let h = try Harness()
        h.register(tool: "Src", outputs: ["text": "TextRef"])
        h.register(tool: "Far", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"], remote: true)
        h.register(tool: "Use", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "far",
                       "nodes": [["id": "a", "kind": "Src", "outputs": ["text": "TextRef"]],
                                 ["id": "c", "kind": "Far", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                  "resources": ["class": "remote"]],
                                 ["id": "d", "kind": "Use", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["a", "text"], "to": ["c", "text"]], ["from": ["c", "text"], "to": ["d", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        var pending = h.take()
        complete(h, &pending, "a", "file:///a1")
        let submit = h.take().first { $0["type"] == "remote.submit" }!
        h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "job-c"])
        h.call("job.update", ["jobId": "job-c", "status": "succeeded", "outputs": ["text": ["url": "https://cdn/c"]]])
        h.call("job.downloaded", ["runId": submit["runId"]!, "port": "text", "asset": ["type": "TextRef", "uri": "file:///c1"]])
        pending = h.take()
        complete(h, &pending, "d", "file:///d1")
        XCTAssertEqual(h.state(wf, "d"), "succeeded")
        h.call("network.set", ["online": false])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "a"])
        pending = h.take()
        complete(h, &pending, "a", "file:///a2")
        XCTAssertEqual(h.node(wf, "c")["blockedReason"]?["code"], "inputChanged", "not kept as current while offline")
        XCTAssertEqual(h.fail("node.run", ["workflowId": .string(wf), "nodeId": "d"]).code, "notReady")
    }

    func testDescendantsOfAStaleNodeWaitNamingTheStaleUpstream() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "four",
                       "nodes": [["id": "A", "kind": "Text", "outputs": ["text": "TextRef"]],
                                 ["id": "B", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                                 ["id": "C", "kind": "Reverse", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                                 ["id": "D", "kind": "Append", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["A", "text"], "to": ["B", "text"]], ["from": ["B", "text"], "to": ["C", "text"]],
                                 ["from": ["C", "text"], "to": ["D", "text"]]]]
        let wf = h.create(h.register(template: t))
        for node in ["A", "B"] {
            h.call("node.run", ["workflowId": .string(wf), "nodeId": .string(node)])
            h.runLocalTools()
        }
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        XCTAssertEqual(h.node(wf, "B")["blockedReason"]?["code"], "inputChanged")
        XCTAssertEqual(h.state(wf, "C"), "blocked", "C never ran; its input is stale")
        XCTAssertEqual(h.node(wf, "C")["blockedReason"]?["message"], "Waiting for text from 'B' (its input changed)")
        XCTAssertEqual(h.node(wf, "D")["blockedReason"]?["message"], "Waiting for text from 'C' (upstream 'B' changed)")
    }

    func testRerunWithLatestSchedulesTheBlockedConsumerWithTheLatestAssetId() throws {
        let h = try Harness()
        let wf = ranChain(h)
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        h.runLocalTools()
        let latest = h.node(wf, "B")["outputs"]!["text"]!
        let r = h.call("node.rerunLatest", ["workflowId": .string(wf), "nodeId": "C"])
        let runs = h.effects("local.run")
        XCTAssertEqual(runs.count, 1)
        XCTAssertEqual(runs[0]["runId"], r["runId"])
        XCTAssertEqual(runs[0]["inputs"]?["text"]?["assetId"], latest)
    }

    func testRetryUsesTheFrozenInputsAndParamsOfThePreviousRun() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let firstInput = h.call("node.history", ["workflowId": .string(wf), "nodeId": "C"])["runs"]?[0]?["inputs"]?["text"]
        h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "C", "params": ["suffix": "?"]])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        h.runLocalTools()
        h.call("node.retry", ["workflowId": .string(wf), "nodeId": "C"])
        let run = h.effects("local.run")[0]
        XCTAssertEqual(run["inputs"]?["text"]?["assetId"], firstInput, "frozen input")
        XCTAssertEqual(run["params"]?["suffix"], "!", "last params, not the edited ones")
        h.call("local.completed", TextTools.run(run).objectValue!)
        XCTAssertEqual(h.state(wf, "C"), "blocked", "a retry with old inputs is still stale")
    }

    func testAQueuedRetryPinnedToADeletedAssetIsAbortedBeforeItStarts() throws {
        let h = try Harness(extra: ["concurrency": ["local": 1]])
        Templates.registerTextTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "AB",
                       "nodes": [["id": "A", "kind": "Text", "outputs": ["text": "TextRef"]],
                                 ["id": "B", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                                 ["id": "X", "kind": "Text", "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["A", "text"], "to": ["B", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        h.runLocalTools()
        let oldInput = h.node(wf, "A")["outputs"]!["text"]!
        // Occupy the only local slot, then queue B's retry behind it.
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "X"])
        let x = h.effects("local.run")
        h.call("node.retry", ["workflowId": .string(wf), "nodeId": "B"])
        XCTAssertEqual(h.state(wf, "B"), "ready", "queued for a local slot")
        h.call("asset.delete", ["assetId": oldInput])
        h.call("local.completed", TextTools.run(x[0]).objectValue!)
        XCTAssertTrue(h.effects("local.run").isEmpty, "the retry never started")
        XCTAssertEqual(h.state(wf, "B"), "failed")
        XCTAssertEqual(h.node(wf, "B")["lastError"]?["code"], "inputAssetGone")
        // And a retry asked for after the deletion never starts at all.
        let e = h.fail("node.retry", ["workflowId": .string(wf), "nodeId": "B"])
        XCTAssertEqual(e.status, .state)
        XCTAssertEqual(e.code, "inputAssetGone")
    }

    func testRetryOfARunWhoseFrozenInputWasDeletedIsRefusedAndChangesNothing() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let gone = h.node(wf, "B")["outputs"]!["text"]!
        h.call("asset.delete", ["assetId": gone])
        _ = h.take()
        _ = h.call("metrics.take")
        let before = h.node(wf, "C")
        let history = h.call("node.history", ["workflowId": .string(wf), "nodeId": "C"])
        let e = h.fail("node.retry", ["workflowId": .string(wf), "nodeId": "C"])
        XCTAssertEqual(e.status, .state)
        XCTAssertEqual(e.code, "inputAssetGone")
        XCTAssertEqual(e.details["port"], "text")
        XCTAssertEqual(e.details["assetId"], gone)
        XCTAssertEqual(h.node(wf, "C"), before, "the node is as it was")
        XCTAssertEqual(h.call("node.history", ["workflowId": .string(wf), "nodeId": "C"]), history, "no run was created")
        XCTAssertEqual(h.take(), [], "no effect was emitted")
        XCTAssertEqual(h.call("metrics.take")["events"], [], "no retry was counted")
    }

    /// Text A (local) feeds Shout S (remote); Hold H (remote, no inputs) can take the only remote
    /// slot. A and S have run; returns the workflow and the asset S's run used.
    private func ranRemoteConsumer(_ h: Harness) -> (wf: String, input: JSON) {
        h.register(tool: "Text", outputs: ["text": "TextRef"])
        h.register(tool: "Shout", inputs: ["text": "TextRef"], outputs: ["text": "TextRef"], remote: true)
        h.register(tool: "Hold", outputs: ["text": "TextRef"], remote: true)
        let t: JSON = ["schema": "app.workflow/v2", "name": "remote consumer",
                       "nodes": [["id": "A", "kind": "Text", "params": ["text": "hi"], "outputs": ["text": "TextRef"]],
                                 ["id": "S", "kind": "Shout", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                  "resources": ["class": "remote"]],
                                 ["id": "H", "kind": "Hold", "outputs": ["text": "TextRef"], "resources": ["class": "remote"]]],
                       "edges": [["from": ["A", "text"], "to": ["S", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        let run = h.call("node.run", ["workflowId": .string(wf), "nodeId": "S"])["runId"]!
        XCTAssertEqual(h.effects("remote.submit").count, 1)
        h.call("job.submitted", ["runId": run, "jobId": "job-s1"])
        h.call("job.update", ["jobId": "job-s1", "status": "succeeded", "outputs": ["text": TextAsset.json("HI")]])
        XCTAssertEqual(h.state(wf, "S"), "succeeded")
        return (wf, h.node(wf, "A")["outputs"]!["text"]!)
    }

    func testARemoteRetryQueuedBehindTheCapWhoseInputIsDeletedIsNeverSubmitted() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 1]])
        let (wf, input) = ranRemoteConsumer(h)
        let hold = h.call("node.run", ["workflowId": .string(wf), "nodeId": "H"])["runId"]!
        XCTAssertEqual(h.effects("remote.submit").map { $0["nodeId"] }, ["H"])
        h.call("job.submitted", ["runId": hold, "jobId": "job-h1"])
        let retry = h.call("node.retry", ["workflowId": .string(wf), "nodeId": "S"])
        XCTAssertEqual(retry["state"], "queuedRemote")
        XCTAssertEqual(h.call("scheduler.stats")["remote"], ["running": 1, "queued": 1, "cap": 1])
        h.call("asset.delete", ["assetId": input])
        XCTAssertEqual(h.state(wf, "S"), "queuedRemote", "still waiting for the slot")
        h.call("job.update", ["jobId": "job-h1", "status": "succeeded", "outputs": ["text": TextAsset.json("held")]])
        XCTAssertEqual(h.effects("remote.submit"), [], "the slot freed, but the retry never started")
        let s = h.node(wf, "S")
        XCTAssertEqual(s["state"], "failed")
        XCTAssertEqual(s["runId"], retry["runId"])
        XCTAssertEqual(s["lastError"]?["code"], "inputAssetGone")
        XCTAssertEqual(h.call("scheduler.stats")["remote"], ["running": 0, "queued": 0, "cap": 1])
        XCTAssertEqual(h.fail("node.retry", ["workflowId": .string(wf), "nodeId": "S"]).code, "inputAssetGone")
    }

    func testASubmitRetryWaitingOutItsBackoffWhoseInputIsDeletedIsNotSubmittedAgain() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 1]])
        let (wf, input) = ranRemoteConsumer(h)
        let retry = h.call("node.retry", ["workflowId": .string(wf), "nodeId": "S"])["runId"]!
        XCTAssertEqual(h.effects("remote.submit").map { $0["runId"] }, [retry])
        h.call("job.transportError", ["runId": retry, "httpStatus": 503])
        XCTAssertEqual(h.node(wf, "S")["runStatus"], "retryWait")
        h.call("asset.delete", ["assetId": input])
        h.advance(60)  // the first submit retry is due within 30 s ± 25 %
        XCTAssertEqual(h.effects("remote.submit"), [], "not submitted again without its input")
        let s = h.node(wf, "S")
        XCTAssertEqual(s["state"], "failed")
        XCTAssertEqual(s["lastError"]?["code"], "inputAssetGone")
        XCTAssertEqual(s["lastError"]?["message"], "The text input of this run was deleted; it was not submitted again.")
        XCTAssertEqual(h.call("scheduler.stats")["remote"], ["running": 0, "queued": 0, "cap": 1], "the slot is free")
        XCTAssertNil(h.call("engine.nextDeadline")["at"]?.stringValue, "nothing left to retry")
        // The freed slot goes to the next run at once.
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "H"])
        XCTAssertEqual(h.effects("remote.submit").map { $0["nodeId"] }, ["H"])
    }

    func testMetricsRecordedByTheShellAreRedactedLikeLogLines() throws {
        let h = try Harness()
        h.call("metrics.record", ["event": "card.tapped", "fields": [
            "workflowId": "wf-1", "count": 3, "label": "sent to jane@example.com",
            "file": "IMG_0042.HEIC", "nested": ["preview": "data:image/png;base64,iVBORw0KGgo=", "ok": true],
            "list": ["mail bob@example.org", "plain"]]])
        let events = h.call("metrics.take")["events"]!.arrayValue!
        XCTAssertEqual(events.count, 1)
        let e = events[0]
        XCTAssertEqual(e["event"], "card.tapped")
        XCTAssertEqual(e["source"], "shell")
        XCTAssertEqual(e["workflowId"], "wf-1", "ids are kept")
        XCTAssertEqual(e["count"], 3)
        XCTAssertEqual(e["nested"]?["ok"], true)
        XCTAssertEqual(e["list"]?[1], "plain")
        let text = JSONWriter.string(e)
        for secret in ["jane", "bob", "example.", "IMG_0042", "HEIC", "base64", "iVBORw0KGgo"] {
            XCTAssertFalse(text.contains(secret), "\(secret) in \(text)")
        }
        XCTAssertEqual(e["label"]?.stringValue, Redaction.redact("sent to jane@example.com"), "the log-line rules")
        XCTAssertEqual(e["file"]?.stringValue, Redaction.redact("IMG_0042.HEIC"))
    }

    func testUseForNextStepSelectsAnEarlierOutputAndRegatesConsumers() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let first = h.node(wf, "B")["outputs"]!["text"]!.stringValue!
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        h.runLocalTools()
        XCTAssertEqual(h.state(wf, "C"), "blocked")
        h.call("node.selectOutput", ["workflowId": .string(wf), "nodeId": "B", "port": "text", "assetId": .string(first)])
        XCTAssertEqual(h.state(wf, "C"), "succeeded", "C's inputs are those of its last run again")
        let bad = h.fail("node.selectOutput", ["workflowId": .string(wf), "nodeId": "B", "port": "text", "assetId": "as-999"])
        XCTAssertEqual(bad.code, "notACandidate")
    }

    func testSelectInputPinsAConsumerToACandidate() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let first = h.node(wf, "B")["outputs"]!["text"]!.stringValue!
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        h.runLocalTools()
        let candidates = h.call("node.inputCandidates", ["workflowId": .string(wf), "nodeId": "C", "port": "text"])
        XCTAssertEqual(candidates["candidates"]?.arrayValue?.count, 2)
        h.call("node.selectInput", ["workflowId": .string(wf), "nodeId": "C", "port": "text", "assetId": .string(first)])
        XCTAssertEqual(h.state(wf, "C"), "succeeded")
    }

    /// Seed 000 §8, "Blocked by upstream failure: … offer Open upstream, Retry upstream, Replace
    /// input…": the consumer of a failed step goes on with an asset the person brings, and the
    /// choice is durable.
    func testReplaceInputLetsAConsumerGoOnPastAFailedUpstreamAndSurvivesAReopen() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let run = try XCTUnwrap(h.take().first { $0["type"] == "local.run" }?["runId"])
        h.call("local.completed", ["runId": run, "error": ["code": "badInput", "message": "Nothing to say."]])
        XCTAssertEqual(h.node(wf, "B")["blockedReason"]?["code"], "upstreamFailed")
        let actions = h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?[1]?["actions"]
        XCTAssertEqual(actions?["openUpstream"], ["enabled": true, "reason": .null, "nodeId": "A"])
        XCTAssertEqual(actions?["retryUpstream"], ["enabled": true, "reason": .null, "nodeId": "A"])
        XCTAssertEqual(actions?["replaceInput"], ["enabled": true, "reason": .null, "port": "text"])
        let image = h.call("asset.import", ["type": "ImageRef", "uri": "file:///in/photo.png"])["assetId"]!
        let wrong = h.fail("node.selectInput", ["workflowId": .string(wf), "nodeId": "B", "port": "text", "assetId": image])
        XCTAssertEqual(wrong.code, "portTypeMismatch")
        XCTAssertEqual(h.state(wf, "B"), "blocked", "a refused replacement changes nothing")
        let mine = h.call("asset.import", ["type": "TextRef", "uri": .string(TextAsset.uri("mine"))])["assetId"]!
        h.call("node.selectInput", ["workflowId": .string(wf), "nodeId": "B", "port": "text", "assetId": mine])
        XCTAssertEqual(h.state(wf, "B"), "ready")
        try h.reopen()
        XCTAssertEqual(h.state(wf, "B"), "ready", "the replacement is durable")
        XCTAssertEqual(h.call("node.inputCandidates", ["workflowId": .string(wf), "nodeId": "B", "port": "text"])["selected"], mine)
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for _ in 0..<2 { h.runLocalTools() }
        XCTAssertEqual(h.state(wf, "C"), "succeeded")
        let out = try XCTUnwrap(h.node(wf, "C")["outputs"]?["text"])
        XCTAssertEqual(h.call("asset.get", ["assetId": out])["uri"]?.stringValue, TextAsset.uri("MINE!"))
        XCTAssertEqual(h.state(wf, "A"), "failed", "the failed step is left as it was")
    }

    func testParamsMergeResetPresetsAndProviderDefaults() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "stylize alone",
                       "nodes": [["id": "s", "kind": "StylizeRemote", "params": ["cfg": 4.0],
                                  "inputs": ["image": ["type": "ImageRef", "optional": true], "mask": ["type": "MaskRef", "optional": true]],
                                  "outputs": ["image": "ImageRef"], "resources": ["class": "remote"],
                                  "presets": ["Fast": ["steps": 8]]]],
                       "edges": []]
        // An optional input on a tool input that is required contradicts the tool.
        XCTAssertEqual(h.fail("template.register", ["template": t]).code, "toolContractMismatch")
        h.register(tool: "StylizeRemote", inputs: ["image": ["type": "ImageRef", "optional": true],
                                                   "mask": ["type": "MaskRef", "optional": true]],
                   outputs: ["image": "ImageRef"], remote: true, defaults: ["res": "1024×1024", "steps": 20])
        let wf = h.create(h.register(template: t))
        let base = h.node(wf, "s")["params"]
        XCTAssertEqual(base, ["res": "1024×1024", "steps": 20, "cfg": 4.0])
        let merged = h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "s", "params": ["steps": 50]])
        XCTAssertEqual(merged["params"]?["steps"], 50)
        XCTAssertEqual(merged["params"]?["cfg"], 4.0)
        XCTAssertEqual(h.call("node.applyPreset", ["workflowId": .string(wf), "nodeId": "s", "preset": "Fast"])["params"]?["steps"], 8)
        XCTAssertEqual(h.call("node.resetParams", ["workflowId": .string(wf), "nodeId": "s"])["params"], base)
        // "Toggle provider model config → Save → jobs use updated defaults" (TEST PLAN §9).
        h.call("provider.setDefaults", ["kind": "StylizeRemote", "params": ["model": "sdxl-turbo", "steps": 25]])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "s"])
        let submit = h.effects("remote.submit")[0]
        XCTAssertEqual(submit["params"], ["res": "1024×1024", "steps": 25, "cfg": 4.0, "model": "sdxl-turbo"])
    }

    /// OPS workflow.create: `params` are overrides "as node.setParams would set them", so a
    /// `null` value is no override; it must not hide the tool's or the provider's default.
    func testANullParamAtCreateIsNoOverrideAndTheDefaultsReachTheTool() throws {
        let h = try Harness(file: true)
        h.register(tool: "Seeded", outputs: ["text": "TextRef"], defaults: ["steps": 30, "seed": 1], summaryParams: ["steps", "seed"])
        h.call("provider.setDefaults", ["kind": "Seeded", "params": ["seed": 7]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "seeded",
                       "nodes": [["id": "g", "kind": "Seeded", "outputs": ["text": "TextRef"]]], "edges": []]
        let wf = h.create(h.register(template: t), ["params": ["g": ["seed": .null, "steps": 12]]])
        try h.reopen()
        let shown = h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "g", "params": [:]])
        XCTAssertEqual(shown["overrides"], ["steps": 12], "the null is not stored, after a reopen too")
        XCTAssertEqual(shown["params"], ["steps": 12, "seed": 7])
        let copy = h.call("workflow.duplicate", ["workflowId": .string(wf)])["workflowId"]?.stringValue ?? ""
        XCTAssertEqual(h.node(copy, "g")["params"], ["steps": 12, "seed": 7])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "g"])
        XCTAssertEqual(h.effects("local.run").first?["params"], ["steps": 12, "seed": 7])
    }

    func testDefaultsOfAToolRegisteredEarlierInTheSameBatchReachTheRunsParams() throws {
        let h = try Harness()
        let t: JSON = ["schema": "app.workflow/v2", "name": "one step",
                       "nodes": [["id": "g", "kind": "Later", "params": ["b": 2], "outputs": ["text": "TextRef"]]], "edges": []]
        let wf = h.create(h.register(template: t))
        XCTAssertEqual(h.state(wf, "g"), "blocked", "its tool is not installed yet")
        // One batch: the tool's registration is staged, not yet committed, when the node starts;
        // the run's params take its defaults, under the template's.
        h.call("batch", ["calls": [
            ["op": "tool.register", "args": ["kind": "Later", "outputs": ["text": "TextRef"], "defaults": ["a": 1, "b": 1]]],
            ["op": "node.run", "args": ["workflowId": .string(wf), "nodeId": "g"]],
        ]])
        XCTAssertEqual(h.effects("local.run").first?["params"], ["a": 1, "b": 2])
    }

    /// A call remembers the committed tools it asked for (the engine's change only at a commit):
    /// one it found missing, then registered, is found after.
    func testAToolFoundMissingAndThenRegisteredInTheSameBatchIsFoundAfter() throws {
        let h = try Harness()
        let t: JSON = ["schema": "app.workflow/v2", "name": "one step",
                       "nodes": [["id": "g", "kind": "Later", "params": ["b": 2], "outputs": ["text": "TextRef"]]], "edges": []]
        let template = h.register(template: t)
        let out = h.call("batch", ["calls": [
            ["op": "workflow.create", "args": ["templateId": .string(template)]],  // gated: "Tool not installed."
            ["op": "tool.register", "args": ["kind": "Later", "outputs": ["text": "TextRef"], "defaults": ["a": 1]]],
            ["op": "workflow.runAllReady", "args": ["workflowId": "wf-1"]],
        ]])
        XCTAssertEqual(out["results"]?[0]?["workflowId"], "wf-1")
        XCTAssertEqual(h.state("wf-1", "g"), "runningLocal")
        XCTAssertEqual(h.effects("local.run").first?["params"], ["a": 1, "b": 2])
    }

    func testHistoryListsRunsNewestFirstWithTimesAndAParamsDiff() throws {
        let h = try Harness()
        let wf = ranChain(h)
        h.advance(5)
        h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "C", "params": ["suffix": "?"]])
        h.call("node.rerunLatest", ["workflowId": .string(wf), "nodeId": "C"])
        h.advance(2)
        h.runLocalTools()
        let runs = h.call("node.history", ["workflowId": .string(wf), "nodeId": "C"])["runs"]!.arrayValue!
        XCTAssertEqual(runs.count, 2)
        XCTAssertEqual(runs[0]["number"], 2)
        XCTAssertEqual(runs[0]["status"], "succeeded")
        XCTAssertEqual(runs[0]["durationSeconds"], 2.0)
        XCTAssertEqual(runs[0]["paramsDiff"], [:])
        XCTAssertEqual(runs[1]["paramsDiff"], ["suffix": ["then": "!", "now": "?"]])
        XCTAssertNotNil(runs[1]["outputs"]?["text"])
        XCTAssertEqual(h.call("node.history", ["workflowId": .string(wf), "nodeId": "C", "limit": 1])["runs"]?.arrayValue?.count, 1)
    }

    /// TEST PLAN §1.3, the stored record: the default `"providerSchema": "v1"`. The warning it
    /// logs: AssetRefcountTests.testAssetMetaWithoutProviderSchemaLogsAWarningNamingTheAssetById.
    func testAssetMetaWithoutProviderSchemaIsStoredAsV1() throws {
        let h = try Harness()
        let a = h.call("asset.import", ["type": "ImageRef", "uri": "file:///p.png", "meta": ["width": 10]])
        XCTAssertEqual(a["meta"], ["width": 10, "providerSchema": "v1"])
        let b = h.call("asset.import", ["type": "ImageRef", "uri": "file:///q.png", "meta": ["providerSchema": "v3"]])
        XCTAssertEqual(b["meta"]?["providerSchema"], "v3")
        let c = h.call("asset.import", ["type": "ImageRef", "uri": "file:///r.png", "meta": ["providerSchema": .null]])
        XCTAssertEqual(c["meta"]?["providerSchema"], "v1", "null is no schema either")
    }

    func testUnreferencedAssetsAreCollectedAfterTheRetentionPeriodPinnedOnesNever() throws {
        let h = try Harness()
        let wf = ranChain(h)
        let loose = h.call("asset.import", ["type": "ImageRef", "uri": "file:///loose.png"])["assetId"]!
        let kept = h.call("asset.import", ["type": "ImageRef", "uri": "file:///kept.png"])["assetId"]!
        h.call("asset.pin", ["assetId": kept, "pinned": true])
        let produced = h.node(wf, "C")["outputs"]!["text"]!
        XCTAssertEqual(h.call("assets.gc")["count"], 0, "nothing is old enough")
        h.advance(8 * 86_400)
        XCTAssertEqual(h.call("assets.gc")["removed"], [loose], "only the loose, unpinned import")
        h.call("workflow.delete", ["workflowId": .string(wf)])
        XCTAssertEqual(h.call("assets.gc")["count"], 0, "just orphaned: retention counts from now")
        h.advance(8 * 86_400)
        let removed = h.call("assets.gc")["removed"]!.arrayValue!
        XCTAssertTrue(removed.contains(produced))
        XCTAssertFalse(removed.contains(kept))
        XCTAssertEqual(h.fail("asset.get", ["assetId": produced]).status, .notFound)
    }
}

/// TEST PLAN §1: "Errors are exact; no partial commit on failure."
final class PersistenceRuleTests: XCTestCase {
    func testTwoProducersOnARequiredPortAreRejectedWithNoPartialCommit() throws {
        let h = try Harness(file: true)
        let t: JSON = ["schema": "app.workflow/v2", "name": "two producers",
                       "nodes": [["id": "a", "kind": "K", "outputs": ["o": "ImageRef"]], ["id": "b", "kind": "K", "outputs": ["o": "ImageRef"]],
                                 ["id": "c", "kind": "K", "inputs": ["i": "ImageRef", "j": ["type": "ImageRef", "optional": true]]]],
                       "edges": [["from": ["a", "o"], "to": ["c", "i"]], ["from": ["b", "o"], "to": ["c", "i"]]]]
        let e = h.fail("template.register", ["template": t])
        XCTAssertEqual(e.status, .template)
        XCTAssertEqual(e.code, "multiProducerOnRequiredPort")
        var optional = t.objectValue!
        optional["edges"] = [["from": ["a", "o"], "to": ["c", "j"]], ["from": ["b", "o"], "to": ["c", "j"]]]
        XCTAssertEqual(h.fail("template.register", ["template": .object(optional)]).code, "multiProducerOnOptionalPort")
        try h.crash()
        XCTAssertEqual(h.call("template.list")["templates"], [], "nothing was written")
    }

    func testAFailedCreateLeavesNoWorkflowAndNoAsset() throws {
        let h = try Harness(file: true)
        h.register(tool: "K", inputs: ["i": "ImageRef"], outputs: ["o": "ImageRef"])
        let tpl = h.register(template: ["schema": "app.workflow/v2", "name": "one",
                                        "nodes": [["id": "n", "kind": "K", "inputs": ["i": "ImageRef"], "outputs": ["o": "ImageRef"]]]])
        let e = h.fail("workflow.create", ["templateId": .string(tpl),
                                           "bindings": ["n": ["i": ["type": "MaskRef", "uri": "file:///m.png"]]]])
        XCTAssertEqual(e.code, "portTypeMismatch")
        XCTAssertEqual(h.call("workflow.list")["rows"], [])
        let ok = h.create(tpl, ["bindings": ["n": ["i": ["type": "ImageRef", "uri": "file:///i.png"]]]])
        XCTAssertEqual(ok, "wf-1", "the failed create consumed no id")
        XCTAssertEqual(h.state(ok, "n"), "ready")
        let asset = h.call("asset.get", ["assetId": "as-1"])
        XCTAssertEqual(asset["uri"], "file:///i.png")
    }
}

/// "Use for next step" (seed 002: "writes selectedOutputs[key] = asset.id and updates gating").
final class UseForNextStepTests: XCTestCase {
    /// A (Text) → B (Uppercase); A ran twice, succeeded then (third run) failed.
    private func ranTwiceThenFailed(_ h: Harness) -> (wf: String, first: JSON, second: JSON) {
        Templates.registerTextTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "two",
                       "nodes": [["id": "A", "kind": "Text", "params": ["text": "a"], "outputs": ["text": "TextRef"]],
                                 ["id": "B", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["A", "text"], "to": ["B", "text"]]],
                       "options": ["errorPolicy": "isolate-node"]]
        let wf = h.create(h.register(template: t))
        var made: [JSON] = []
        for _ in 0..<2 {
            h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
            h.runLocalTools()
            made.append(h.node(wf, "A")["outputs"]!["text"]!)
        }
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let run = h.effects("local.run")[0]
        h.call("local.completed", ["runId": run["runId"]!, "error": ["code": "E1", "message": "broken"]])
        return (wf, made[0], made[1])
    }

    func testUseForNextStepOnAFailedNodeLetsItsConsumersGoOn() throws {
        let h = try Harness()
        let (wf, first, _) = ranTwiceThenFailed(h)
        XCTAssertEqual(h.node(wf, "B")["blockedReason"]?["code"], "upstreamFailed")
        h.call("node.selectOutput", ["workflowId": .string(wf), "nodeId": "A", "port": "text", "assetId": first])
        XCTAssertEqual(h.state(wf, "A"), "succeeded", "the run that made it is the node's result again")
        XCTAssertEqual(h.node(wf, "A")["lastError"], nil)
        XCTAssertEqual(h.state(wf, "B"), "ready")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "B"])
        XCTAssertEqual(h.effects("local.run").first?["inputs"]?["text"]?["assetId"], first)
    }

    func testTheCardShowsTheOutputChosenForTheNextStep() throws {
        let h = try Harness()
        let (wf, first, second) = ranTwiceThenFailed(h)
        let card = { h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?.arrayValue?.first { $0["nodeId"] == "A" } }
        XCTAssertEqual(card()?["lastResult"]?["assetId"], second)
        h.call("node.selectOutput", ["workflowId": .string(wf), "nodeId": "A", "port": "text", "assetId": first])
        XCTAssertEqual(card()?["lastResult"]?["assetId"], first)
        XCTAssertEqual(card()?["outputs"]?["text"], first)
    }

    func testOutputsOfARemoteRunCancelledWhileDownloadingAreNoCandidates() throws {
        let h = try Harness()
        h.register(tool: "Pair", outputs: ["a": "ImageRef", "b": "ImageRef"], remote: true)
        h.register(tool: "Use", inputs: ["image": "ImageRef"], outputs: ["image": "ImageRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "pair",
                       "nodes": [["id": "P", "kind": "Pair", "outputs": ["a": "ImageRef", "b": "ImageRef"]],
                                 ["id": "U", "kind": "Use", "inputs": ["image": "ImageRef"], "outputs": ["image": "ImageRef"]]],
                       "edges": [["from": ["P", "a"], "to": ["U", "image"]]]]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "P"])
        let submit = h.effects("remote.submit")[0]
        h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                              "outputs": ["a": ["type": "ImageRef", "uri": "file:///a.png"], "b": ["url": "https://x/b.png"]]])
        XCTAssertEqual(h.state(wf, "P"), "downloading")
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "P"])
        let candidates = h.call("node.inputCandidates", ["workflowId": .string(wf), "nodeId": "U", "port": "image"])
        XCTAssertEqual(candidates["candidates"], [], "the cancelled run made nothing to use")
    }
}
