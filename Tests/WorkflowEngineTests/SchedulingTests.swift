import Foundation
import WorkflowCore
import WorkflowEngine
import XCTest

private func remoteFan(_ n: Int, options: JSON? = nil) -> JSON {
    var nodes: [JSON] = []
    for i in 1...n {
        nodes.append(["id": .string("r\(i)"), "kind": "Job", "outputs": ["out": "ImageRef"], "resources": ["class": "remote"]])
    }
    var t: JSONObject = ["schema": "app.workflow/v2", "name": .string("fan \(n)"), "nodes": .array(nodes), "edges": []]
    if let options { t["options"] = options }
    return .object(t)
}

/// Step 11 of the implementation plan: scheduling and fairness across workflows.
final class FairnessTests: XCTestCase {
    /// DESIGN §5 "round-robin across workflows; nobody starves", across restarts: a host killed
    /// after every job still sees the two workflows take turns.
    func testWorkflowsTakeTurnsEvenWhenTheHostRestartsAfterEveryJob() throws {
        let h = try Harness(file: true, extra: ["concurrency": ["remote": 1, "local": 1]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let tpl = h.register(template: remoteFan(4))
        let a = h.create(tpl)
        let b = h.create(tpl)
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        var order: [String] = []
        for n in 0..<6 {
            guard let submit = h.effects("remote.submit").first else { break }
            order.append(submit["workflowId"] == .string(a) ? "A" : "B")
            h.call("job.submitted", ["runId": submit["runId"]!, "jobId": .string("job-\(n)")])
            h.call("job.update", ["jobId": .string("job-\(n)"), "status": "succeeded",
                                  "outputs": ["out": ["type": "ImageRef", "uri": .string("file:///\(n)")]]])
            try h.crash()
        }
        XCTAssertEqual(order, ["A", "B", "A", "B", "A", "B"])
    }

    func testTenWorkflowsAllAdvanceUnderAGlobalCap() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 3, "local": 2]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let tpl = h.register(template: remoteFan(5))
        let wfs = (0..<10).map { _ in h.create(tpl) }
        // All ten ask at once (one batch: the queues start what they can after the last call).
        h.call("batch", ["calls": .array(wfs.map { ["op": "workflow.runAllReady", "args": ["workflowId": .string($0)]] })])
        var jobs = 0
        var firstServed: [String] = []
        var order: [String] = []
        // Each round: finish whatever is submitted, then let the queue move on.
        for _ in 0..<40 {
            for e in h.effects("remote.submit") {
                if let w = e["workflowId"]?.stringValue, !firstServed.contains(w) { firstServed.append(w) }
                order.append(e["workflowId"]?.stringValue ?? "?")
                jobs += 1
                let job = "job-\(jobs)"
                h.call("job.submitted", ["runId": e["runId"]!, "jobId": .string(job)])
                h.call("job.update", ["jobId": .string(job), "status": "succeeded",
                                      "outputs": ["out": ["type": "ImageRef", "uri": .string("file:///\(job).png")]]])
            }
            let stats = h.call("scheduler.stats")
            XCTAssertLessThanOrEqual(stats["remote"]?["running"]?.intValue ?? 99, 3)
        }
        XCTAssertEqual(jobs, 50)
        XCTAssertEqual(firstServed.count, 10, "every workflow advanced")
        XCTAssertEqual(Array(firstServed.prefix(3)), Array(wfs.prefix(3)), "round-robin in turn order")
        XCTAssertEqual(Set(order.prefix(10)).count, 10, "every workflow gets a run before any gets a second: \(order)")
        for turn in 0..<5 {
            XCTAssertEqual(Set(order[(turn * 10)..<(turn * 10 + 10)]), Set(wfs), "turn \(turn + 1) serves each workflow once")
        }
        for wf in wfs { XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done") }
    }

    func testRoundRobinGivesEachWorkflowATurnBeforeAnyGetsASecond() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 1]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let tpl = h.register(template: remoteFan(3))
        let wfs = (0..<4).map { _ in h.create(tpl) }
        for wf in wfs { h.call("workflow.runAllReady", ["workflowId": .string(wf)]) }
        var order: [String] = []
        for i in 0..<8 {
            let s = h.effects("remote.submit")
            XCTAssertEqual(s.count, 1, "cap 1")
            order.append(s[0]["workflowId"]!.stringValue!)
            h.call("job.submitted", ["runId": s[0]["runId"]!, "jobId": .string("j\(i)")])
            h.call("job.update", ["jobId": .string("j\(i)"), "status": "failed"])
        }
        XCTAssertEqual(Array(order.prefix(4)), wfs)
        XCTAssertEqual(Array(order.suffix(4)), wfs, "second turn in the same order: \(order)")
    }

    func testTheActiveWorkflowIsServedFirst() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 2]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let tpl = h.register(template: remoteFan(3))
        let a = h.create(tpl)
        let b = h.create(tpl)
        h.call("workflow.setActive", ["workflowId": .string(b)])
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        let firstA = h.effects("remote.submit")
        XCTAssertEqual(firstA.count, 2)
        for (i, e) in firstA.enumerated() {
            h.call("job.submitted", ["runId": e["runId"]!, "jobId": .string("a\(i)")])
        }
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        h.call("job.update", ["jobId": "a0", "status": "failed"])
        h.call("job.update", ["jobId": "a1", "status": "failed"])
        let next = h.effects("remote.submit")
        XCTAssertEqual(next.map { $0["workflowId"] }, [.string(b), .string(b)], "the active workflow takes the free slots")
    }
}

