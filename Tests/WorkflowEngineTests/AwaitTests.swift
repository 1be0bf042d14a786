import WorkflowCore
import WorkflowEngine
import XCTest

/// Builds the sample "Stylize with user mask" workflow with load1 done, so mask1 is awaiting.
private func maskAwaiting(_ h: Harness, template: JSON = Templates.stylize) -> (wf: String, awaitId: String) {
    Templates.registerStylizeTools(h)
    let wf = h.create(h.register(template: template))
    h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
    for e in h.effects("local.run") {
        h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///photo-1"]]])
    }
    let awaitId = h.node(wf, "mask1")["awaitId"]?.stringValue ?? ""
    return (wf, awaitId)
}

/// The sample with a second mask request, `mask2`, fed by load1 too and open past the done
/// awaits' retention (30 days): its workflow stays in the Action Center while the first is
/// cleared.
private func stylizeWithASecondMaskAwait() -> JSON {
    var t = Templates.stylize.objectValue!
    var nodes = t["nodes"]!.arrayValue!
    var second = nodes[1].objectValue!
    second["id"] = "mask2"
    second["await"] = .object(second["await"]!.objectValue!.merging(["expiresIn": "PT720H"]))
    nodes.append(.object(second))
    t["nodes"] = .array(nodes)
    t["edges"] = .array(t["edges"]!.arrayValue! + [["from": ["load1", "image"], "to": ["mask2", "image"]]])
    return .object(t)
}

private func variant(_ base: JSON, node: String, await patch: JSONObject) -> JSON {
    var t = base.objectValue!
    var nodes = t["nodes"]!.arrayValue!
    let i = nodes.firstIndex { $0["id"]?.stringValue == node }!
    var n = nodes[i].objectValue!
    n["await"] = .object(n["await"]!.objectValue!.merging(patch))
    nodes[i] = .object(n)
    t["nodes"] = .array(nodes)
    return .object(t)
}

/// TEST PLAN §3 and step 5: interactive nodes file an await, never a job, never UI.
final class AwaitUniquenessTests: XCTestCase {
    func testAnOpenRequestWhoseInputIsReplacedIsWithdrawnAndAskedAgainWithTheNewInput() throws {
        let h = try Harness()
        let (wf, first) = maskAwaiting(h)
        _ = h.take()
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        XCTAssertEqual(h.node(wf, "mask1")["awaitId"], .string(first), "open while the new image is on its way")
        let run = h.effects("local.run")[0]
        h.call("local.completed", ["runId": run["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///photo-2"]]])
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(first)])["resolution"], "withdrawn")
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
        let second = h.node(wf, "mask1")["awaitId"]!
        XCTAssertNotEqual(second, .string(first))
        let effects = h.take()
        XCTAssertEqual(effects.filter { $0["type"] == "notify.withdraw" }.map { $0["awaitId"] }, [.string(first)])
        XCTAssertEqual(effects.filter { $0["type"] == "notify" }.map { $0["awaitId"] }, [second])
        XCTAssertEqual(h.call("node.history", ["workflowId": .string(wf), "nodeId": "mask1"])["runs"]?[1]?["status"], "cancelled")
        h.call("await.complete", ["awaitId": second, "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        XCTAssertEqual(h.state(wf, "mask1"), "succeeded", "answered on the current image: nothing to redo")
        XCTAssertEqual(h.call("asset.get", ["assetId": h.node(wf, "mask1")["outputs"]!["mask"]!])["type"], "MaskRef")
    }

    func testAnOpenRequestStandsWhenItsOptionalInputBecomesUnavailable() throws {
        let h = try Harness()
        h.register(tool: "Img", outputs: ["image": "ImageRef"])
        h.register(tool: "Hint", outputs: ["hint": "MaskRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "hinted",
                       "nodes": [["id": "a", "kind": "Img", "outputs": ["image": "ImageRef"]],
                                 ["id": "p", "kind": "Hint", "outputs": ["hint": "MaskRef"]],
                                 ["id": "mask1", "kind": "UserMaskEditor",
                                  "inputs": ["image": "ImageRef", "hint": ["type": "MaskRef", "optional": true]],
                                  "outputs": ["mask": "MaskRef"], "await": ["type": "draw_mask"]]],
                       "edges": [["from": ["a", "image"], "to": ["mask1", "image"]], ["from": ["p", "hint"], "to": ["mask1", "hint"]]]]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for e in h.effects("local.run") {
            let port = e["nodeId"] == "a" ? "image" : "hint"
            let type = e["nodeId"] == "a" ? "ImageRef" : "MaskRef"
            h.call("local.completed", ["runId": e["runId"]!, "outputs": [port: ["type": .string(type), "uri": "file:///x"]]])
        }
        let first = h.node(wf, "mask1")["awaitId"]!
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
        h.call("await.claim", ["awaitId": first, "claimant": "alice"])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "p"])
        let e = h.effects("local.run")[0]
        h.call("local.completed", ["runId": e["runId"]!, "error": ["code": "E1", "message": "broken"]])
        let request = h.call("await.get", ["awaitId": first])
        XCTAssertEqual(request["status"], "pending", "the hint is unavailable, not replaced: the request stands")
        XCTAssertEqual(request["claim"]?["claimant"], "alice", "and alice keeps it")
        XCTAssertEqual(h.node(wf, "mask1")["awaitId"], first)
        h.call("await.complete", ["awaitId": first, "claimant": "alice", "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        XCTAssertEqual(h.state(wf, "mask1"), "succeeded", "and the answer stands, as a node's result does")
    }

    func testAnInteractiveNodeThatBecomesReadyFilesOneAwaitAndNoJob() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        let wf = h.create(h.register(template: Templates.stylize))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        let run = h.effects("local.run")[0]
        h.call("local.completed", ["runId": run["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p"]]])
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
        let effects = h.take()
        XCTAssertFalse(effects.contains { $0["type"] == "remote.submit" || $0["type"] == "local.run" }, "no job")
        let notify = effects.filter { $0["type"] == "notify" }
        XCTAssertEqual(notify.count, 1)
        let n = notify[0]
        let awaitId = n["awaitId"]!.stringValue!
        XCTAssertEqual(n["category"], "AWAIT_DRAW_MASK")
        XCTAssertEqual(n["actions"], ["Open", "Snooze"])
        XCTAssertEqual(n["title"], "Draw a mask")
        XCTAssertEqual(n["body"], "Mask the subject for the next step.")
        XCTAssertEqual(n["deepLink"], .string("app://workflow/\(wf)/node/mask1?await=\(awaitId)"))
        let a = h.call("await.get", ["awaitId": .string(awaitId)])
        XCTAssertEqual(a["status"], "pending")
        XCTAssertEqual(a["expiresAt"], "2026-01-02T00:00:00.000Z", "PT24H after filing")
        XCTAssertNil(a["claim"], "never claimed by filing")
    }

    func testNoDuplicateAwaitAfterRelaunchAndThePendingOneIsNotifiedAgainWithItsId() throws {
        let h = try Harness(file: true)
        let (wf, awaitId) = maskAwaiting(h)
        let firstNotify = h.effects("notify")
        XCTAssertEqual(firstNotify.count, 1, "notified once when filed")
        try h.crash()
        let listed = h.call("await.list")["pending"]!.arrayValue!
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed[0]["awaitId"], .string(awaitId))
        let again = h.effects("notify")
        XCTAssertEqual(again.count, 1, "possibly undelivered: notified again")
        XCTAssertEqual(again[0]["awaitId"], .string(awaitId))
        XCTAssertEqual(again[0]["id"], firstNotify[0]["id"], "the same notification, delivered again")
        try h.reopen()
        XCTAssertEqual(h.call("await.list")["pending"]?.arrayValue?.count, 1)
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["awaits"]?.arrayValue?.count, 1)
    }

    /// 003's golden path GP3 ("Enter caption" await, force-quit, relaunch: the same await in the
    /// Action Center; complete → downstream continues) and step 6 (completing a persisted await
    /// updates the instance and the list; the count goes down).
    func testAnEnterCaptionAwaitSurvivesAForceQuitAndCompletingItAfterRelaunchLetsTheDownstreamNodeRun() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let template: JSON = [
            "schema": "app.workflow/v2", "name": "Caption",
            "nodes": [["id": "caption1", "kind": "UserTextEntry", "outputs": ["text": "TextRef"],
                       "await": ["type": "enter_text", "blocking": true,
                                 "notification": ["title": "Enter caption", "body": "Write the photo's caption."]]],
                      ["id": "loud1", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]]],
            "edges": [["from": ["caption1", "text"], "to": ["loud1", "text"]]],
        ]
        let wf = h.create(h.register(template: template))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        let awaitId = try XCTUnwrap(h.node(wf, "caption1")["awaitId"]?.stringValue)
        XCTAssertEqual(h.effects("notify").map { $0["title"] }, ["Enter caption"])
        XCTAssertEqual(h.state(wf, "loud1"), "blocked")

        try h.crash()  // force-quit
        let before = h.call("await.list")
        XCTAssertEqual(before["pending"]?.arrayValue?.map { $0["awaitId"] }, [.string(awaitId)], "the same await, once")
        XCTAssertEqual(before["counts"], ["pending": 1, "snoozed": 0, "done": 0])
        XCTAssertEqual(h.call("badges.get")["actionCenter"], 1)
        XCTAssertEqual(h.call("badges.get")["workflows"]?[wf], 1)
        XCTAssertEqual(h.state(wf, "caption1"), "awaitingUser")

        h.call("await.complete", ["awaitId": .string(awaitId),
                                  "result": ["asset": ["type": "TextRef", "uri": .string(TextAsset.uri("a cat on a mat"))]]])
        let after = h.call("await.list")
        XCTAssertEqual(after["counts"], ["pending": 0, "snoozed": 0, "done": 1], "the count goes down")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(awaitId)])["resolution"], "completed")
        XCTAssertEqual(h.call("badges.get")["actionCenter"], 0)
        XCTAssertNil(h.call("badges.get")["workflows"]?[wf])
        XCTAssertEqual(h.state(wf, "caption1"), "succeeded", "the instance is updated")

        XCTAssertEqual(h.runLocalTools(), 1, "downstream continues")
        XCTAssertEqual(h.state(wf, "loud1"), "succeeded")
        let loud = try XCTUnwrap(h.node(wf, "loud1")["outputs"]?["text"])
        XCTAssertEqual(h.call("asset.get", ["assetId": loud])["uri"]?.stringValue.flatMap(TextAsset.text), "A CAT ON A MAT")
        try h.crash()
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
        XCTAssertEqual(h.call("await.list")["counts"], ["pending": 0, "snoozed": 0, "done": 1])
    }

    func testAnAwaitingNodeCannotBeStartedAgainSoNoSecondAwaitIsFiled() throws {
        let h = try Harness(file: true)
        let (wf, awaitId) = maskAwaiting(h)
        for op in ["node.run", "node.rerunLatest", "node.retry"] {
            let e = h.fail(op, ["workflowId": .string(wf), "nodeId": "mask1"])
            XCTAssertEqual(e.status, .state, "\(op): \(e.code)")
        }
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        try h.crash()
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        let awaits = h.call("workflow.get", ["workflowId": .string(wf)])["awaits"]?.arrayValue ?? []
        XCTAssertEqual(awaits.map { $0["awaitId"] }, [.string(awaitId)], "still exactly one await")
        XCTAssertFalse(h.take().contains { $0["type"] == "notify" && $0["awaitId"] != .string(awaitId) })
    }
}

