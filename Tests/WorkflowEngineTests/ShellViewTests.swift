import Foundation
import Logging
import WorkflowCore
import WorkflowEngine
import XCTest

private func card(_ h: Harness, _ wf: String, _ nodeId: String) -> JSON {
    let cards = h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]?.arrayValue ?? []
    return cards.first { $0["nodeId"]?.stringValue == nodeId } ?? .null
}

/// TEST PLAN §7 (ToolCards render per the state table), 003 step 3 (`RehydrationRenderTests`:
/// cards render the same from persisted state) and steps 12–13 of the implementation plan.
final class ToolCardTests: XCTestCase {
    func testCardsRenderTheStateTable() throws {
        let h = try Harness(file: true)
        Templates.registerStylizeTools(h)
        h.register(tool: "Job", outputs: ["out": "ImageRef"], remote: true)
        let wf = h.create(h.register(template: Templates.stylize))
        // Blocked: grey, "Blocked: reason", Run disabled with the waiting reason.
        let blocked = card(h, wf, "stylize1")
        XCTAssertEqual(blocked["chip"], ["text": "Blocked: Waiting for input", "tone": "gray"])
        XCTAssertEqual(blocked["border"], "gray")
        XCTAssertEqual(blocked["statusText"], "Waiting for image from 'load1', mask from 'mask1'")
        XCTAssertEqual(blocked["missingInputs"], ["image", "mask"])
        XCTAssertEqual(blocked["actions"]?["run"], ["enabled": false, "reason": "Waiting for image from 'load1', mask from 'mask1'"])
        XCTAssertEqual(blocked["paramDigest"], "res=1024×1024 · steps=30 · cfg=4.0")
        // Running (local): blue; then Succeeded: green "Done".
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        let run = h.effects("local.run")[0]
        let running = card(h, wf, "load1")
        XCTAssertEqual(running["chip"], ["text": "Running", "tone": "blue"])
        XCTAssertEqual(running["border"], "blue")
        XCTAssertEqual(running["progress"], .null, "indeterminate")
        XCTAssertEqual(running["actions"]?["cancel"], ["enabled": true, "reason": .null])
        h.call("local.completed", ["runId": run["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p.png"]]])
        let done = card(h, wf, "load1")
        XCTAssertEqual(done["chip"], ["text": "Done", "tone": "green"])
        XCTAssertEqual(done["border"], "clear")
        XCTAssertEqual(done["lastResult"]?["type"], "ImageRef")
        XCTAssertEqual(done["history"]?.arrayValue?.count, 1)
        // Awaiting: orange, "Needs your input"; the editor opens on a tap, which claims.
        let awaiting = card(h, wf, "mask1")
        XCTAssertEqual(awaiting["chip"], ["text": "Needs your input", "tone": "orange"])
        XCTAssertEqual(awaiting["border"], "orange")
        XCTAssertEqual(awaiting["fill"], "orange15")
        XCTAssertEqual(awaiting["actions"]?["openEditor"], ["enabled": true, "reason": .null])
        XCTAssertEqual(awaiting["actions"]?["skip"], ["enabled": false, "reason": "This request cannot be skipped"])
        let awaitId = awaiting["awaitId"]!
        h.call("await.claim", ["awaitId": awaitId, "claimant": "phone"])
        XCTAssertEqual(card(h, wf, "mask1")["actions"]?["openEditor"]?["claimedBy"], "phone")
        h.call("await.complete", ["awaitId": awaitId, "claimant": "phone", "result": ["asset": ["type": "MaskRef", "uri": "file:///m.png"]]])
        // Running (remote) with progress, then Failed: red chip with the code and a hint.
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "stylize1"])
        let submit = h.effects("remote.submit")[0]
        h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "j1"])
        h.call("job.update", ["jobId": "j1", "status": "running", "progress": 0.42,
                              "logTail": ["step 12/30", "user jane@example.com uploaded IMG_0042.HEIC"]])
        let remote = card(h, wf, "stylize1")
        XCTAssertEqual(remote["chip"], ["text": "Running 42%", "tone": "blue"])
        XCTAssertEqual(remote["statusText"], "Running 42%")
        XCTAssertEqual(remote["progress"], 0.42)
        XCTAssertEqual(remote["logTail"], ["step 12/30", "user [email] uploaded [file]"], "redacted")
        h.call("job.transportError", ["jobId": "j1", "httpStatus": 502])
        XCTAssertEqual(card(h, wf, "stylize1")["statusText"], "Reconnecting…")
        h.call("job.update", ["jobId": "j1", "status": "failed", "error": ["code": "OOM", "message": "Out of memory."]])
        let failed = card(h, wf, "stylize1")
        XCTAssertEqual(failed["chip"], ["text": "OOM", "tone": "red"])
        XCTAssertEqual(failed["border"], "red")
        XCTAssertEqual(failed["lastError"]?["hint"], "Try a smaller resolution.")
        XCTAssertEqual(failed["actions"]?["retry"], ["enabled": true, "reason": .null])
        // Cards come out identical after reopening: nothing is held only in memory.
        let before = h.call("workflow.detail", ["workflowId": .string(wf)])
        try h.reopen()
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(wf)]), before)
        try h.crash()
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(wf)]), before)
    }

    func testPausePollingTogglesTheLabelAndTheJobContinues() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "j"])
        let toolbar = h.call("workflow.detail", ["workflowId": .string(wf)])["toolbar"]
        XCTAssertEqual(toolbar?["polling"]?["label"], "Pause polling")
        XCTAssertEqual(toolbar?["polling"]?["tooltip"], "Pauses status checks only; remote job continues running.")
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true])
        XCTAssertEqual(h.call("workflow.detail", ["workflowId": .string(wf)])["toolbar"]?["polling"]?["label"], "Resume polling")
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote", "the job continues remotely")
        XCTAssertEqual(card(h, wf, "stylize1")["actions"]?["cancel"], ["enabled": true, "reason": .null])
    }

    func testOfflineDisablesRunOfRemoteStepsWithAReason() throws {
        let h = try Harness()
        h.register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true)
        let wf = h.create(h.register(template: Templates.oneRemote()))
        h.call("network.set", ["online": false])
        XCTAssertEqual(card(h, wf, "stylize1")["actions"]?["run"], ["enabled": false, "reason": "Offline"])
        XCTAssertEqual(card(h, wf, "stylize1")["chip"], ["text": "Blocked: Offline", "tone": "gray"])
    }

    func testParamDigestRendersASizeAsWidthTimesHeight() throws {
        let h = try Harness()
        h.register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true,
                   defaults: ["size": [1024, 1024], "steps": 30, "cfg": 4.0], summaryParams: ["size", "steps", "cfg"])
        let wf = h.create(h.register(template: Templates.oneRemote()))
        XCTAssertEqual(card(h, wf, "stylize1")["paramDigest"], "size=1024×1024 · steps=30 · cfg=4.0")
        h.call("node.setParams", ["workflowId": .string(wf), "nodeId": "stylize1",
                                  "params": ["size": [768, 512, 3], "cfg": ["low", "high"]]])
        XCTAssertEqual(card(h, wf, "stylize1")["paramDigest"], "size=768×512×3 · steps=30 · cfg=low, high",
                       "every number of a list; words are comma-separated")
    }
}