final class ConcurrencyCapTests: XCTestCase {
    func testRemoteSubmissionsRespectTheGlobalCapAndQueueLengthIsReported() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 2]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let wf = h.create(h.register(template: remoteFan(5)))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        let s = h.effects("remote.submit")
        XCTAssertEqual(s.count, 2)
        let stats = h.call("scheduler.stats")
        XCTAssertEqual(stats["remote"]?["running"], 2)
        XCTAssertEqual(stats["remote"]?["queued"], 3)
        XCTAssertEqual(stats["remote"]?["cap"], 2)
        XCTAssertEqual(h.state(wf, "r5"), "queuedRemote")
        h.call("job.transportError", ["runId": s[0]["runId"]!, "httpStatus": 400])
        XCTAssertEqual(h.effects("remote.submit").count, 1, "a freed slot starts the next")
        XCTAssertEqual(h.call("scheduler.stats")["remote"]?["queued"], 2)
    }

    func testPerWorkflowCapFromTemplateOptions() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 8]])
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let tpl = h.register(template: remoteFan(4, options: ["concurrency": ["remote": 1]]))
        let a = h.create(tpl)
        let b = h.create(tpl)
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        let s = h.effects("remote.submit")
        XCTAssertEqual(s.count, 2, "one per workflow")
        XCTAssertEqual(Set(s.compactMap { $0["workflowId"]?.stringValue }), [a, b])
    }

    func testPerWorkflowLocalCapFromTemplateOptionsLeavesOtherWorkflowsFree() throws {
        let h = try Harness(extra: ["concurrency": ["local": 4]])
        Templates.registerTextTools(h)
        let texts: [JSON] = ["x", "y", "z"].map { ["id": .string($0), "kind": "Text", "outputs": ["text": "TextRef"]] }
        let capped = h.register(template: ["schema": "app.workflow/v2", "name": "capped", "nodes": .array(texts), "edges": [],
                                           "options": ["concurrency": ["local": 1]]])
        let free = h.register(template: ["schema": "app.workflow/v2", "name": "free", "nodes": .array(texts), "edges": []])
        let a = h.create(capped)
        let b = h.create(free)
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        var runs = h.effects("local.run")
        XCTAssertEqual(runs.filter { $0["workflowId"] == .string(a) }.count, 1, "the capped workflow runs one at a time")
        XCTAssertEqual(runs.filter { $0["workflowId"] == .string(b) }.count, 3, "the other uses the global slots")
        XCTAssertEqual(h.call("scheduler.stats")["local"]?["running"], 4)
        for _ in 0..<2 {
            let mine = runs.first { $0["workflowId"] == .string(a) }!
            h.call("local.completed", TextTools.run(mine).objectValue!)
            runs = h.effects("local.run")
            XCTAssertEqual(runs.count, 1, "a finished run frees its workflow's slot for the next")
            XCTAssertEqual(runs.first?["workflowId"], .string(a))
        }
    }

    func testLocalQueueCapAndGraphOrderWithinAWorkflow() throws {
        let h = try Harness(extra: ["concurrency": ["local": 1]])
        Templates.registerTextTools(h)
        let t: JSON = ["schema": "app.workflow/v2", "name": "three texts",
                       "nodes": [["id": "z", "kind": "Text", "outputs": ["text": "TextRef"]],
                                 ["id": "y", "kind": "Text", "outputs": ["text": "TextRef"]],
                                 ["id": "x", "kind": "Text", "outputs": ["text": "TextRef"]]], "edges": []]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        var order: [String] = []
        for _ in 0..<3 {
            let runs = h.effects("local.run")
            XCTAssertEqual(runs.count, 1)
            order.append(runs[0]["nodeId"]!.stringValue!)
            XCTAssertEqual(h.call("scheduler.stats")["local"]?["running"], 1)
            h.call("local.completed", TextTools.run(runs[0]).objectValue!)
        }
        XCTAssertEqual(order, ["z", "y", "x"], "graph order (template order breaks ties)")
    }
}