/// Step 5 / TEST PLAN §6 and §8: claim, complete, snooze, release, skip, expiry.
final class AwaitLifecycleTests: XCTestCase {
    func testClaimLeaseConflictAndExpiry() throws {
        let h = try Harness()
        let (_, id) = maskAwaiting(h)
        let c = h.call("await.claim", ["awaitId": .string(id), "claimant": "phone"])
        XCTAssertEqual(c["leaseExpiresAt"], "2026-01-01T00:05:00.000Z")
        let e = h.fail("await.claim", ["awaitId": .string(id), "claimant": "ipad"])
        XCTAssertEqual(e.status, .conflict)
        XCTAssertEqual(e.code, "alreadyClaimed")
        XCTAssertEqual(h.fail("await.complete", ["awaitId": .string(id), "claimant": "ipad",
                                                 "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]]).code, "alreadyClaimed")
        h.advance(301)
        XCTAssertNil(h.call("await.get", ["awaitId": .string(id)])["claim"], "lease expired: pending, unclaimed")
        XCTAssertEqual(h.call("await.claim", ["awaitId": .string(id), "claimant": "ipad"])["claimant"], "ipad")
    }

    func testCompletingWithAMaskWritesTheOutputWithProvenanceAndMovesOn() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.call("await.claim", ["awaitId": .string(id), "claimant": "phone"])
        let r = h.call("await.complete", ["awaitId": .string(id), "claimant": "phone",
                                          "result": ["asset": ["type": "MaskRef", "uri": "file:///mask.png", "bytes": 512]]])
        XCTAssertEqual(r["status"], "done")
        XCTAssertEqual(r["warnings"], [])
        XCTAssertEqual(h.state(wf, "mask1"), "succeeded")
        let mask = h.call("asset.get", ["assetId": h.node(wf, "mask1")["outputs"]!["mask"]!])
        XCTAssertEqual(mask["provenance"]?["nodeId"], "mask1")
        XCTAssertEqual(mask["provenance"]?["port"], "mask")
        XCTAssertEqual(h.state(wf, "stylize1"), "ready", "downstream becomes ready")
        let effects = h.take()
        XCTAssertTrue(effects.contains { $0["type"] == "notify.withdraw" && $0["awaitId"] == .string(id) })
        XCTAssertEqual(h.fail("await.complete", ["awaitId": .string(id), "result": ["cancel": true]]).code, "awaitNotOpen")
    }

    func testAnEmptyMaskWarnsAndContinuesWithTheOutputSaved() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        let r = h.call("await.complete", ["awaitId": .string(id),
                                          "result": ["asset": ["type": "MaskRef", "uri": "file:///empty.png", "meta": ["coverage": 0]]]])
        XCTAssertEqual(r["warnings"]?[0]?["code"], "emptyMask")
        XCTAssertEqual(h.state(wf, "mask1"), "succeeded")
        XCTAssertNotNil(h.node(wf, "mask1")["outputs"]?["mask"])
    }

    func testAResultOfTheWrongTypeIsRejectedAndChangesNothing() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        let e = h.fail("await.complete", ["awaitId": .string(id), "result": ["asset": ["type": "ImageRef", "uri": "file:///x"]]])
        XCTAssertEqual(e.status, .invalid)
        XCTAssertEqual(e.code, "resultTypeMismatch")
        XCTAssertEqual(h.fail("await.complete", ["awaitId": .string(id), "result": ["params": ["a": 1]]]).code, "resultTypeMismatch")
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "pending")
    }

    func testDismissingTheEditorReturnsTheAwaitToPendingWithNoPartialOutput() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.call("await.claim", ["awaitId": .string(id), "claimant": "phone"])
        h.call("await.release", ["awaitId": .string(id), "claimant": "phone"])
        let a = h.call("await.get", ["awaitId": .string(id)])
        XCTAssertEqual(a["status"], "pending")
        XCTAssertNil(a["claim"], "no claim left dangling")
        XCTAssertEqual(h.node(wf, "mask1")["outputs"], [:])
    }

    func testSnoozeMovesToSnoozedForAnHourComesBackByItselfAndTheSixthIsRefused() throws {
        let h = try Harness()
        let (_, id) = maskAwaiting(h)
        let s = h.call("await.snooze", ["awaitId": .string(id)])
        XCTAssertEqual(s["status"], "snoozed")
        XCTAssertEqual(s["snoozeUntil"], "2026-01-01T01:00:00.000Z", "now + 1 h")
        XCTAssertNil(s["claim"], "snooze does not claim")
        XCTAssertEqual(h.call("await.list")["counts"], ["pending": 0, "snoozed": 1, "done": 0])
        _ = h.take()
        h.advance(3600)
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "pending")
        XCTAssertEqual(h.effects("notify").count, 1, "reminded when the snooze ends")
        for _ in 2...5 { h.call("await.snooze", ["awaitId": .string(id), "seconds": 60]); h.advance(60) }
        let e = h.fail("await.snooze", ["awaitId": .string(id)])
        XCTAssertEqual(e.code, "snoozeLimitReached")
        XCTAssertEqual(e.status, .state)
        // What is offered no longer says Snooze: not the reminder, not the await.
        XCTAssertEqual(h.take().last { $0["type"] == "notify" }?["actions"], ["Open"])
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["actions"], ["Open"])
        XCTAssertEqual(h.fail("await.respond", ["awaitId": .string(id), "action": "Snooze"]).code, "snoozeLimitReached",
                       "a Snooze pressed on an older notification is told why")
    }

    func testAClaimThatWakesASnoozeNotifiesAgainSoAReleasedAwaitIsStillOnTheDevices() throws {
        let h = try Harness(file: true)
        let (_, id) = maskAwaiting(h)
        h.call("await.snooze", ["awaitId": .string(id)])
        XCTAssertEqual(h.take().filter { $0["type"] == "notify.withdraw" }.count, 1, "snoozing withdraws the notification")
        h.call("await.claim", ["awaitId": .string(id), "claimant": "ipad"])
        h.call("await.release", ["awaitId": .string(id), "claimant": "ipad"])
        try h.crash()
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "pending")
        let notify = h.effects("notify")
        XCTAssertEqual(notify.map { $0["awaitId"] }, [.string(id)], "pending again, so notified again")
    }

    func testASnoozedAwaitStillExpiresOnTime() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.advance(23 * 3600)
        h.call("await.snooze", ["awaitId": .string(id), "seconds": 7200])
        h.advance(3600 - 1)
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "snoozed")
        h.advance(1)
        XCTAssertEqual(h.state(wf, "mask1"), "failed", "expiry is not postponed by a snooze")
        XCTAssertEqual(h.node(wf, "mask1")["lastError"]?["code"], "awaitExpired")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["resolution"], "expired")
    }

    func testAClearedAwaitIsUnknownEvenWhileItsWorkflowHasAnotherOpenOne() throws {
        let h = try Harness()
        let (wf, first) = maskAwaiting(h, template: stylizeWithASecondMaskAwait())
        let other = h.node(wf, "mask2")["awaitId"]!
        let link = h.call("await.get", ["awaitId": .string(first)])["deepLink"]!
        h.call("await.complete", ["awaitId": .string(first), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        let done = h.call("await.get", ["awaitId": .string(first)])
        XCTAssertEqual(done["actions"], [], "a done await has no notification and nothing to act on")
        XCTAssertEqual(h.fail("deeplink.parse", ["url": link]).details["reason"], "awaitDone")
        h.advance(7 * 86_400)
        XCTAssertEqual(h.fail("await.get", ["awaitId": .string(first)]).code, "unknownAwait")
        XCTAssertEqual(h.fail("await.respond", ["awaitId": .string(first), "action": "Open"]).code, "unknownAwait")
        let stale = h.fail("deeplink.parse", ["url": link])
        XCTAssertEqual(stale.code, "badDeepLink")
        XCTAssertEqual(stale.details["reason"], "unknownAwait", "cleared: gone, as await.get answers it")
        XCTAssertEqual(h.call("await.get", ["awaitId": other])["status"], "pending")
    }

    func testAStaleNotificationActsOnNothingAndPointsAtTheNode() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.call("await.complete", ["awaitId": .string(id), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        for action in ["Open", "Snooze"] {
            let e = h.fail("await.respond", ["awaitId": .string(id), "action": .string(action)])
            XCTAssertEqual(e.code, "awaitNotOpen", action)
            XCTAssertEqual(e.details["navigate"]?["workflowId"], .string(wf))
            XCTAssertEqual(e.details["navigate"]?["nodeId"], "mask1")
        }
    }

    func testActionCenterListsPendingTwoSnoozedOneDoneZeroByUrgencyThenAge() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        let urgent = variant(Templates.stylize, node: "mask1", await: ["urgency": "blocking"])
        let (wf1, a1) = maskAwaiting(h)
        h.advance(60)
        let tpl2 = h.register(template: urgent)
        let wf2 = h.create(tpl2)
        h.call("node.run", ["workflowId": .string(wf2), "nodeId": "load1"])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p2"]]])
        }
        let a2 = h.node(wf2, "mask1")["awaitId"]!.stringValue!
        h.advance(60)
        let wf3 = h.create(h.register(template: Templates.stylize), ["title": "Third"])
        h.call("node.run", ["workflowId": .string(wf3), "nodeId": "load1"])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p3"]]])
        }
        let a3 = h.node(wf3, "mask1")["awaitId"]!.stringValue!
        h.call("await.snooze", ["awaitId": .string(a3)])
        let list = h.call("await.list")
        XCTAssertEqual(list["counts"], ["pending": 2, "snoozed": 1, "done": 0])
        XCTAssertEqual(list["pending"]?.arrayValue?.map { $0["awaitId"] }, [.string(a2), .string(a1)], "urgency first")
        let grouped = h.call("await.list", ["groupBy": "workflow"])
        XCTAssertEqual(grouped["pending"]?[0]?["workflowId"], .string(wf2))
        XCTAssertEqual(grouped["pending"]?[1]?["awaits"]?[0]?["awaitId"], .string(a1))
        let badges = h.call("badges.get")
        XCTAssertEqual(badges["actionCenter"], 2)
        XCTAssertEqual(badges["workflows"]?[wf1], 1)
        XCTAssertNil(badges["workflows"]?[wf3], "snoozed awaits do not badge")
        XCTAssertEqual(badges["nodes"]?[wf2]?["mask1"], 1)
        XCTAssertEqual(badges["blocking"]?[wf1], true)
    }

    func testDoneItemsClearAfterSevenDays() throws {
        let h = try Harness()
        let (_, id) = maskAwaiting(h)
        h.call("await.complete", ["awaitId": .string(id), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        XCTAssertEqual(h.call("await.list")["counts"]?["done"], 1)
        h.advance(7 * 86_400 - 1)
        XCTAssertEqual(h.call("await.list")["counts"]?["done"], 1)
        h.advance(1)
        XCTAssertEqual(h.call("await.list")["counts"]?["done"], 0)
    }

    func testExpiryWithCancelFailsTheNodeWithAnExplanation() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.advance(24 * 3600)
        XCTAssertEqual(h.state(wf, "mask1"), "failed")
        XCTAssertEqual(h.node(wf, "mask1")["lastError"]?["code"], "awaitExpired")
        let a = h.call("await.get", ["awaitId": .string(id)])
        XCTAssertEqual(a["status"], "done")
        XCTAssertEqual(a["resolution"], "expired")
    }

    /// TEST PLAN §10.2 (killed, relaunched later) with seed 000 §5.5 ("If expiresAt passes:
    /// .cancel: mark failed"): relaunched a day past its expiry, before any tick, the request can
    /// be read and released but not claimed, snoozed, answered or acted on from its
    /// notification (`awaitExpired`, nothing changed); the tick then applies its timeout.
    func testARequestPastItsExpiryAfterARelaunchCannotBeAnsweredAndTheTickFailsItsNode() throws {
        let h = try Harness(file: true)
        let (wf, id) = maskAwaiting(h)
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["expiresAt"], "2026-01-02T00:00:00.000Z")
        h.call("await.claim", ["awaitId": .string(id), "claimant": "ipad"])
        try h.relaunch(at: "2026-01-03T00:00:00.000Z")
        XCTAssertEqual(h.now(), "2026-01-03T00:00:00.000Z")
        let answer: JSONObject = ["awaitId": .string(id), "claimant": "ipad",
                                  "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]]
        for (op, args) in [("await.claim", ["awaitId": JSON.string(id), "claimant": "phone"]), ("await.complete", answer),
                           ("await.snooze", ["awaitId": .string(id)]), ("await.skip", ["awaitId": .string(id)]),
                           ("await.respond", ["awaitId": .string(id), "action": "Open"])] {
            let e = h.fail(op, args)
            XCTAssertEqual(e.status, .state, op)
            XCTAssertEqual(e.code, "awaitExpired", op)
            XCTAssertEqual(e.details["expiresAt"], "2026-01-02T00:00:00.000Z", op)
            XCTAssertEqual(e.details["onTimeout"], "cancel", op)
        }
        XCTAssertEqual(h.fail("await.respond", ["awaitId": .string(id), "action": "Open"]).details["navigate"]?["nodeId"], "mask1")
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser", "a refused answer changed nothing")
        // What a shell shows offers none of it: actions enabled exactly when the op is accepted.
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["actions"], [])
        let card = h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?.arrayValue?.first { $0["nodeId"] == "mask1" }
        for action in ["openEditor", "snooze", "skip"] {
            XCTAssertEqual(card?["actions"]?[action]?["enabled"], false, action)
            XCTAssertEqual(card?["actions"]?[action]?["reason"], "The request expired at 2026-01-02T00:00:00.000Z", action)
        }
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "pending")
        h.call("await.release", ["awaitId": .string(id)])
        XCTAssertEqual(h.call("engine.tick")["fired"]?.intValue.map { $0 > 0 }, true)
        XCTAssertEqual(h.state(wf, "mask1"), "failed")
        XCTAssertEqual(h.node(wf, "mask1")["lastError"]?["code"], "awaitExpired")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["resolution"], "expired")
        XCTAssertEqual(h.fail("await.complete", answer).code, "awaitNotOpen", "done now: the usual refusal")
    }

    /// TEST PLAN §6 (snooze returns after 1 h) across §10.2's kill: relaunched two hours after a
    /// snooze, the await is still snoozed until the first tick, which wakes it and notifies
    /// again.
    func testASnoozeThatEndedWhileTheAppWasKilledWakesAtTheFirstTickAfterTheRelaunch() throws {
        let h = try Harness(file: true)
        let (_, id) = maskAwaiting(h)
        h.call("await.snooze", ["awaitId": .string(id)])
        _ = h.take()
        try h.relaunch(at: "2026-01-01T02:00:00.000Z")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "snoozed", "time does not pass by itself")
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], "2026-01-01T01:00:00.000Z", "overdue: the host ticks at once")
        h.call("engine.tick")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["status"], "pending")
        XCTAssertEqual(h.effects("notify").map(\.["awaitId"]), [.string(id)], "notified again, once")
    }

    /// TEST PLAN §6 (Done clears after 7 days) across §10.2's kill: relaunched eight days after
    /// the answer, the first tick clears the done await from the Action Center.
    func testADoneAwaitWhoseRetentionEndedWhileTheAppWasKilledIsClearedAtTheFirstTick() throws {
        let h = try Harness(file: true)
        let (_, id) = maskAwaiting(h)
        h.call("await.complete", ["awaitId": .string(id), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        try h.relaunch(at: "2026-01-09T00:00:00.000Z")
        XCTAssertEqual(h.call("await.list")["counts"]?["done"], 1)
        h.call("engine.tick")
        XCTAssertEqual(h.call("await.list")["counts"]?["done"], 0)
        XCTAssertEqual(h.fail("await.get", ["awaitId": .string(id)]).code, "unknownAwait")
    }

    func testExpiryWithSkipLetsConsumersWithOptionalPortsGoOn() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        h.register(tool: "Blend", inputs: ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                   outputs: ["image": "ImageRef"])
        var t = variant(Templates.stylize, node: "mask1", await: ["resumePolicy": ["onTimeout": "skip"], "expiresIn": "PT1H"])
            .objectValue!
        t["nodes"] = .array(t["nodes"]!.arrayValue! + [["id": "blend1", "kind": "Blend",
                                                         "inputs": ["image": "ImageRef", "mask": ["type": "MaskRef", "optional": true]],
                                                         "outputs": ["image": "ImageRef"]]])
        t["edges"] = .array(t["edges"]!.arrayValue! + [["from": ["load1", "image"], "to": ["blend1", "image"]],
                                                       ["from": ["mask1", "mask"], "to": ["blend1", "mask"]]])
        let (wf, id) = maskAwaiting(h, template: .object(t))
        XCTAssertEqual(h.state(wf, "blend1"), "blocked", "waits for the optional mask while it may come")
        h.advance(3600)
        XCTAssertEqual(h.state(wf, "mask1"), "skipped")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["resolution"], "expired")
        XCTAssertEqual(h.state(wf, "blend1"), "ready", "optional port: goes on without it")
        XCTAssertEqual(h.node(wf, "stylize1")["blockedReason"]?["code"], "upstreamFailed", "required port: cannot")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "active", "blend1 can still run")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "blend1"])
        let blend = h.effects("local.run").first { $0["nodeId"] == "blend1" }!
        h.call("local.completed", ["runId": blend["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///b"]]])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "failed",
                       "nothing more can move: stylize1 needs the skipped mask")
        XCTAssertEqual(h.call("workflow.list", ["filter": "failed"])["rows"]?.arrayValue?.count, 1)
    }

    func testSkipOnlyWhereTheSpecAllows() throws {
        let h = try Harness()
        let (_, id) = maskAwaiting(h)
        XCTAssertEqual(h.fail("await.skip", ["awaitId": .string(id)]).code, "skipNotAllowed")
        let h2 = try Harness()
        let (wf2, id2) = maskAwaiting(h2, template: variant(Templates.stylize, node: "mask1", await: ["skippable": true]))
        XCTAssertEqual(h2.call("await.get", ["awaitId": .string(id2)])["actions"], ["Open", "Snooze", "Skip"])
        h2.call("await.skip", ["awaitId": .string(id2)])
        XCTAssertEqual(h2.state(wf2, "mask1"), "skipped")
    }

    /// A done await cleared past its retention stays gone after the engine reopens its file
    /// store, while its workflow still has another open await (so the workflow is still in the
    /// Action Center): the store keeps the cleared flag, not only memory.
    func testAClearedAwaitStaysGoneAfterAReopen() throws {
        let h = try Harness(file: true)
        let (_, first) = maskAwaiting(h, template: stylizeWithASecondMaskAwait())
        h.call("await.complete", ["awaitId": .string(first), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        h.advance(7 * 86_400)
        XCTAssertEqual(h.fail("await.get", ["awaitId": .string(first)]).code, "unknownAwait")
        try h.reopen()
        XCTAssertEqual(h.fail("await.get", ["awaitId": .string(first)]).code, "unknownAwait", "still cleared after a reopen")
        let done = h.call("await.list")["done"]?.arrayValue ?? []
        XCTAssertFalse(done.contains { $0["awaitId"]?.stringValue == first }, "not back in the Action Center")
    }
}

/// TEST PLAN §8 editor flows: asset picker and param confirm.
final class EditorFlowTests: XCTestCase {
    private let pickerTemplate: JSON = [
        "schema": "app.workflow/v2", "name": "pick",
        "nodes": [["id": "a", "kind": "Src", "outputs": ["image": "ImageRef"]],
                  ["id": "b", "kind": "Src", "outputs": ["image": "ImageRef"]],
                  ["id": "pick", "kind": "UserAssetPicker", "inputs": ["a": "ImageRef", "b": "ImageRef"],
                   "outputs": ["image": "ImageRef"], "await": ["type": "select_asset", "resumePolicy": ["onTimeout": "autoDefault"]]],
                  ["id": "use", "kind": "Use", "inputs": ["image": "ImageRef"], "outputs": ["out": "FileRef"]]],
        "edges": [["from": ["a", "image"], "to": ["pick", "a"]], ["from": ["b", "image"], "to": ["pick", "b"]],
                  ["from": ["pick", "image"], "to": ["use", "image"]]],
    ]

    func testAssetPickerChoiceEmitsASingleAssetAndTheDownstreamNodeBecomesReady() throws {
        let h = try Harness()
        h.register(tool: "Src", outputs: ["image": "ImageRef"])
        h.register(tool: "Use", inputs: ["image": "ImageRef"], outputs: ["out": "FileRef"])
        let wf = h.create(h.register(template: pickerTemplate))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": .string("file:///\(e["nodeId"]!.stringValue!)")]]])
        }
        let id = h.node(wf, "pick")["awaitId"]!
        let a = h.call("await.get", ["awaitId": id])
        XCTAssertEqual(a["category"], "AWAIT_SELECT_ASSET")
        XCTAssertEqual(a["candidates"]?.arrayValue?.count, 2)
        XCTAssertEqual(h.fail("await.respond", ["awaitId": id, "action": "Approve"]).code, "unknownAction")
        h.call("await.respond", ["awaitId": id, "action": "Choose B"])
        XCTAssertEqual(h.state(wf, "pick"), "succeeded")
        let chosen = h.call("asset.get", ["assetId": h.node(wf, "pick")["outputs"]!["image"]!])
        XCTAssertEqual(chosen["uri"], "file:///b")
        XCTAssertEqual(chosen["provenance"]?["nodeId"], "pick")
        XCTAssertEqual(h.effects("local.run").first?["nodeId"], "use", "auto-running: the consumer starts")
    }

    /// A picker over ports `port`s (each fed by its own Src), run until it awaits; returns (workflow, await id).
    private func pickerAwaiting(_ h: Harness, ports: [(String, String)], onTimeout: String = "autoDefault") -> (String, JSON) {
        var nodes: [JSON] = []
        var edges: [JSON] = []
        var inputs = JSONObject()
        for (port, type) in ports {
            h.register(tool: "Src\(type)", outputs: ["out": .string(type)])
            nodes.append(["id": .string("src\(port)"), "kind": .string("Src\(type)"), "outputs": ["out": .string(type)]])
            edges.append(["from": [.string("src\(port)"), "out"], "to": ["pick", .string(port)]])
            inputs[port] = .string(type)
        }
        nodes.append(["id": "pick", "kind": "Picker", "inputs": .object(inputs), "outputs": ["image": "ImageRef"],
                      "await": ["type": "select_asset", "resumePolicy": ["onTimeout": .string(onTimeout)], "expiresIn": "PT1H"]])
        let t: JSON = ["schema": "app.workflow/v2", "name": "picker", "nodes": .array(nodes), "edges": .array(edges)]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for e in h.effects("local.run") {
            let port = String(e["nodeId"]!.stringValue!.dropFirst(3))
            let type = ports.first { $0.0 == port }!.1
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["out": ["type": .string(type), "uri": .string("file:///\(port)")]]])
        }
        return (wf, h.node(wf, "pick")["awaitId"]!)
    }

    func testAPickerWhoseCandidateIsDeletedIsWithdrawnAndItsNodeFails() throws {
        let h = try Harness()
        let (wf, id) = pickerAwaiting(h, ports: [("A", "ImageRef"), ("B", "ImageRef")])
        _ = h.take()
        let gone = h.node(wf, "srcA")["outputs"]!["out"]!
        h.call("asset.delete", ["assetId": gone])
        XCTAssertEqual(h.call("await.get", ["awaitId": id])["resolution"], "withdrawn", "Choose A could never be answered")
        XCTAssertEqual(h.state(wf, "pick"), "failed")
        XCTAssertEqual(h.node(wf, "pick")["lastError"]?["code"], "inputAssetGone")
        XCTAssertEqual(h.effects("notify.withdraw").map { $0["awaitId"] }, [id])
        XCTAssertEqual(h.fail("await.respond", ["awaitId": id, "action": "Choose B"]).code, "awaitNotOpen")
    }

    func testChooseBPicksTheSecondCandidateEvenBesideAPortNamedB() throws {
        let h = try Harness()
        let (wf, id) = pickerAwaiting(h, ports: [("B", "ImageRef"), ("C", "ImageRef")])
        XCTAssertEqual(h.call("await.get", ["awaitId": id])["candidates"],
                       [["port": "B", "assetId": h.node(wf, "srcB")["outputs"]!["out"]!],
                        ["port": "C", "assetId": h.node(wf, "srcC")["outputs"]!["out"]!]])
        h.call("await.respond", ["awaitId": id, "action": "Choose B"])
        XCTAssertEqual(h.call("asset.get", ["assetId": h.node(wf, "pick")["outputs"]!["image"]!])["uri"], "file:///C")
    }

    func testAPickerOffersOnlyCandidatesAnOutputTakesAndDefaultsToTheOneThatFits() throws {
        let h = try Harness()
        let (wf, id) = pickerAwaiting(h, ports: [("a", "ImageRef"), ("m", "MaskRef")])
        let a = h.call("await.get", ["awaitId": id])
        XCTAssertEqual(a["candidates"], [["port": "a", "assetId": h.node(wf, "srca")["outputs"]!["out"]!]])
        XCTAssertEqual(a["actions"], ["Choose A", "Open"], "no Choose B that could only be refused")
        XCTAssertEqual(h.fail("await.complete", ["awaitId": id, "result": ["choice": "m"]]).code, "invalidChoice")
        h.call("clock.advance", ["seconds": 3600])
        XCTAssertEqual(h.state(wf, "pick"), "succeeded", "autoDefault: the single candidate that fits")
        XCTAssertEqual(h.call("asset.get", ["assetId": h.node(wf, "pick")["outputs"]!["image"]!])["uri"], "file:///a")
    }

    func testParamConfirmCancelReturnsToPendingAndApproveRunsTheToolWithTheConfirmedParams() throws {
        let h = try Harness()
        h.register(tool: "Gen", outputs: ["image": "ImageRef"], remote: true, defaults: ["steps": 20])
        let t: JSON = ["schema": "app.workflow/v2", "name": "confirm",
                       "nodes": [["id": "gen", "kind": "Gen", "outputs": ["image": "ImageRef"], "resources": ["class": "remote"],
                                  "await": ["type": "confirm_params", "urgency": "low"]]]]
        let wf = h.create(h.register(template: t))
        XCTAssertEqual(h.state(wf, "gen"), "awaitingUser")
        let id = h.node(wf, "gen")["awaitId"]!
        h.call("await.claim", ["awaitId": id, "claimant": "phone"])
        h.call("await.release", ["awaitId": id, "claimant": "phone"])  // Cancel in the editor
        XCTAssertEqual(h.call("await.get", ["awaitId": id])["status"], "pending")
        XCTAssertTrue(h.effects("remote.submit").isEmpty)
        h.call("await.complete", ["awaitId": id, "result": ["params": ["steps": 40]]])
        XCTAssertEqual(h.state(wf, "gen"), "queuedRemote")
        let submit = h.effects("remote.submit")
        XCTAssertEqual(submit.count, 1)
        XCTAssertEqual(submit[0]["params"]?["steps"], 40)
    }
}