/// The Workflows list: search, filter, sort, archived, rows (003 step 12: list search, filter
/// and sort; 000 §7.1 and Appendix B).
final class WorkflowListTests: XCTestCase {
    func testSearchFilterSortArchivedAndRows() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: Templates.chain)
        let a = h.create(tpl, ["title": "Beach photos"])
        h.advance(1)
        let b = h.create(tpl, ["title": "Album covers"])
        h.advance(1)
        let c = h.create(tpl, ["title": "Zebra"])
        h.call("workflow.runAllReady", ["workflowId": .string(a)])
        for _ in 0..<3 { h.runLocalTools() }
        h.call("workflow.archive", ["workflowId": .string(c)])
        let rows = h.call("workflow.list")["rows"]!.arrayValue!
        XCTAssertEqual(rows.map { $0["workflowId"] }, [.string(a), .string(b)], "recent first; archived hidden")
        XCTAssertEqual(rows[0]["status"], "done")
        XCTAssertEqual(rows[0]["stepsDone"], 3)
        XCTAssertEqual(rows[0]["stepsTotal"], 3)
        XCTAssertEqual(rows[1]["awaitCount"], 0)
        XCTAssertEqual(rows[1]["hasBlockingAwait"], false)
        XCTAssertEqual(h.call("workflow.list", ["sort": "name"])["rows"]?.arrayValue?.map { $0["title"] }, ["Album covers", "Beach photos"])
        XCTAssertEqual(h.call("workflow.list", ["filter": "done"])["rows"]?.arrayValue?.count, 1)
        XCTAssertEqual(h.call("workflow.list", ["filter": "active"])["rows"]?.arrayValue?.map { $0["workflowId"] }, [.string(b)])
        XCTAssertEqual(h.call("workflow.list", ["search": "ALBUM"])["rows"]?.arrayValue?.count, 1)
        XCTAssertEqual(h.call("workflow.list", ["search": "LOUD", "includeArchived": true])["rows"]?.arrayValue?.count, 3,
                       "node titles are searched")
        XCTAssertEqual(h.call("workflow.list", ["includeArchived": true])["rows"]?.arrayValue?.count, 3)
        XCTAssertEqual(h.fail("workflow.list", ["filter": "weird"]).code, "invalidArgument")
        let dup = h.call("workflow.duplicate", ["workflowId": .string(a)])["workflowId"]!
        XCTAssertEqual(h.call("workflow.get", ["workflowId": dup])["title"], "Beach photos (copy)")
        h.call("workflow.delete", ["workflowId": dup])
        XCTAssertEqual(h.fail("workflow.get", ["workflowId": dup]).status, .notFound)
    }

    func testSearchFindsATitleWhetherItsAccentsAreComposedOrNot() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: Templates.chain)
        let composed = h.create(tpl, ["title": "Caf\u{E9} menu"])
        let decomposed = h.create(tpl, ["title": "Cafe\u{301} photos"])
        for query in ["caf\u{E9}", "cafe\u{301}"] {
            let ids = h.call("workflow.list", ["search": .string(query)])["rows"]?.arrayValue?.compactMap { $0["workflowId"]?.stringValue }
            XCTAssertEqual(Set(ids ?? []), [composed, decomposed], query.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
        }
    }

    func testSortByNameIsAlphabeticalWithCaseAndAccentsFolded() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: Templates.chain)
        for title in ["zeta", "Ärger", "Beach", "apfel", "Éclair", "Apfel"] { _ = h.create(tpl, ["title": .string(title)]) }
        XCTAssertEqual(h.call("workflow.list", ["sort": "name"])["rows"]?.arrayValue?.map { $0["title"] },
                       ["Apfel", "apfel", "Ärger", "Beach", "Éclair", "zeta"])
    }

    func testDoneAndFailedFiltersNeverListArchivedWorkflowsEvenWithIncludeArchived() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let tpl = h.register(template: Templates.chain)
        let kept = h.create(tpl, ["title": "Kept"])
        let archived = h.create(tpl, ["title": "Archived"])
        for wf in [kept, archived] { h.call("workflow.runAllReady", ["workflowId": .string(wf)]) }
        for _ in 0..<3 { h.runLocalTools() }
        XCTAssertEqual(h.call("workflow.list", ["filter": "done"])["rows"]?.arrayValue?.count, 2)
        h.call("workflow.archive", ["workflowId": .string(archived)])
        for filter: JSON in ["done", "failed", "active"] {
            let ids = h.call("workflow.list", ["filter": filter, "includeArchived": true])["rows"]?.arrayValue?
                .map { $0["workflowId"]! }
            XCTAssertFalse(ids?.contains(.string(archived)) ?? true, "an archived workflow's status is archived")
        }
        XCTAssertEqual(h.call("workflow.list", ["filter": "done", "includeArchived": true])["rows"]?.arrayValue?
            .map { $0["workflowId"]! }, [.string(kept)])
        let all = h.call("workflow.list", ["includeArchived": true])["rows"]?.arrayValue ?? []
        XCTAssertEqual(all.first { $0["workflowId"] == .string(archived) }?["status"], "archived")
    }
}