/// TEST PLAN §3, "Node becomes ready. Engine ticks. Node transitions to queuedRemote (or
/// runningLocal) per schedule": in a workflow running all ready steps, the call that makes a
/// node ready also schedules it, remote work as `queuedRemote` (submitted, or waiting for a
/// slot) and local work as `runningLocal`; a ready node with no slot starts when one frees.
final class ReadyNodeSchedulingTests: XCTestCase {
    func testANodeThatBecomesReadyIsQueuedRemoteOrRunningLocalPerTheSchedule() throws {
        let h = try Harness(extra: ["concurrency": ["remote": 1, "local": 1]])
        Templates.registerTextTools(h)
        h.register(tool: "StylizeRemote", inputs: ["text": "TextRef"], outputs: ["image": "ImageRef"], remote: true)
        let t: JSON = ["schema": "app.workflow/v2", "name": "fan out",
                       "nodes": [["id": "A", "kind": "Text", "params": ["text": "a"], "outputs": ["text": "TextRef"]],
                                 ["id": "R1", "kind": "StylizeRemote", "inputs": ["text": "TextRef"], "outputs": ["image": "ImageRef"],
                                  "resources": ["class": "remote"]],
                                 ["id": "R2", "kind": "StylizeRemote", "inputs": ["text": "TextRef"], "outputs": ["image": "ImageRef"],
                                  "resources": ["class": "remote"]],
                                 ["id": "L1", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                                 ["id": "L2", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
                       "edges": [["from": ["A", "text"], "to": ["R1", "text"]], ["from": ["A", "text"], "to": ["R2", "text"]],
                                 ["from": ["A", "text"], "to": ["L1", "text"]], ["from": ["A", "text"], "to": ["L2", "text"]]]]
        let wf = h.create(h.register(template: t), ["autoRun": true])
        XCTAssertEqual(h.state(wf, "A"), "runningLocal")
        for id in ["R1", "R2", "L1", "L2"] { XCTAssertEqual(h.state(wf, id), "blocked", id) }
        XCTAssertEqual(h.runLocalTools(), 1)
        // A's completion made the four ready; the same call scheduled them.
        XCTAssertEqual(h.state(wf, "R1"), "queuedRemote")
        XCTAssertEqual(h.state(wf, "R2"), "queuedRemote", "waiting for the remote slot R1 holds")
        XCTAssertEqual(h.state(wf, "L1"), "runningLocal")
        XCTAssertEqual(h.state(wf, "L2"), "ready", "waiting for the local slot L1 holds")
        let effects = h.take()
        let submits = effects.filter { $0["type"] == "remote.submit" }
        let locals = effects.filter { $0["type"] == "local.run" }
        XCTAssertEqual(submits.map { $0["nodeId"] }, ["R1"])
        XCTAssertEqual(locals.map { $0["nodeId"] }, ["L1"])
        let stats = h.call("scheduler.stats")
        XCTAssertEqual(stats["remote"]?["running"], 1)
        XCTAssertEqual(stats["remote"]?["queued"], 1)
        XCTAssertEqual(stats["local"]?["queued"], 1)
        h.call("local.completed", TextTools.run(locals[0]).objectValue!)
        XCTAssertEqual(h.state(wf, "L1"), "succeeded")
        XCTAssertEqual(h.state(wf, "L2"), "runningLocal", "the freed local slot went to L2")
        h.call("job.submitted", ["runId": submits[0]["runId"]!, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "succeeded", "outputs": ["image": ["type": "ImageRef", "uri": "file:///1.png"]]])
        XCTAssertEqual(h.effects("remote.submit").map { $0["nodeId"] }, ["R2"], "the freed remote slot went to R2")
    }
}

/// errorPolicy: fail-fast and isolate-node.
final class ErrorPolicyTests: XCTestCase {
    func testFailFastCancelsTheWorkflowsOtherWorkIncludingRunningJobs() throws {
        let h = try Harness()
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let wf = h.create(h.register(template: remoteFan(3, options: ["errorPolicy": "fail-fast"])))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        let s = h.effects("remote.submit")
        for (i, e) in s.enumerated() { h.call("job.submitted", ["runId": e["runId"]!, "jobId": .string("j\(i)")]) }
        h.call("job.update", ["jobId": "j0", "status": "failed", "error": ["code": "OOM", "message": "Out of memory"]])
        XCTAssertEqual(h.state(wf, "r1"), "failed")
        XCTAssertEqual(h.node(wf, "r1")["lastError"]?["code"], "OOM")
        XCTAssertEqual(h.state(wf, "r2"), "cancelled")
        XCTAssertEqual(h.state(wf, "r3"), "cancelled")
        XCTAssertEqual(Set(h.effects("remote.cancel").compactMap { $0["jobId"]?.stringValue }), ["j1", "j2"])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "failed")
    }

    func testIsolateNodeBlocksOnlyDescendants() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let t: JSON = [
            "schema": "app.workflow/v2", "name": "two branches",
            "nodes": [["id": "a", "kind": "Text", "outputs": ["text": "TextRef"]],
                      ["id": "a2", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                      ["id": "b", "kind": "Text", "outputs": ["text": "TextRef"]],
                      ["id": "b2", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
            "edges": [["from": ["a", "text"], "to": ["a2", "text"]], ["from": ["b", "text"], "to": ["b2", "text"]]],
            "options": ["errorPolicy": "isolate-node"],
        ]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for e in h.effects("local.run") {
            if e["nodeId"] == "a" {
                h.call("local.completed", ["runId": e["runId"]!, "error": ["code": "E1", "message": "broken"]])
            } else {
                h.call("local.completed", TextTools.run(e).objectValue!)
            }
        }
        h.runLocalTools()
        XCTAssertEqual(h.state(wf, "a"), "failed")
        XCTAssertEqual(h.state(wf, "a2"), "blocked")
        XCTAssertEqual(h.node(wf, "a2")["blockedReason"]?["code"], "upstreamFailed")
        XCTAssertEqual(h.node(wf, "a2")["blockedReason"]?["message"], "Upstream 'a' failed.")
        XCTAssertEqual(h.state(wf, "b2"), "succeeded", "the other branch went on")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "failed")
    }
}

/// Offline: remote waits with reason offline, local goes on, remote resumes by itself.
final class OfflineTests: XCTestCase {
    func testOfflineHoldsRemoteWorkAndOnlineResumesIt() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let t: JSON = ["schema": "app.workflow/v2", "name": "mixed",
                       "nodes": [["id": "r", "kind": "Job", "outputs": ["out": "ImageRef"], "resources": ["class": "remote"]],
                                 ["id": "l", "kind": "Text", "outputs": ["text": "TextRef"]]], "edges": []]
        let wf = h.create(h.register(template: t))
        h.call("network.set", ["online": false])
        XCTAssertEqual(h.state(wf, "r"), "blocked")
        XCTAssertEqual(h.node(wf, "r")["blockedReason"], ["code": "offline", "message": "Offline"])
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        let effects = h.take()
        XCTAssertFalse(effects.contains { $0["type"] == "remote.submit" })
        let local = effects.filter { $0["type"] == "local.run" }
        XCTAssertEqual(local.count, 1, "local tools go on")
        h.call("local.completed", TextTools.run(local[0]).objectValue!)
        XCTAssertEqual(h.state(wf, "l"), "succeeded")
        h.call("network.set", ["online": true])
        XCTAssertEqual(h.effects("remote.submit").count, 1, "remote work resumes by itself")
        XCTAssertEqual(h.state(wf, "r"), "queuedRemote")
    }

    func testPollsAreHeldWhileOfflineAndAskedAtOnceWhenBackOnline() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("network.set", ["online": false])
        h.advance(60)
        XCTAssertEqual(h.effects("remote.poll").count, 0)
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote", "a submitted job is not blocked")
        h.call("network.set", ["online": true])
        XCTAssertEqual(h.effects("remote.poll").count, 1)
    }

    func testASubmitRetryFallingDueWhileOfflineWaitsForTheNetworkWithoutSpendingAnAttempt() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        h.call("network.set", ["online": false])
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null, "a held retry is no deadline")
        h.advance(3_600)
        XCTAssertEqual(h.effects("remote.submit").count, 0, "no submit is attempted while offline")
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote")
        let card = h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?.arrayValue?
            .first { $0["nodeId"] == "stylize1" }
        XCTAssertEqual(card?["statusText"], "Offline — waiting for the network")
        h.call("network.set", ["online": true])
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 1, "the due retry goes as soon as the network is back")
        XCTAssertEqual(submits.first?["attempt"], 2)
        XCTAssertEqual(submits.first?["runId"], runId)
    }

    func testRetriesFallingDueOfflineNeverExhaustTheAutomaticRetriesAndTheNodeCompletesOnline() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        var runId = h.effects("remote.submit")[0]["runId"]!
        // Three transport errors are the most three automatic retries allow; each one's retry
        // falls due while offline, and the engine stays offline for several retry waits.
        for cycle in 0..<3 {
            h.call("job.transportError", ["runId": runId, "httpStatus": 502])
            h.call("network.set", ["online": false])
            for _ in 0..<4 {
                h.advance(10_000)
                XCTAssertEqual(h.effects("remote.submit").count, 0, "nothing is submitted while offline")
                XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote", "offline never fails a held retry")
            }
            h.call("network.set", ["online": true])
            let submits = h.effects("remote.submit")
            XCTAssertEqual(submits.count, 1, "the held retry goes once, back online")
            XCTAssertEqual(submits.first?["attempt"], .int(Int64(cycle + 2)), "a held retry spends no attempt")
            runId = submits[0]["runId"]!
        }
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                              "outputs": ["image": ["type": "ImageRef", "uri": "file:///out.png"]]])
        XCTAssertEqual(h.state(wf, "stylize1"), "succeeded")
    }

    func testADownloadRetryFallingDueWhileOfflineIsHeldUntilTheNetworkIsBack() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                              "outputs": ["image": ["url": "https://cdn.example/out.png"]]])
        XCTAssertEqual(h.effects("remote.download").count, 1)
        h.call("job.transportError", ["runId": runId])
        h.call("network.set", ["online": false])
        h.advance(3_600)
        XCTAssertEqual(h.effects("remote.download").count, 0, "no download is attempted while offline")
        XCTAssertEqual(h.state(wf, "stylize1"), "downloading")
        XCTAssertEqual(card(h, wf, "stylize1")?["statusText"], "Offline — waiting for the network")
        h.call("network.set", ["online": true])
        XCTAssertEqual(h.effects("remote.download").count, 1, "the download is retried when back online")
        XCTAssertEqual(card(h, wf, "stylize1")?["statusText"], "Reconnecting…", "online again, the retried download is under way")
    }

    func testAnArchivedWorkflowsHeldRetryGoesWhenTheNetworkIsBack() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("workflow.archive", ["workflowId": .string(wf)])
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        h.call("network.set", ["online": false])
        h.advance(3_600)
        XCTAssertEqual(h.effects("remote.submit").count, 0)
        // A restart in between: the archived workflow is not loaded until something needs it.
        try h.crash()
        h.call("network.set", ["online": true])
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 1, "archiving hides a workflow; its job goes on")
        XCTAssertEqual(submits.first?["runId"], runId)
        XCTAssertEqual(submits.first?["attempt"], 2)
    }

    func card(_ h: Harness, _ wf: String, _ nodeId: String) -> JSON? {
        h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?.arrayValue?.first { $0["nodeId"] == .string(nodeId) }
    }
}