/// TEST PLAN §10: notifications and deep links.
final class DeepLinkTests: XCTestCase {
    func testAValidLinkParsesWithoutClaimingAndABadOrStaleOneIsBadDeepLink() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        let url = "app://workflow/\(wf)/node/mask1?await=\(id)"
        XCTAssertEqual(h.call("deeplink.parse", ["url": .string(url)]), ["workflowId": .string(wf), "nodeId": "mask1", "awaitId": .string(id)])
        XCTAssertNil(h.call("await.get", ["awaitId": .string(id)])["claim"], "no background claim")
        XCTAssertEqual(h.call("deeplink.build", ["workflowId": .string(wf), "nodeId": "mask1", "awaitId": .string(id)])["url"], .string(url))
        for (bad, reason) in [("http://workflow/\(wf)", "wrongScheme"), ("app://flow/\(wf)", "malformed"),
                              ("app://workflow/wf-404", "unknownWorkflow"), ("app://workflow/\(wf)/node/nope", "unknownNode"),
                              ("app://workflow/\(wf)/node/mask1?await=aw-404", "unknownAwait")] {
            let e = h.fail("deeplink.parse", ["url": .string(bad)])
            XCTAssertEqual(e.code, "badDeepLink", bad)
            XCTAssertEqual(e.details["reason"], .string(reason), bad)
        }
        h.call("await.complete", ["awaitId": .string(id), "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        XCTAssertEqual(h.fail("deeplink.parse", ["url": .string(url)]).details["reason"], "awaitDone", "stale")
    }

    /// A link is built only from ids it can be parsed back into: an empty node or await id is
    /// refused, not turned into `…/node/` or `?await=`.
    func testDeepLinkBuildRefusesEmptyIdsItsParseWouldRefuse() throws {
        let h = try Harness()
        let (wf, _) = maskAwaiting(h)
        for args: JSONObject in [["workflowId": .string(wf), "nodeId": ""],
                                 ["workflowId": .string(wf), "nodeId": "mask1", "awaitId": ""],
                                 ["workflowId": ""]] {
            let e = h.fail("deeplink.build", args)
            XCTAssertEqual(e.code, "invalidArgument", "\(args)")
        }
        let url = h.call("deeplink.build", ["workflowId": .string(wf), "nodeId": "mask1"])["url"]!
        XCTAssertEqual(h.call("deeplink.parse", ["url": url])["nodeId"], "mask1")
    }

    func testAFragmentAfterTheQueryAndATrailingSlashLeaveTheLinkAsItWas() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        let expected: JSON = ["workflowId": .string(wf), "nodeId": "mask1", "awaitId": .string(id)]
        XCTAssertEqual(h.call("deeplink.parse", ["url": .string("app://workflow/\(wf)/node/mask1?await=\(id)#top")]), expected)
        XCTAssertEqual(h.call("deeplink.parse", ["url": .string("app://workflow/\(wf)/node/mask1/?await=\(id)")]), expected)
        XCTAssertEqual(h.call("deeplink.parse", ["url": .string("app://workflow/\(wf)/")]), ["workflowId": .string(wf)])
        XCTAssertEqual(h.fail("deeplink.parse", ["url": .string("app://workflow/\(wf)//")]).details["reason"], "malformed")
    }