/// Appendix B §2.1 "red dot if workflow has blocking awaits" and §7.3 "row badge: count of
/// awaits": a snoozed await is out of the count (it waits quietly in the Action Center's Snoozed
/// section) but still holds the workflow up, so the red dot stays until it is answered.
final class WorkflowRowBadgeTests: XCTestCase {
    func testASnoozedBlockingAwaitKeepsTheRedDotButLeavesTheCount() throws {
        let h = try Harness(file: true)
        Templates.registerStylizeTools(h)
        let wf = h.create(h.register(template: Templates.stylize))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p.png"]]])
        }
        let awaitId = h.node(wf, "mask1")["awaitId"]!
        func row() -> JSON { h.call("workflow.list")["rows"]?[0] ?? .null }
        XCTAssertEqual(row()["awaitCount"], 1)
        XCTAssertEqual(row()["hasBlockingAwait"], true)
        h.call("await.snooze", ["awaitId": awaitId, "seconds": 600])
        XCTAssertEqual(row()["awaitCount"], 0, "the count follows the Action Center's pending section")
        XCTAssertEqual(row()["hasBlockingAwait"], true, "the workflow is still held up by the snoozed await")
        let badges = h.call("badges.get")
        XCTAssertEqual(badges["workflows"]?[wf], nil)
        XCTAssertEqual(badges["blocking"]?[wf], true, "badges.get flags the same workflows as the rows")
        try h.crash()
        XCTAssertEqual(row()["hasBlockingAwait"], true, "from the persisted summary")
        h.advance(600)
        XCTAssertEqual(row()["awaitCount"], 1, "back in the count when the snooze ends")
        h.call("await.complete", ["awaitId": awaitId, "result": ["asset": ["type": "MaskRef", "uri": "file:///m.png"]]])
        XCTAssertEqual(row()["awaitCount"], 0)
        XCTAssertEqual(row()["hasBlockingAwait"], false)
        XCTAssertEqual(h.call("badges.get")["blocking"]?[wf], nil)
    }

    func testANonBlockingSnoozedAwaitRaisesNoRedDot() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        var t = Templates.stylize.objectValue!
        var nodes = t["nodes"]!.arrayValue!
        let mask = nodes.firstIndex { $0["id"] == "mask1" }!
        var node = nodes[mask].objectValue!
        var spec = node["await"]!.objectValue!
        spec["blocking"] = false
        node["await"] = .object(spec)
        nodes[mask] = .object(node)
        t["nodes"] = .array(nodes)
        let wf = h.create(h.register(template: .object(t)))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        for e in h.effects("local.run") {
            h.call("local.completed", ["runId": e["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p.png"]]])
        }
        let awaitId = h.node(wf, "mask1")["awaitId"]!
        XCTAssertEqual(h.call("workflow.list")["rows"]?[0]?["awaitCount"], 1)
        h.call("await.snooze", ["awaitId": awaitId])
        XCTAssertEqual(h.call("workflow.list")["rows"]?[0]?["hasBlockingAwait"], false)
        XCTAssertEqual(h.call("badges.get")["blocking"]?[wf], nil)
    }
}