/// TEST PLAN §7.3: Pause polling stops polling and the job continues remotely (Appendix B §9:
/// "Pause polling changes only status checks (does not stop jobs)"); and §3.3: after a relaunch,
/// polling resumes if enabled.
final class PollingPauseTests: XCTestCase {
    func testPausingStopsPollsOnlyAndResumingPollsAtOnce() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true])
        h.advance(120)
        let effects = h.take()
        XCTAssertFalse(effects.contains { $0["type"] == "remote.poll" })
        XCTAssertFalse(effects.contains { $0["type"] == "remote.cancel" }, "the job keeps running")
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote")
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": false])
        XCTAssertEqual(h.effects("remote.poll").count, 1)
        h.advance(11)
        XCTAssertEqual(h.effects("remote.poll").count, 1, "then every 10 s again")
    }

    func testPausedPollingSurvivesAReopen() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true])
        try h.reopen()
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["pollingPaused"], true)
        h.advance(120)
        XCTAssertEqual(h.effects("remote.poll").count, 0, "still paused after the reopen")
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": false])
        XCTAssertEqual(h.effects("remote.poll").count, 1)
    }
}

/// engine.tick on the system clock: what is due by real time fires.
final class SystemClockTests: XCTestCase {
    func testEngineTickOnTheSystemClockFiresWhatRealTimeMadeDue() throws {
        let h = try Harness(extra: ["clock": ["mode": "system"]])
        Templates.registerStylizeTools(h)
        let wf = h.create(h.register(template: Templates.stylize))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p"]]])
        }
        let awaitId = try XCTUnwrap(h.node(wf, "mask1")["awaitId"]?.stringValue)
        h.call("await.snooze", ["awaitId": .string(awaitId), "seconds": 1])
        XCTAssertEqual(h.call("engine.tick")["fired"], 0, "nothing is due yet")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(awaitId)])["status"], "snoozed")
        Thread.sleep(forTimeInterval: 1.2)
        let tick = h.call("engine.tick")
        XCTAssertGreaterThanOrEqual(tick["fired"]?.intValue ?? 0, 1, "the snooze ended by the wall clock")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(awaitId)])["status"], "pending")
        let now = try XCTUnwrap(tick["now"]?.stringValue.flatMap { Timestamp(rfc3339: $0) })
        XCTAssertLessThan(abs(Double(now.milliseconds) / 1000 - Date().timeIntervalSince1970), 5, "tick reads the real time")
        XCTAssertEqual(h.fail("clock.advance", ["seconds": 1]).code, "clockNotManual")
    }
}