    /// TEST PLAN §10 (app killed, push tapped: rehydrated, same behaviour), §0 (tapping an
    /// await in the Action Center navigates to its workflow and node) and §6.3 (Open navigates to
    /// the node; the editor does not auto-open: nothing is claimed).
    func testColdStartRehydratesAndTheLinkStillResolves() throws {
        let h = try Harness(file: true)
        let (wf, id) = maskAwaiting(h)
        try h.crash()
        let url = "app://workflow/\(wf)/node/mask1?await=\(id)"
        XCTAssertEqual(h.call("deeplink.parse", ["url": .string(url)])["awaitId"], .string(id))
        let open = h.call("await.respond", ["awaitId": .string(id), "action": "Open"])
        XCTAssertEqual(open["claimed"], false)
        XCTAssertEqual(open["navigate"], ["workflowId": .string(wf), "nodeId": "mask1", "awaitId": .string(id)])
    }

    func testTheSchemeIsConfigurable() throws {
        let h = try Harness(extra: ["deepLinkScheme": "studio"])
        let (wf, id) = maskAwaiting(h)
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["deepLink"], .string("studio://workflow/\(wf)/node/mask1?await=\(id)"))
    }
}

/// TEST PLAN §12: metrics for claims, completions, retries, cancels.
final class TelemetryTests: XCTestCase {
    func testClaimsCompletionsRetriesCancelsAndShellEventsAppearInMetrics() throws {
        let h = try Harness()
        let (wf, id) = maskAwaiting(h)
        h.call("metrics.take")
        h.call("metrics.record", ["event": "card.tap", "fields": ["nodeId": "mask1"]])
        h.call("await.claim", ["awaitId": .string(id), "claimant": "phone"])
        h.call("await.complete", ["awaitId": .string(id), "claimant": "phone", "result": ["asset": ["type": "MaskRef", "uri": "file:///m"]]])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "stylize1"])
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        h.call("node.retry", ["workflowId": .string(wf), "nodeId": "stylize1"])
        let events = h.call("metrics.take")["events"]!.arrayValue!.compactMap { $0["event"]?.stringValue }
        XCTAssertEqual(events, ["card.tap", "await.claimed", "await.completed", "node.cancelled", "node.retried"])
        XCTAssertEqual(h.call("metrics.take")["events"], [], "taken once")
    }

    func testTakesInABatchSeeEventsRecordedEarlierInItAndNeverHandOneOutTwice() throws {
        let h = try Harness()
        h.call("metrics.take")
        h.call("metrics.record", ["event": "a0"])
        let r = h.call("batch", ["calls": [["op": "metrics.record", "args": ["event": "b1"]],
                                           ["op": "metrics.take", "args": ["max": 1]], ["op": "metrics.take"],
                                           ["op": "metrics.take"]]])["results"]!.arrayValue!
        XCTAssertEqual(r[1]["events"]?.arrayValue?.map { $0["event"] }, ["a0"])
        XCTAssertEqual(r[2]["events"]?.arrayValue?.map { $0["event"] }, ["b1"])
        XCTAssertEqual(r[3]["events"], [])
        XCTAssertEqual(h.call("metrics.take")["events"], [], "taken in the batch: gone")
    }

    func testAClaimantIsRedactedInTelemetryAsInLogs() throws {
        let h = try Harness()
        let (_, id) = maskAwaiting(h)
        h.call("metrics.take")
        h.call("await.claim", ["awaitId": .string(id), "claimant": "ipad alice@example.com"])
        let claimed = h.call("metrics.take")["events"]?.arrayValue?.first { $0["event"] == "await.claimed" }
        XCTAssertEqual(claimed?["claimant"], "ipad [email]")
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(id)])["claim"]?["claimant"], "ipad alice@example.com",
                       "the await keeps it: the claimant must name itself to complete")
    }

    func testAHostThatNeverTakesMetricsKeepsOnlyTheNewestEventsEvenAcrossAReopen() throws {
        let h = try Harness(file: true, extra: ["metrics": ["maxQueued": 3]])
        for i in 1...5 { h.call("metrics.record", ["event": .string("tap.\(i)")]) }
        try h.reopen()
        h.call("batch", ["calls": [["op": "metrics.record", "args": ["event": "tap.6"]],
                                   ["op": "metrics.record", "args": ["event": "tap.7"]]]])
        let events = h.call("metrics.take")["events"]?.arrayValue?.compactMap { $0["event"]?.stringValue }
        XCTAssertEqual(events, ["tap.5", "tap.6", "tap.7"], "the three newest, oldest first")
        // Taking empties the queue; the cap then counts from the events recorded after it.
        h.call("metrics.record", ["event": "tap.8"])
        XCTAssertEqual(h.call("metrics.take")["events"]?.arrayValue?.compactMap { $0["event"]?.stringValue }, ["tap.8"])
    }

    func testMetricsMaxQueuedZeroKeepsNoEventsAndDefaultsToOneHundredThousand() throws {
        let h = try Harness(extra: ["metrics": ["maxQueued": 0]])
        h.call("metrics.record", ["event": "tap"])
        XCTAssertEqual(h.call("metrics.take")["events"], [])
        XCTAssertEqual(EngineConfig().maxQueuedMetrics, 100_000)
        for bad in [JSON.int(-1), .int(10_000_001), "all", .double(1.5)] {
            let e = Result { () throws(EngineError) in try EngineConfig.parse(["metrics": ["maxQueued": bad]]) }
            guard case .failure(let error) = e else { return XCTFail("\(bad) should be refused") }
            XCTAssertEqual(error.details["argument"], "config.metrics.maxQueued", "\(bad)")
        }
    }
}