/// TEST PLAN §9: cache sizes, purge, pins.
final class CachePolicyTests: XCTestCase {
    private func assets(_ h: Harness, _ n: Int) -> [JSON] {
        (0..<n).map { i in h.call("asset.import", ["type": "ImageRef", "uri": .string("file:///cache/\(i).png")])["assetId"]! }
    }

    func testFreeUpSpacePurgesUnpinnedPreviewsAndPinsRemainAcrossRelaunch() throws {
        let h = try Harness(file: true)
        let ids = assets(h, 8)
        let mb: Int64 = 1_048_576
        for (i, id) in ids.enumerated() {
            h.call("cache.record", ["assetId": id, "variant": "preview", "bytes": .int(20 * mb)])
            h.call("cache.record", ["assetId": id, "variant": "thumbnail", "bytes": .int(5 * mb)])
            if i < 3 { h.call("asset.pin", ["assetId": id, "pinned": true]) }
        }
        let usage = h.call("cache.usage")
        XCTAssertEqual(usage["total"], .int(200 * mb))
        XCTAssertEqual(usage["pinned"], .int(75 * mb))
        _ = h.take()
        let freed = h.call("cache.freeUpSpace")
        XCTAssertEqual(freed["evicted"], 5)
        XCTAssertEqual(freed["freedBytes"], .int(100 * mb))
        XCTAssertEqual(h.effects("cache.evict").count, 5, "each eviction tells the host to delete the file")
        XCTAssertEqual(h.call("cache.usage")["total"], .int(100 * mb), "the size drops")
        try h.crash()
        XCTAssertEqual(h.call("cache.usage")["pinned"], .int(75 * mb), "pins remain and survive relaunch")
        for id in ids.prefix(3) { XCTAssertEqual(h.call("asset.get", ["assetId": id])["pinned"], true) }
    }