final class CancelTests: XCTestCase {
    func testCancelARunningRemoteJobEmitsRemoteCancelAndEndsCancelled() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "running"])
        let r = h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        XCTAssertEqual(r["state"], "cancelled")
        XCTAssertEqual(h.effects("remote.cancel").first?["jobId"], "job-1")
        let late = h.call("job.update", ["jobId": "job-1", "status": "succeeded", "outputs": ["image": ["uri": "file:///x"]]])
        XCTAssertEqual(late["applied"], false, "a cancelled run stays cancelled")
        let e = h.fail("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        XCTAssertEqual(e.status, .state)
        XCTAssertEqual(e.message, "cannot cancel when state is cancelled")
    }

    func testCancelBeforeTheProviderAnswersCancelsTheLateJob() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "no job yet")
        h.call("job.submitted", ["runId": runId, "jobId": "job-late"])
        XCTAssertEqual(h.effects("remote.cancel").first?["jobId"], "job-late")
    }
}

final class DownloadTests: XCTestCase {
    /// A remote node with two outputs (`image`, `depth`), its job reported succeeded with a URL
    /// for each: two downloads pending. Returns the harness, the workflow and the run.
    private func pairJobSucceeded() throws -> (Harness, String, JSON) {
        let h = try Harness()
        h.register(tool: "Pair", outputs: ["image": "ImageRef", "depth": "DepthRef"], remote: true)
        let t: JSON = ["schema": "app.workflow/v2", "name": "pair",
                       "nodes": [["id": "p", "kind": "Pair", "outputs": ["image": "ImageRef", "depth": "DepthRef"],
                                  "resources": ["class": "remote"]]], "edges": []]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "p"])
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                              "outputs": ["image": ["url": "https://cdn/i.png"], "depth": ["url": "https://cdn/d.exr"]]])
        return (h, wf, runId)
    }

    func testSucceededJobsOutputsAreDownloadedPerPortThenTheNodeSucceeds() throws {
        let (h, wf, runId) = try pairJobSucceeded()
        XCTAssertEqual(h.state(wf, "p"), "downloading")
        let downloads = h.effects("remote.download")
        XCTAssertEqual(downloads.map { $0["port"] }, ["depth", "image"])
        XCTAssertEqual(downloads.first?["url"], "https://cdn/d.exr")
        h.call("job.downloaded", ["runId": runId, "port": "image", "asset": ["type": "ImageRef", "uri": "file:///c/i.png", "bytes": 1000]])
        XCTAssertEqual(h.state(wf, "p"), "downloading")
        h.call("job.transportError", ["runId": runId])
        h.advance(15)
        XCTAssertEqual(h.effects("remote.download").map { $0["port"] }, ["depth"], "the failed download is retried")
        h.call("job.downloaded", ["runId": runId, "port": "depth", "asset": ["type": "DepthRef", "uri": "file:///c/d.exr"]])
        XCTAssertEqual(h.state(wf, "p"), "succeeded")
        let outputs = h.node(wf, "p")["outputs"]
        let imageAsset = h.call("asset.get", ["assetId": outputs!["image"]!])
        XCTAssertEqual(imageAsset["provenance"], ["workflowId": .string(wf), "nodeId": "p", "runId": runId, "port": "image"])
        let bad = h.fail("job.downloaded", ["runId": runId, "port": "nope", "asset": ["uri": "file:///x"]])
        XCTAssertEqual(bad.status, .notFound)
    }

    func testADownloadThatSucceedsWhileAnotherWaitsOutATransportErrorLeavesThatRetryInPlace() throws {
        let (h, wf, runId) = try pairJobSucceeded()
        XCTAssertEqual(h.effects("remote.download").count, 2)
        // Both downloads fail in transit; the host then delivers one of them anyway.
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        h.call("job.downloaded", ["runId": runId, "port": "image", "asset": ["type": "ImageRef", "uri": "file:///c/i.png"]])
        XCTAssertNotEqual(h.call("engine.nextDeadline")["at"], .null, "the other port's retry is still due")
        h.advance(15)
        XCTAssertEqual(h.effects("remote.download").map { $0["port"] }, ["depth"], "the put-off download goes again")
        h.call("job.downloaded", ["runId": runId, "port": "depth", "asset": ["type": "DepthRef", "uri": "file:///c/d.exr"]])
        XCTAssertEqual(h.state(wf, "p"), "succeeded")
    }
}