/// Regressions found reviewing the op reference.
final class AwaitCancelPolicyTests: XCTestCase {
    func testACancelledSelectWithNoSingleCandidateIsCancelledNotExpired() throws {
        let h = try Harness()
        h.register(tool: "Src", outputs: ["image": "ImageRef"])
        let t: JSON = ["schema": "app.workflow/v2", "name": "pick two",
                       "nodes": [["id": "a", "kind": "Src", "outputs": ["image": "ImageRef"]],
                                 ["id": "b", "kind": "Src", "outputs": ["image": "ImageRef"]],
                                 ["id": "pick", "kind": "Picker", "inputs": ["a": "ImageRef", "b": "ImageRef"],
                                  "outputs": ["image": "ImageRef"], "await": ["type": "select_asset", "resumePolicy": ["onTimeout": "autoDefault"]]]],
                       "edges": [["from": ["a", "image"], "to": ["pick", "a"]], ["from": ["b", "image"], "to": ["pick", "b"]]]]
        let wf = h.create(h.register(template: t))
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///x"]]])
        }
        let id = h.node(wf, "pick")["awaitId"]!
        let r = h.call("await.complete", ["awaitId": id, "result": ["cancel": true]])
        XCTAssertEqual(r["resolution"], "cancelled")
        XCTAssertEqual(h.node(wf, "pick")["lastError"]?["code"], "awaitCancelled")
    }

    func testShellMetricsCannotOverrideTheEnginesFields() throws {
        let h = try Harness()
        h.call("metrics.record", ["event": "card.tapped", "fields": ["event": "hijack", "at": "yesterday", "nodeId": "n"]])
        let e = h.call("metrics.take")["events"]?[0]
        XCTAssertEqual(e?["event"], "card.tapped")
        XCTAssertEqual(e?["at"], "2026-01-01T00:00:00.000Z")
        XCTAssertEqual(e?["nodeId"], "n")
    }
}