    func testAFileCachedAgainBeforeItsEvictWasTakenIsNotDeleted() throws {
        let h = try Harness(file: true, extra: ["cache": ["thumbnailBytes": 100]])
        let ids = assets(h, 2)
        h.call("cache.record", ["assetId": ids[0], "variant": "thumbnail", "bytes": 80])
        h.call("cache.record", ["assetId": ids[1], "variant": "thumbnail", "bytes": 80])  // evicts ids[0]
        h.call("cache.record", ["assetId": ids[0], "variant": "thumbnail", "bytes": 80])  // cached again; evicts ids[1]
        let evicts = h.effects("cache.evict").map { $0["assetId"] }
        XCTAssertEqual(evicts, [ids[1]], "the stale evict of ids[0] would delete a file the engine lists")
        XCTAssertEqual(h.call("cache.usage")["thumbnails"], 80)
        // An evict taken, then acknowledged by the next take, is not handed out again after a reopen.
        h.call("cache.record", ["assetId": ids[1], "variant": "thumbnail", "bytes": 80])
        XCTAssertEqual(h.effects("cache.evict").map { $0["assetId"] }, [ids[0]])
        _ = h.take()
        try h.crash()
        XCTAssertTrue(h.effects("cache.evict").isEmpty)
    }

    /// The cap is the config's: opened again with a lower one, the engine evicts the least
    /// recently used thumbnails at once, not at the next `cache.record`.
    func testAThumbnailCapLoweredBetweenOpensIsEnforcedWhenTheStoreOpens() throws {
        let h = try Harness(file: true, extra: ["cache": ["thumbnailBytes": 300]])
        let ids = assets(h, 3)
        for id in ids { h.call("cache.record", ["assetId": id, "variant": "thumbnail", "bytes": 100]) }
        XCTAssertTrue(h.effects("cache.evict").isEmpty)
        h.engine.close()
        var lower = h.config
        lower["cache"] = ["thumbnailBytes": 150]
        h.engine = try Engine(configJSON: .object(lower))
        XCTAssertEqual(h.call("cache.usage")["thumbnails"], 100)
        XCTAssertEqual(h.effects("cache.evict").map { $0["assetId"] }, [ids[0], ids[1]], "least recently used first")
    }

    /// The preview lifetime is the config's too: opened again with fewer `previewDays`, the engine
    /// purges the previews already unused for longer at once, and no deadline is left in the past.
    func testPreviewDaysLoweredBetweenOpensPurgeTheOverduePreviewsWhenTheStoreOpens() throws {
        let h = try Harness(file: true, extra: ["cache": ["previewDays": 7]])
        let ids = assets(h, 3)
        h.call("cache.record", ["assetId": ids[0], "variant": "preview", "bytes": 100])
        h.advance(2 * 86_400)
        h.call("cache.record", ["assetId": ids[1], "variant": "preview", "bytes": 100])
        h.call("cache.record", ["assetId": ids[2], "variant": "preview", "bytes": 100])
        h.call("asset.pin", ["assetId": ids[2], "pinned": true])
        h.advance(86_400)
        XCTAssertTrue(h.effects("cache.evict").isEmpty)
        h.engine.close()
        var lower = h.config
        lower["cache"] = ["previewDays": 2]
        h.engine = try Engine(configJSON: .object(lower))
        let evicts = h.effects("cache.evict")
        XCTAssertEqual(evicts.map { $0["assetId"] }, [ids[0]], "unused for three days, over the two now allowed")
        XCTAssertEqual(evicts.map { $0["reason"] }, ["previewExpired"])
        XCTAssertEqual(h.call("cache.usage")["previews"], 200, "the one used a day ago stays, and the pinned one")
        let now = try XCTUnwrap(h.call("clock.now")["now"]?.stringValue)
        let next = try XCTUnwrap(h.call("engine.nextDeadline")["at"]?.stringValue)
        XCTAssertGreaterThan(next, now, "the next purge is ahead, not overdue")
    }

    func testThumbnailsAreAnLRUBoundedByTheCapAndPreviewsArePurgedSevenDaysAfterLastUse() throws {
        let h = try Harness(extra: ["cache": ["thumbnailBytes": 300, "previewDays": 7]])
        let ids = assets(h, 4)
        for id in ids.prefix(3) {
            h.call("cache.record", ["assetId": id, "variant": "thumbnail", "bytes": 100])
            h.advance(1)
        }
        h.call("cache.touch", ["assetId": ids[0], "variant": "thumbnail"])
        let r = h.call("cache.record", ["assetId": ids[3], "variant": "thumbnail", "bytes": 100])
        XCTAssertEqual(r["evicted"]?.arrayValue?.map { $0["assetId"] }, [ids[1]], "least recently used goes")
        h.call("cache.record", ["assetId": ids[0], "variant": "preview", "bytes": 50])
        h.call("cache.record", ["assetId": ids[1], "variant": "preview", "bytes": 50])
        h.call("asset.pin", ["assetId": ids[1], "pinned": true])
        _ = h.take()
        h.advance(7 * 86_400 - 1)
        XCTAssertTrue(h.effects("cache.evict").isEmpty)
        h.advance(1)
        let evicted = h.effects("cache.evict")
        XCTAssertEqual(evicted.map { $0["assetId"] }, [ids[0]], "the pinned preview stays")
        XCTAssertEqual(evicted.first?["variant"], "preview")
    }

    /// Found by random calls: sizes were summed unchecked, so two thumbnails of 2^63 − 1 bytes
    /// trapped the process through the C ABI. A size is now at most 2^53 − 1, and byte totals
    /// stop at 2^63 − 1 instead of overflowing (only more than a thousand such files reach it).
    func testAbsurdCacheSizesAreRefusedAndByteTotalsNeverOverflow() throws {
        let h = try Harness()
        let ids = assets(h, 1_100)
        let largest = Int64(1 << 53) - 1
        let tooLarge = h.fail("cache.record", ["assetId": ids[0], "variant": "thumbnail", "bytes": .int(largest + 1)])
        XCTAssertEqual(tooLarge.code, "invalidArgument")
        XCTAssertEqual(tooLarge.details["argument"], "bytes")
        XCTAssertEqual(h.call("cache.entries")["entries"]?.arrayValue?.count, 0, "nothing recorded")
        // Pinned thumbnails are never evicted, so every one of them counts towards the cap's total.
        for id in ids {
            h.call("asset.pin", ["assetId": id, "pinned": true])
            h.call("cache.record", ["assetId": id, "variant": "thumbnail", "bytes": .int(largest)])
        }
        for id in ids.prefix(2) { h.call("cache.record", ["assetId": id, "variant": "preview", "bytes": .int(largest)]) }
        let usage = h.call("cache.usage")
        XCTAssertEqual(usage["thumbnails"], .int(.max))
        XCTAssertEqual(usage["pinned"], .int(.max))
        XCTAssertEqual(usage["previews"], .int(2 * largest))
        XCTAssertEqual(usage["total"], .int(.max))
        XCTAssertEqual(usage["entries"], .int(1_102))
        XCTAssertTrue(h.effects("cache.evict").isEmpty, "pinned: nothing evicted")
        for id in ids.prefix(2) { h.call("asset.pin", ["assetId": id, "pinned": false]) }
        XCTAssertEqual(h.call("cache.freeUpSpace")["freedBytes"], .int(2 * largest))
    }