/// Retry (same inputs) of an interactive node (DESIGN §1 "Retry (same inputs) / Re-run with
/// latest"; OPS `node.retry`): the new request is about the retried run's frozen inputs and
/// params, whatever the edges and params say now.
final class InteractiveRetryTests: XCTestCase {
    /// A (Text) → S, an interactive node of `awaitType` with tool `kind`.
    private func askAfterText(_ h: Harness, kind: String, awaitType: String) -> String {
        Templates.registerTextTools(h)
        h.register(tool: kind, inputs: ["text": "TextRef"], outputs: ["text": "TextRef"], defaults: ["steps": 20])
        let t: JSON = ["schema": "app.workflow/v2", "name": "ask",
                       "nodes": [["id": "A", "kind": "Text", "params": ["text": "a"], "outputs": ["text": "TextRef"]],
                                 ["id": "S", "kind": .string(kind), "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"],
                                  "await": ["type": .string(awaitType)]]],
                       "edges": [["from": ["A", "text"], "to": ["S", "text"]]]]
        let wf = h.create(h.register(template: t))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        return wf
    }

    /// An `enter_text` S answered on A's first output, then A run again: S is `inputChanged`.
    /// Returns the workflow and A's first output.
    private func answeredThenProducerRanAgain(_ h: Harness) -> (wf: String, firstInput: JSON) {
        let wf = askAfterText(h, kind: "Pick", awaitType: "enter_text")
        let firstInput = h.node(wf, "A")["outputs"]!["text"]!
        h.call("await.complete", ["awaitId": h.node(wf, "S")["awaitId"]!, "result": ["asset": ["uri": "data:,answer"]]])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        h.runLocalTools()
        return (wf, firstInput)
    }

    func testRetryOfARequestAsksAboutTheFrozenInputEvenAfterItsProducerRanAgain() throws {
        let h = try Harness()
        let (wf, firstInput) = answeredThenProducerRanAgain(h)
        XCTAssertEqual(h.node(wf, "S")["blockedReason"]?["code"], "inputChanged")
        let retried = h.call("node.retry", ["workflowId": .string(wf), "nodeId": "S"])
        XCTAssertEqual(retried["state"], "awaitingUser")
        XCTAssertEqual(h.node(wf, "S")["runId"], retried["runId"], "the run the retry returned is the one asking")
        let runs = h.call("node.history", ["workflowId": .string(wf), "nodeId": "S"])["runs"]!
        XCTAssertEqual(runs[0]?["runId"], retried["runId"])
        XCTAssertEqual(runs[0]?["status"], "awaiting")
        XCTAssertEqual(runs[0]?["inputs"]?["text"], firstInput, "asked about the frozen input")
        let awaitId = h.node(wf, "S")["awaitId"]!
        h.call("await.complete", ["awaitId": awaitId, "result": ["asset": ["uri": "data:,again"]]])
        XCTAssertEqual(h.call("await.get", ["awaitId": awaitId])["resolution"], "completed")
        XCTAssertEqual(h.node(wf, "S")["blockedReason"]?["code"], "inputChanged",
                       "answered on the old input: the newer one still stands against it")
    }

    func testARetryRequestWhoseFrozenInputIsDeletedFailsAndStaysFailed() throws {
        let h = try Harness()
        let (wf, firstInput) = answeredThenProducerRanAgain(h)
        h.call("node.retry", ["workflowId": .string(wf), "nodeId": "S"])
        h.call("asset.delete", ["assetId": firstInput])
        XCTAssertEqual(h.state(wf, "S"), "failed")
        XCTAssertEqual(h.node(wf, "S")["lastError"]?["code"], "inputAssetGone")
        h.call("node.selectInput", ["workflowId": .string(wf), "nodeId": "S", "port": "text", "assetId": .null])  // reconciles every node
        XCTAssertEqual(h.state(wf, "S"), "failed", "the request was never answered: nothing ran to compare inputs with")
        XCTAssertEqual(h.node(wf, "S")["lastError"]?["code"], "inputAssetGone")
    }

    func testRetryOfAConfirmParamsRequestRunsTheToolOnTheFrozenParams() throws {
        let h = try Harness()
        let wf = askAfterText(h, kind: "Gen", awaitType: "confirm_params")
        h.call("metrics.take")
        h.call("await.complete", ["awaitId": h.node(wf, "S")["awaitId"]!, "result": ["params": ["steps": 30]]])
        XCTAssertEqual(h.effects("local.run").first?["params"]?["steps"], 30)
        h.call("local.completed", ["runId": h.node(wf, "S")["runId"]!, "outputs": ["text": TextAsset.json("g1")]])
        h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "S", "params": ["steps": 99, "seed": 5]])
        h.call("node.retry", ["workflowId": .string(wf), "nodeId": "S"])
        h.call("await.complete", ["awaitId": h.node(wf, "S")["awaitId"]!, "result": ["params": ["seed": 6]]])
        let run = h.effects("local.run").first
        XCTAssertEqual(run?["params"]?["steps"], 30, "Retry keeps the last run's params")
        XCTAssertEqual(run?["params"]?["seed"], 6, "with the person's answer over them")
        let history = h.call("node.history", ["workflowId": .string(wf), "nodeId": "S"])["runs"]!
        XCTAssertEqual(history[0]?["trigger"], "retry")
        XCTAssertEqual(history[0]?["params"], run?["params"], "history says what ran")
        let events = h.call("metrics.take")["events"]!.arrayValue!.compactMap { $0["event"]?.stringValue }
        XCTAssertEqual(events.filter { $0 == "node.retried" }.count, 1, "one Retry, one metric: the confirmed tool run is part of it")
    }
}