    func testThumbnailsUsedAtTheSameInstantAreEvictedInTheOrderTheyWereUsedNeverTheOneJustRecorded() throws {
        let h = try Harness(file: true, extra: ["cache": ["thumbnailBytes": 100]])
        // Ten assets, so that ids sort differently as text (as-10 < as-2 < as-9) than in use order.
        let ids = assets(h, 10)
        XCTAssertEqual(ids[9], "as-10")
        func record(_ i: Int) -> [JSON] {
            h.call("cache.record", ["assetId": ids[i], "variant": "thumbnail", "bytes": 50])["evicted"]?.arrayValue?
                .map { $0["assetId"]! } ?? []
        }
        // All at the same instant: the clock never moves in this test.
        XCTAssertEqual(record(1), [])  // as-2
        XCTAssertEqual(record(8), [])  // as-9
        XCTAssertEqual(record(9), [ids[1]], "the first recorded goes, not the one just recorded (as-10)")
        h.call("cache.touch", ["assetId": ids[8], "variant": "thumbnail"])
        XCTAssertEqual(record(0), [ids[9]], "a touch counts as the latest use; the one just recorded (as-1) stays")
        // The order of use survives a relaunch.
        try h.crash()
        XCTAssertEqual(record(2), [ids[8]], "as-9 was used before as-1")
        XCTAssertEqual(h.call("cache.entries")["entries"]?.arrayValue?.map { $0["assetId"]! }, [ids[0], ids[2]])
    }
}

/// TEST PLAN §12 and step 0: no raw media, file names of media or personal data in any log line.
final class LoggingPolicyTests: XCTestCase {
    func testAFullRunWithMediaLogsAssetsByIdOnly() throws {
        let capture = LogCapture()
        let engine = try capture.engine(level: .trace)
        defer { engine.close() }
        func call(_ op: String, _ args: JSONObject) -> JSON { (try? engine.call(op, args).get()) ?? .null }
        _ = call("tool.register", ["kind": "ImageLoader", "outputs": ["image": "ImageRef"]])
        _ = call("tool.register", ["kind": "StylizeRemote", "inputs": ["image": "ImageRef", "mask": "MaskRef"],
                                   "outputs": ["image": "ImageRef"], "resourceClass": "remote"])
        _ = call("tool.register", ["kind": "CompressLocal", "inputs": ["image": "ImageRef"], "outputs": ["file": "FileRef"]])
        let tpl = call("template.register", ["template": Templates.stylize])["templateId"]!
        let wf = call("workflow.create", ["templateId": tpl, "title": "Jane Doe's birthday"])["workflowId"]!
        _ = call("workflow.runAllReady", ["workflowId": wf])
        let secretBytes = String(repeating: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", count: 2)
        for _ in 0..<10 {
            for e in call("effects.take", [:])["effects"]?.arrayValue ?? [] {
                switch e["type"]?.stringValue {
                case "local.run":
                    let port = e["nodeId"] == "load1" ? "image" : "file"
                    _ = call("local.completed", ["runId": e["runId"]!, "outputs": [port: [
                        "type": port == "image" ? "ImageRef" : "FileRef", "uri": "file:///Users/jane/Photos/IMG_0042.HEIC",
                        "meta": ["owner": "jane@example.com", "thumbnail": .string("data:image/png;base64," + secretBytes)]]]])
                case "notify":
                    _ = call("await.complete", ["awaitId": e["awaitId"]!, "result": ["asset": [
                        "type": "MaskRef", "uri": "file:///Users/jane/masks/mask-of-jane.png", "meta": ["coverage": 0.3]]]])
                case "remote.submit":
                    _ = call("job.submitted", ["runId": e["runId"]!, "jobId": "job-1"])
                    _ = call("job.update", ["jobId": "job-1", "status": "running", "logTail": ["uploading IMG_0042.HEIC for jane@example.com", .string(secretBytes)]])
                    _ = call("job.update", ["jobId": "job-1", "status": "succeeded", "outputs": ["image": [
                        "type": "ImageRef", "uri": "https://cdn.example.com/jane/IMG_0042-stylized.jpg"]]])
                default: break
                }
            }
            _ = call("clock.advance", ["seconds": 11])
        }
        XCTAssertEqual(call("workflow.get", ["workflowId": wf])["status"], "done")
        XCTAssertGreaterThan(capture.lines.count, 10, "the run was logged")
        for line in capture.lines {
            for forbidden in ["IMG_0042", ".HEIC", ".png", ".jpg", "jane", "Jane", "@example.com", "base64",
                              String(secretBytes.prefix(20)), "file://", "https://", "birthday"] {
                XCTAssertFalse(line.contains(forbidden), "log line holds \(forbidden): \(line)")
            }
        }
        XCTAssertTrue(capture.lines.contains { $0.contains("as-") }, "assets appear by id")
    }
}
