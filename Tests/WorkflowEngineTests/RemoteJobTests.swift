import WorkflowCore
import WorkflowEngine
import WorkflowStore
import XCTest

/// Step 4 of the implementation plan (JobManager: idempotent submission, 10 s polling, resume on
/// relaunch) and TEST PLAN §3 ("Running nodes + app kill: state restored; polling resumes").
final class IdempotencyTests: XCTestCase {
    func testDuplicateSubmitDoesNotCreateASecondJob() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 1)
        let runId = submits[0]["runId"]!
        XCTAssertEqual(submits[0]["idempotencyKey"], .string("\(wf)/stylize1/\(runId.stringValue!)"))
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        let again = h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        XCTAssertEqual(again["applied"], false, "the same job id twice is a no-op")
        let dup = h.call("job.submitted", ["runId": runId, "jobId": "job-2"])
        XCTAssertEqual(dup["applied"], false)
        let cancels = h.effects("remote.cancel")
        XCTAssertEqual(cancels.count, 1, "the duplicate job is cancelled")
        XCTAssertEqual(cancels.first?["jobId"], "job-2")
        XCTAssertEqual(h.node(wf, "stylize1")["jobId"], "job-1")
    }

    func testARunWithAJobIdIsNeverResubmittedAfterACrash() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        try h.crash()
        XCTAssertEqual(h.node(wf, "stylize1")["jobId"], "job-1")
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote")
        h.advance(60)
        let after = h.take()
        XCTAssertFalse(after.contains { $0["type"] == "remote.submit" }, "no resubmission: \(after)")
        XCTAssertTrue(after.contains { $0["type"] == "remote.poll" && $0["jobId"] == "job-1" })
    }

    func testAnUnacknowledgedSubmitIsDeliveredAgainWithTheSameKeyAfterACrash() throws {
        let h = try Harness(file: true)
        h.startOneRemote()
        let first = h.effects("remote.submit")
        XCTAssertEqual(first.count, 1)
        try h.crash()
        let again = h.effects("remote.submit")
        XCTAssertEqual(again.count, 1, "re-delivered once")
        XCTAssertEqual(again[0]["id"], first[0]["id"], "same effect id")
        XCTAssertEqual(again[0]["idempotencyKey"], first[0]["idempotencyKey"])
        try h.crash()
        XCTAssertEqual(h.effects("remote.submit").count, 1, "still unanswered: delivered again")
        h.call("job.submitted", ["runId": again[0]["runId"]!, "jobId": "job-9"])
        try h.crash()
        XCTAssertEqual(h.effects("remote.submit").count, 0, "answered: never again")
    }
}

final class ResumePollingTests: XCTestCase {
    func testPollsEveryTenSecondsWithJitterAndReconcilesAfterRelaunch() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        // The first poll comes between 9 and 11 s later (10 s ± 10 %).
        h.advance(8.9)
        XCTAssertTrue(h.effects("remote.poll").isEmpty)
        h.advance(2.2)
        let polls = h.effects("remote.poll")
        XCTAssertEqual(polls.count, 1)
        h.call("job.update", ["jobId": "job-1", "status": "running", "progress": 0.42])
        XCTAssertEqual(h.state(wf, "stylize1"), "runningRemote")
        try h.crash()
        XCTAssertEqual(h.state(wf, "stylize1"), "runningRemote", "state restored")
        XCTAssertEqual(h.node(wf, "stylize1")["progress"], 0.42)
        h.advance(11)
        XCTAssertEqual(h.effects("remote.poll").count, 1, "polling resumed")
        h.call("job.update", ["jobId": "job-1", "status": "succeeded",
                              "outputs": ["image": ["type": "ImageRef", "uri": "file:///r/out.png"]]])
        XCTAssertEqual(h.state(wf, "stylize1"), "succeeded")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
    }

    /// TEST PLAN §11 (harness: slow provider): a job the provider keeps queued for 30 minutes is
    /// polled every 10 s ± 10 % the whole time, one poll per answer, and the engine never times
    /// it out; it finishes normally when the provider does.
    func testASlowProviderQueuedForThirtyMinutesIsPolledEveryTenSecondsAndNeverTimedOut() throws {
        let h = try Harness()
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-slow"])
        var polls = 0
        var elapsed = 0.0
        var last = 0.0
        while elapsed < 1800 {
            h.advance(0.5)
            elapsed += 0.5
            let due = h.effects("remote.poll")
            guard !due.isEmpty else { continue }
            XCTAssertEqual(due.count, 1)
            XCTAssertEqual(due[0]["jobId"], "job-slow")
            XCTAssertTrue((9.0...11.5).contains(elapsed - last), "a poll \(elapsed - last) s after the previous one")
            last = elapsed
            polls += 1
            h.call("job.update", ["jobId": "job-slow", "status": "queued"])
            XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote")
        }
        XCTAssertTrue((163...200).contains(polls), "\(polls) polls in 30 minutes")
        XCTAssertNil(h.node(wf, "stylize1")["lastError"].flatMap { $0 == .null ? nil : $0 }, "no error, no timeout")
        h.call("job.update", ["jobId": "job-slow", "status": "succeeded",
                              "outputs": ["image": ["type": "ImageRef", "uri": "file:///r/slow.png"]]])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["status"], "done")
    }

    func testUnansweredPollIsNotDuplicatedButRedeliveredAfterRelaunch() throws {
        let h = try Harness(file: true)
        h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.advance(11)
        h.advance(11)  // second poll due while the first is still untaken: coalesced
        XCTAssertEqual(h.effects("remote.poll").count, 1)
        try h.crash()
        XCTAssertEqual(h.effects("remote.poll").count, 1, "the taken but unanswered poll comes again")
    }

    /// A host that takes polls and never answers them (its requests hang): each period's poll
    /// replaces the last on record, so a reopen asks for the job's status once, not once per
    /// period.
    func testPollsTakenAndNeverAnsweredComeBackAsOneAfterACrash() throws {
        let h = try Harness(file: true)
        h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        var ids: [JSON] = []
        for _ in 0..<5 {
            h.advance(11)
            let polls = h.effects("remote.poll")
            XCTAssertEqual(polls.count, 1)
            ids.append(polls[0]["id"]!)
        }
        try h.crash()
        let again = h.effects("remote.poll")
        XCTAssertEqual(again.map { $0["id"] }, [ids.last!], "the last poll only, with its id")
        h.call("job.update", ["jobId": "job-1", "status": "running"])
        try h.crash()
        XCTAssertTrue(h.effects("remote.poll").isEmpty, "answered: none on record")
    }
}

/// TEST PLAN §5: backoff and retry policy.
final class BackoffTests: XCTestCase {
    /// TEST PLAN §5 Pass/Fail "logs show reasons": each automatic submit retry is a warning line
    /// naming the run, the attempt, the wait and the reason (HTTP status, offline, no response),
    /// and a `submit.retried` metric records each resubmit.
    func testSubmitRetriesAreLoggedWithTheirReasonAndCountedInMetrics() throws {
        let capture = LogCapture()
        let engine = try capture.engine(level: .warning)
        defer { engine.close() }
        func call(_ op: String, _ args: JSONObject = [:]) throws -> JSON { try engine.call(op, args).get() }
        _ = try call("tool.register", ["kind": "StylizeRemote", "outputs": ["image": "ImageRef"], "resourceClass": "remote"])
        let tpl = try call("template.register", ["template": Templates.oneRemote()])["templateId"]!
        let wf = try call("workflow.create", ["templateId": tpl])["workflowId"]!
        _ = try call("workflow.runAllReady", ["workflowId": wf])
        let runId = try call("effects.take")["effects"]?[0]?["runId"]?.stringValue ?? ""
        let failures: [JSONObject] = [["httpStatus": 503], ["offline": true], [:]]
        for (i, failure) in failures.enumerated() {
            var args = failure
            args["runId"] = .string(runId)
            _ = try call("job.transportError", args)
            _ = try call("clock.advance", ["seconds": 600])
            XCTAssertEqual(try call("effects.take")["effects"]?[0]?["attempt"], .int(Int64(i + 2)))
        }
        let retries = capture.entries.filter { $0.text.hasPrefix("submit failed; retrying") }
        XCTAssertEqual(retries.map(\.level), [.warning, .warning, .warning])
        for (line, reason) in zip(retries.map(\.text), ["HTTP 503", "offline", "no response"]) {
            XCTAssertTrue(line.contains("reason=\(reason)"), line)
            XCTAssertTrue(line.contains("runId=\(runId)"), line)
            XCTAssertTrue(line.contains("waitSeconds="), line)
        }
        let metrics = try call("metrics.take")["events"]?.arrayValue ?? []
        let retried = metrics.filter { $0["event"] == "submit.retried" }
        XCTAssertEqual(retried.map { $0["attempt"] }, [2, 3, 4])
        XCTAssertEqual(retried.map { $0["runId"] }, Array(repeating: .string(runId), count: 3))
    }

    private func submitRun(_ h: Harness) -> (wf: String, runId: JSON) {
        let wf = h.startOneRemote()
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 1)
        return (wf, submits[0]["runId"] ?? .null)
    }

    /// Seconds until the next remote.submit appears, stepping the clock by 1 s.
    private func secondsUntilResubmit(_ h: Harness, limit: Int = 1000) -> Int? {
        for s in 1...limit {
            h.advance(1)
            if !h.effects("remote.submit").isEmpty { return s }
        }
        return nil
    }

    func test503Then503Then200WaitsAbout30sThen2mThenSucceeds() throws {
        let h = try Harness()
        let (wf, runId) = submitRun(h)
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        let first = try XCTUnwrap(secondsUntilResubmit(h))
        XCTAssertTrue((23...38).contains(first), "~30 s ± 25 %, was \(first)")
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        let second = try XCTUnwrap(secondsUntilResubmit(h))
        XCTAssertTrue((90...150).contains(second), "~2 min ± 25 %, was \(second)")
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        XCTAssertEqual(h.node(wf, "stylize1")["jobId"], "job-1")
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote")
    }

    func test429WithRetryAfter45WaitsThatLongFirst() throws {
        let h = try Harness()
        let (_, runId) = submitRun(h)
        h.call("job.transportError", ["runId": runId, "httpStatus": 429, "retryAfterSeconds": 45])
        XCTAssertEqual(secondsUntilResubmit(h), 45)
        h.call("job.transportError", ["runId": runId, "httpStatus": 503])
        let next = try XCTUnwrap(secondsUntilResubmit(h))
        XCTAssertTrue((90...150).contains(next), "then the standard backoff continues (retry 2: ~2 min), was \(next)")
    }

    func test429WithoutRetryAfterIsTransientAndTakesTheStandardBackoff() throws {
        let h = try Harness()
        let (wf, runId) = submitRun(h)
        h.call("job.transportError", ["runId": runId, "httpStatus": 429])
        XCTAssertEqual(h.state(wf, "stylize1"), "queuedRemote", "too many requests is not a rejection")
        let first = try XCTUnwrap(secondsUntilResubmit(h))
        XCTAssertTrue((23...38).contains(first), "~30 s ± 25 % without a Retry-After, was \(first)")
        h.call("job.transportError", ["runId": runId, "httpStatus": 429])
        let second = try XCTUnwrap(secondsUntilResubmit(h))
        XCTAssertTrue((90...150).contains(second), "~2 min ± 25 %, was \(second)")
    }

    func testFour504sStopAfterThreeAutomaticRetriesWithACooldownReason() throws {
        let h = try Harness()
        let (wf, runId) = submitRun(h)
        for attempt in 1...3 {
            h.call("job.transportError", ["runId": runId, "httpStatus": 504])
            XCTAssertNotNil(secondsUntilResubmit(h), "retry \(attempt)")
        }
        h.call("job.transportError", ["runId": runId, "httpStatus": 504])
        XCTAssertEqual(h.state(wf, "stylize1"), "failed")
        let error = h.node(wf, "stylize1")["lastError"]
        XCTAssertEqual(error?["code"], "providerUnavailable")
        XCTAssertTrue(error?["hint"]?.stringValue?.contains("cooldown") ?? false, "\(String(describing: error))")
        XCTAssertNil(secondsUntilResubmit(h, limit: 1200), "no fourth retry")
    }

    /// The cooldown failure after the last automatic retry (TEST PLAN §5) says what that last
    /// failure was. An offline device is not told that the provider may be overloaded. A provider
    /// that never answered is not said to have refused the job. A 5xx keeps its wording.
    func testTheCooldownFailureNamesTheLastFailureOfflineNoAnswerOrHTTPStatus() throws {
        let cases: [(last: JSONObject, message: String, hint: String, details: JSON)] = [
            (["offline": true],
             "The job could not be sent to the provider after 3 automatic retries: the device was offline.",
             "Check the connection, then wait a few minutes (cooldown) and Retry.",
             ["retries": 3, "offline": true]),
            ([:],
             "The provider did not answer after 3 automatic retries.",
             "The service may be overloaded or unreachable; wait a few minutes (cooldown), then Retry.",
             ["retries": 3]),
            (["httpStatus": 503],
             "The provider did not accept the job after 3 automatic retries.",
             "The service may be overloaded; wait a few minutes (cooldown), then Retry.",
             ["retries": 3, "httpStatus": 503]),
        ]
        for c in cases {
            let h = try Harness()
            let (wf, runId) = submitRun(h)
            for attempt in 1...3 {
                h.call("job.transportError", ["runId": runId, "httpStatus": 502])
                XCTAssertNotNil(secondsUntilResubmit(h), "retry \(attempt)")
            }
            var args = c.last
            args["runId"] = runId
            h.call("job.transportError", args)
            XCTAssertEqual(h.state(wf, "stylize1"), "failed", "\(c.last)")
            let error = h.node(wf, "stylize1")["lastError"]
            XCTAssertEqual(error?["code"], "providerUnavailable", "\(c.last)")
            XCTAssertEqual(error?["message"]?.stringValue, c.message)
            XCTAssertEqual(error?["hint"]?.stringValue, c.hint)
            let run = h.call("node.history", ["workflowId": .string(wf), "nodeId": "stylize1"])["runs"]?[0]
            XCTAssertEqual(run?["error"]?["details"], c.details, "\(c.last)")
        }
    }

    func testOther4xxFailAtOnce() throws {
        let h = try Harness()
        let (wf, runId) = submitRun(h)
        h.call("job.transportError", ["runId": runId, "httpStatus": 400])
        XCTAssertEqual(h.state(wf, "stylize1"), "failed")
        XCTAssertEqual(h.node(wf, "stylize1")["lastError"]?["code"], "providerRejected")
    }

    func testJitterIsPresentAndReplaysIdenticallyForTheSameSeed() throws {
        func firstWait(seed: Int) throws -> Int {
            let h = try Harness(seed: seed)
            let (_, runId) = submitRun(h)
            h.call("job.transportError", ["runId": runId, "httpStatus": 503])
            return try XCTUnwrap(secondsUntilResubmit(h))
        }
        XCTAssertEqual(try firstWait(seed: 1), try firstWait(seed: 1))
        let waits = Set(try (1...8).map { try firstWait(seed: $0) })
        XCTAssertGreaterThan(waits.count, 1, "different seeds draw different jitter: \(waits)")
        XCTAssertTrue(waits.allSatisfy { (23...38).contains($0) })
    }

    /// For `count` transport errors of job-1 in a row, the seconds from each to the poll that
    /// follows it, stepping the clock by 1 s (at most 400); `afterEach` runs after each error.
    private func secondsToThePollAfterEachTransportError(_ h: Harness, count: Int, afterEach: () -> Void = {}) -> [Int] {
        var waits: [Int] = []
        for _ in 0..<count {
            h.call("job.transportError", ["jobId": "job-1"])
            afterEach()
            var waited = 0
            while h.effects("remote.poll").isEmpty && waited < 400 {
                h.advance(1)
                waited += 1
            }
            waits.append(waited)
        }
        return waits
    }

    func testTransportErrorsWhilePollingBackOffToFiveMinutesAndNeverGiveUp() throws {
        let h = try Harness()
        let (wf, runId) = submitRun(h)
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        h.advance(11)
        XCTAssertEqual(h.effects("remote.poll").count, 1)
        let waits = secondsToThePollAfterEachTransportError(h, count: 9) {
            XCTAssertEqual(h.node(wf, "stylize1")["reconnecting"], true)
        }
        XCTAssertTrue((9...11).contains(waits[0]), "\(waits)")
        XCTAssertTrue((18...22).contains(waits[1]), "\(waits)")
        XCTAssertTrue((36...44).contains(waits[2]), "\(waits)")
        XCTAssertTrue(waits.suffix(3).allSatisfy { (270...330).contains($0) }, "capped at 5 min: \(waits)")
        h.call("job.update", ["jobId": "job-1", "status": "running"])
        XCTAssertNil(h.node(wf, "stylize1")["reconnecting"], "an answer ends Reconnecting…")
        XCTAssertEqual(h.state(wf, "stylize1"), "runningRemote")
    }

    func testReconnectBackoffStartsAtTenSecondsWhateverThePollInterval() throws {
        for interval in [2.0, 60.0] {
            let h = try Harness(extra: ["pollIntervalSeconds": .double(interval)])
            let (_, runId) = submitRun(h)
            h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
            h.advance(interval * 1.2)
            XCTAssertEqual(h.effects("remote.poll").count, 1, "the first poll after the interval (\(interval) s)")
            let waits = secondsToThePollAfterEachTransportError(h, count: 3)
            XCTAssertTrue((9...11).contains(waits[0]), "from 10 s at a \(interval) s poll interval: \(waits)")
            XCTAssertTrue((18...22).contains(waits[1]), "\(interval) s: \(waits)")
            XCTAssertTrue((36...44).contains(waits[2]), "\(interval) s: \(waits)")
        }
    }

    func testADownloadThatFailsInTransitGoesAgainAfterTenSecondsWhateverThePollInterval() throws {
        for interval in [2.0, 60.0] {
            let h = try Harness(extra: ["pollIntervalSeconds": .double(interval)])
            let (wf, runId) = submitRun(h)
            h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
            h.call("job.update", ["jobId": "job-1", "status": "succeeded", "outputs": ["image": ["url": "https://cdn/i.png"]]])
            XCTAssertEqual(h.state(wf, "stylize1"), "downloading")
            XCTAssertEqual(h.effects("remote.download").count, 1)
            h.call("job.transportError", ["runId": runId, "httpStatus": 503])
            var waited = 0
            while h.effects("remote.download").isEmpty && waited < 400 {
                h.advance(1)
                waited += 1
            }
            XCTAssertTrue((9...11).contains(waited), "from 10 s at a \(interval) s poll interval, was \(waited)")
        }
    }
}

/// Step 7: interrupted local work on relaunch.
final class InterruptedLocalTests: XCTestCase {
    func testLocalRunningWhenKilledIsFailedInterruptedAndRetryWorks() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let run = h.effects("local.run")
        XCTAssertEqual(run.count, 1)
        XCTAssertEqual(h.state(wf, "A"), "runningLocal")
        try h.crash()
        XCTAssertEqual(h.state(wf, "A"), "failed")
        XCTAssertEqual(h.node(wf, "A")["lastError"]?["code"], "interrupted")
        XCTAssertTrue(h.effects("local.run").isEmpty, "the interrupted run is not re-delivered")
        // A late completion of the interrupted run never makes it succeed.
        let late = h.call("local.completed", TextTools.run(run[0]).objectValue!)
        XCTAssertEqual(late["applied"], false)
        XCTAssertEqual(h.state(wf, "A"), "failed")
        let retry = h.call("node.retry", ["workflowId": .string(wf), "nodeId": "A"])
        XCTAssertNotEqual(retry["runId"], run[0]["runId"])
        XCTAssertEqual(h.runLocalTools(), 1)
        XCTAssertEqual(h.state(wf, "A"), "succeeded")
    }
}

extension InterruptedLocalTests {
    /// A `local.run` is never delivered again after a reopen (its run is interrupted), so it is
    /// kept in memory only; effects that are answered later (a submit) are stored.
    func testLocalRunEffectsAreNotStoredWhileRemoteSubmitsAre() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let local = h.create(h.register(template: Templates.chain))
        h.call("node.run", ["workflowId": .string(local), "nodeId": "A"])
        h.startOneRemote()
        XCTAssertEqual(h.effects("local.run").count, 1, "delivered all the same")
        h.engine.close()  // the store has one owner: the engine, then this look at its rows
        let store = try SQLiteStore(path: h.storePath!)
        defer { store.close() }
        XCTAssertEqual(try store.loadSnapshot().effects.map(\.type), ["remote.submit"])
    }

    /// A store written before local runs' effects were kept in memory holds their rows: settling
    /// such an effect (the interrupted run) deletes its row.
    func testAnOlderStoresLocalRunEffectRowIsDeletedWhenItsRunIsInterrupted() throws {
        let h = try Harness(file: true)
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        let runId = h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])["runId"]!.stringValue!
        h.engine.close()
        do {
            let store = try SQLiteStore(path: h.storePath!)
            var legacy = ChangeSet()
            legacy.effectInserts = [Effect(seq: 1_000, id: "e-1000", type: "local.run",
                                           body: ["workflowId": .string(wf), "nodeId": "A", "runId": .string(runId),
                                                  "kind": "Text", "params": [:], "inputs": [:]],
                                           answerKey: "local:\(runId)", isDurable: true)]
            try store.commit(legacy)
            XCTAssertEqual(try store.loadSnapshot().effects.count, 1)
            store.close()
        }
        try h.reopen()
        XCTAssertEqual(h.state(wf, "A"), "failed")
        XCTAssertTrue(h.effects("local.run").isEmpty)
        let store = try SQLiteStore(path: h.storePath!)
        defer { store.close() }
        XCTAssertTrue(try store.loadSnapshot().effects.isEmpty, "the interrupted run's stored effect is gone")
    }
}

/// A cancel must reach the provider even if the host dies right after taking it.
final class CancelDeliveryTests: XCTestCase {
    func testRemoteCancelIsDeliveredAgainAfterACrashUntilTheJobsEndIsReported() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        let first = h.effects("remote.cancel")
        XCTAssertEqual(first.count, 1)
        try h.crash()
        let again = h.effects("remote.cancel")
        XCTAssertEqual(again.map { $0["id"] }, first.map { $0["id"] }, "delivered again, same id")
        let answer = h.call("job.update", ["jobId": "job-1", "status": "cancelled"])
        XCTAssertEqual(answer["applied"], false, "the run was already cancelled")
        try h.crash()
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "answered: never again")
    }

    /// A cancel the host could not deliver (`job.transportError` while sending it) goes again
    /// after the reconnect backoff, 10 s doubling, for as long as the job has not been reported
    /// over; across a crash too, and at once when the network comes back.
    func testACancelThatDoesNotReachTheProviderIsSentAgainWithBackoffUntilTheJobEnds() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "running"])
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        XCTAssertEqual(h.effects("remote.cancel").count, 1)
        var waits: [Int] = []
        for _ in 0..<3 {
            let failed = h.call("job.transportError", ["jobId": "job-1", "httpStatus": 503])
            XCTAssertEqual(failed["applied"], true)
            XCTAssertEqual(failed["runStatus"], "cancelled")
            var waited = 0
            var cancels: [JSON] = []
            while cancels.isEmpty && waited < 400 {
                h.advance(1)
                waited += 1
                cancels = h.effects("remote.cancel")
            }
            XCTAssertEqual(cancels.map { $0["jobId"] }, ["job-1"])
            waits.append(waited)
        }
        XCTAssertTrue((9...11).contains(waits[0]) && (18...22).contains(waits[1]) && (36...44).contains(waits[2]), "\(waits)")
        XCTAssertEqual(h.state(wf, "stylize1"), "cancelled")

        // The retry's time is stored: a crash while waiting sends it then, once.
        h.call("job.transportError", ["jobId": "job-1"])
        let updated = h.call("workflow.get", ["workflowId": .string(wf)])["updatedAt"]
        try h.crash()
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "the failed cancel is off the record until its retry")
        XCTAssertNotEqual(h.call("engine.nextDeadline")["at"], .null)
        h.advance(100)
        XCTAssertEqual(h.effects("remote.cancel").count, 1)

        // Offline, it waits; back online, it goes at once.
        h.call("job.transportError", ["jobId": "job-1", "offline": true])
        h.call("network.set", ["online": false])
        h.advance(400)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "held while offline")
        h.call("network.set", ["online": true])
        XCTAssertEqual(h.effects("remote.cancel").count, 1, "sent when the network is back")

        // The provider reports the job over: nothing goes again, whatever comes later.
        h.call("job.transportError", ["jobId": "job-1"])
        let over = h.call("job.update", ["jobId": "job-1", "status": "cancelled"])
        XCTAssertEqual(over["applied"], false, "the run was already cancelled")
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null)
        h.advance(3_600)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty)
        let late = h.call("job.transportError", ["jobId": "job-1"])
        XCTAssertEqual(late["applied"], false, "no cancel on record: a late failure changes nothing")
        XCTAssertNotEqual(h.call("workflow.get", ["workflowId": .string(wf)])["updatedAt"], updated)
        let stamp = h.call("workflow.get", ["workflowId": .string(wf)])["updatedAt"]
        h.advance(5)
        h.call("job.transportError", ["jobId": "job-1"])
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)])["updatedAt"], stamp, "ignored: updatedAt stays")
    }

    /// Jobs no run holds: a second job the provider accepted for one run, and the job of a
    /// workflow deleted while its cancel waited to go again. A cancel of theirs that does not
    /// reach the provider goes again with the same backoff, across a crash, until the provider
    /// reports the job over.
    func testTheCancelOfAJobNoRunHoldsGoesAgainUntilTheJobEnds() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        h.call("job.submitted", ["runId": runId, "jobId": "job-2"])
        h.call("job.submitted", ["runId": runId, "jobId": "job-2"])  // the host sends its report again
        let duplicate = h.effects("remote.cancel")
        XCTAssertEqual(duplicate.map { $0["jobId"] }, ["job-2"], "one cancel for the duplicate: \(duplicate)")

        // Both ids given, and they disagree: refused, nothing changes.
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        XCTAssertEqual(h.fail("job.transportError", ["runId": runId, "jobId": "job-9"]).code, "jobMismatch")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before)

        // The duplicate's cancel fails: reported with the effect's ids, it goes again in ~10 s.
        let failed = h.call("job.transportError", ["runId": runId, "jobId": "job-2", "httpStatus": 503])
        XCTAssertEqual(failed["applied"], true)
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before, "job-1's run is untouched")
        h.advance(9)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty)
        h.advance(2)
        let again = h.effects("remote.cancel")
        XCTAssertEqual(again.map { $0["jobId"] }, ["job-2"])
        XCTAssertEqual(again.first?["runId"], runId)
        XCTAssertEqual(again.first?["reason"], "duplicateJob")
        h.call("job.transportError", ["jobId": "job-2"])
        try h.crash()
        XCTAssertTrue(h.effects("remote.cancel").isEmpty)
        h.advance(25)
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-2"], "the wait survived the crash")
        XCTAssertEqual(h.call("job.update", ["jobId": "job-2", "status": "cancelled"])["applied"], false)
        XCTAssertEqual(h.fail("job.transportError", ["jobId": "job-2"]).code, "unknownJob", "over: forgotten")

        // job-1's run is cancelled and its cancel fails; then the workflow is deleted.
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-1"])
        h.call("job.transportError", ["jobId": "job-1", "httpStatus": 502])
        h.call("workflow.delete", ["workflowId": .string(wf)])
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-1"], "the waiting cancel goes at the delete")
        let orphan = h.call("job.transportError", ["jobId": "job-1", "retryAfterSeconds": 60])
        XCTAssertEqual(orphan["applied"], true)
        try h.crash()
        h.advance(59)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "Retry-After first")
        h.advance(1)
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-1"])
        h.call("job.update", ["jobId": "job-1", "status": "cancelled"])
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null)
        h.advance(3_600)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty)
    }

    func testRunReportsTheStateAfterSchedulingAndToolsKeepExtensions() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let entry = h.call("tool.register", ["kind": "Noted", "outputs": ["text": "TextRef"], "x-owner": "studio"])
        XCTAssertEqual(entry["x-owner"], "studio")
        let wf = h.create(h.register(template: Templates.chain))
        XCTAssertEqual(h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])["state"], "runningLocal")
    }
}

final class ReconnectCadenceTests: XCTestCase {
    func testAfterReconnectingPollsReturnToTheTenSecondCadence() throws {
        let h = try Harness()
        h.startOneRemote()
        h.call("job.submitted", ["runId": h.effects("remote.submit")[0]["runId"]!, "jobId": "j"])
        for _ in 0..<6 {
            var waited = 0
            while h.effects("remote.poll").isEmpty && waited < 400 {
                h.advance(1)
                waited += 1
            }
            h.call("job.transportError", ["jobId": "j"])
        }
        h.call("job.update", ["jobId": "j", "status": "running"])
        var waited = 0
        while h.effects("remote.poll").isEmpty && waited < 400 {
            h.advance(1)
            waited += 1
        }
        XCTAssertTrue((9...11).contains(waited), "back to 10 s ± 10 %, waited \(waited)")
    }
}

/// Provider reports are about remote runs. One naming a local or interactive run by mistake (a
/// host mixing up its run ids) is refused and changes nothing: before, a transport error for a
/// running local run scheduled a poll that could never be sent, and every later `clock.advance`
/// spun on it and failed.
final class ProviderReportsForOtherRunsTests: XCTestCase {
    func testProviderReportsNamingALocalRunAreRefusedAndChangeNothing() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        let runId = h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])["runId"]!
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        let asset: JSON = ["type": "TextRef", "uri": "file:///t.txt"]
        for (op, args) in [("job.transportError", ["runId": runId, "httpStatus": 503]),
                           ("job.transportError", ["runId": runId, "offline": true]),
                           ("job.submitted", ["runId": runId, "jobId": "job-1"]),
                           ("job.downloaded", ["runId": runId, "port": "text", "asset": asset])] as [(String, JSONObject)] {
            let e = h.fail(op, args)
            XCTAssertEqual(e.status, .invalid, op)
            XCTAssertEqual(e.code, "notRemote", op)
            XCTAssertEqual(e.details["runId"], runId, op)
            XCTAssertEqual(e.details["mode"], "local", op)
        }
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before, "nothing changed")
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null, "no poll scheduled for a local run")
        XCTAssertEqual(h.call("clock.advance", ["seconds": 120])["fired"], 0)
        XCTAssertEqual(h.runLocalTools(), 1, "the local run goes on")
        XCTAssertEqual(h.state(wf, "A"), "succeeded")
        // A finished local run neither takes a job id nor asks the provider to cancel one.
        XCTAssertEqual(h.fail("job.submitted", ["runId": runId, "jobId": "job-2"]).code, "notRemote")
        XCTAssertTrue(h.take().filter { $0["type"] == "remote.cancel" }.isEmpty)
        XCTAssertEqual(h.fail("job.update", ["jobId": "job-2", "status": "running"]).code, "unknownJob")
    }

    func testProviderReportsNamingAnInteractiveRunAreRefused() throws {
        let h = try Harness()
        Templates.registerStylizeTools(h)
        let wf = h.create(h.register(template: Templates.stylize))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "load1"])
        let load = h.take().first { $0["type"] == "local.run" }!
        h.call("local.completed", ["runId": load["runId"]!, "outputs": ["image": ["type": "ImageRef", "uri": "file:///p.png"]]])
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
        let notify = h.take().first { $0["type"] == "notify" }!
        let runId = notify["runId"]!
        let e = h.fail("job.transportError", ["runId": runId, "httpStatus": 502])
        XCTAssertEqual(e.code, "notRemote")
        XCTAssertEqual(e.details["mode"], "interactive")
        XCTAssertEqual(h.fail("job.submitted", ["runId": runId, "jobId": "job-1"]).code, "notRemote")
        h.advance(60)
        XCTAssertEqual(h.state(wf, "mask1"), "awaitingUser")
    }

    /// Firing a timer must move its deadline on. One that does not (here a download retry kept
    /// on a run that is not downloading, read from a damaged store) fails the call at once with
    /// `timerStuck`, naming the timer, and changes nothing, instead of holding the call.
    func testATimerThatNeverMovesOnFailsTheCallWithTimerStuckAndChangesNothing() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let runId = h.effects("remote.submit")[0]["runId"]!
        h.call("job.submitted", ["runId": runId, "jobId": "job-1"])
        try h.damageRun(wf) { run in run.nextDownloadAt = Timestamp(rfc3339: "2026-01-01T00:00:05.000Z") }
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        let e = h.fail("clock.advance", ["seconds": 60])
        XCTAssertEqual(e.status, .internal)
        XCTAssertEqual(e.code, "timerStuck")
        XCTAssertEqual(e.details["timer"], .string("workflow \(wf)"))
        XCTAssertEqual(e.details["at"], "2026-01-01T00:00:05.000Z")
        XCTAssertEqual(h.now(), "2026-01-01T00:00:00.000Z", "the clock did not move")
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before)
        XCTAssertTrue(h.take().isEmpty, "nothing was emitted")
        // Cancelling the run ends its timers; the clock moves again.
        h.call("node.cancel", ["workflowId": .string(wf), "nodeId": "stylize1"])
        h.advance(60)
        XCTAssertEqual(h.now(), "2026-01-01T00:01:00.000Z")
    }
}

extension Harness {
    /// Rewrites the workflow's remote run in the store, as a damaged or hand-edited store would
    /// hold it, and reopens.
    func damageRun(_ wf: String, _ change: (inout Run) -> Void) throws {
        engine.close()
        do {
            let store = try SQLiteStore(path: storePath!)
            defer { store.close() }
            let old = try XCTUnwrap(try store.loadWorkflow(wf))
            var damaged = old
            let r = try XCTUnwrap(damaged.runs.firstIndex { $0.mode == .remote })
            change(&damaged.runs[r])
            var changes = ChangeSet()
            changes.workflows = [WorkflowWrite(old, damaged, nil)]
            try store.commit(changes)
        }
        try reopen()
    }
}

/// A workflow deleted while the host is still sending a submit: the job the provider then
/// accepts is cancelled, not left running (and billing) for nobody.
final class DeletedWorkflowSubmitTests: XCTestCase {
    func testAJobAcceptedAfterItsWorkflowWasDeletedIsCancelledEvenAfterAReopen() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let submit = h.effects("remote.submit")[0]
        h.call("workflow.delete", ["workflowId": .string(wf)])
        try h.crash()
        let r = h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "job-late"])
        XCTAssertEqual(r["applied"], false)
        let cancels = h.effects("remote.cancel")
        XCTAssertEqual(cancels.map { $0["jobId"] }, ["job-late"])
        XCTAssertEqual(cancels.first?["workflowId"], .string(wf))
        XCTAssertEqual(cancels.first?["nodeId"], "stylize1")
        // The provider's final status answers the cancel; a second report of the same job is
        // answered the same way and cancels nothing again.
        h.call("job.update", ["jobId": "job-late", "status": "cancelled"])
        XCTAssertTrue(h.effects("remote.cancel").isEmpty)
        XCTAssertEqual(h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "job-late"])["applied"], false)
        XCTAssertTrue(h.effects("remote.cancel").isEmpty, "cancelled once")
    }

    func testAJobAcceptedForARunCancelledOrWaitingToRetryBeforeTheDeleteIsCancelledToo() throws {
        let h = try Harness()
        // Cancelled while its submit was in flight, then the workflow deleted.
        let a = h.startOneRemote()
        let submitA = h.effects("remote.submit")[0]
        h.call("node.cancel", ["workflowId": .string(a), "nodeId": "stylize1"])
        h.call("workflow.delete", ["workflowId": .string(a)])
        XCTAssertEqual(h.call("job.submitted", ["runId": submitA["runId"]!, "jobId": "job-a"])["applied"], false)
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-a"])
        // Waiting out a submit retry (the first attempt may still reach the provider), then deleted.
        let b = h.create(h.register(template: Templates.oneRemote()))
        h.call("workflow.runAllReady", ["workflowId": .string(b)])
        let submitB = h.effects("remote.submit")[0]
        h.call("job.transportError", ["runId": submitB["runId"]!, "httpStatus": 503])
        h.call("workflow.delete", ["workflowId": .string(b)])
        XCTAssertEqual(h.call("job.submitted", ["runId": submitB["runId"]!, "jobId": "job-b"])["applied"], false)
        XCTAssertEqual(h.effects("remote.cancel").map { $0["jobId"] }, ["job-b"])
    }
}

/// A node whose template names no class takes its tool's: a tool registered after the template
/// decides where the node runs.
final class LateToolClassTests: XCTestCase {
    func testARemoteToolRegisteredAfterTheTemplateRunsRemotelyAndWaitsWhileOffline() throws {
        let h = try Harness()
        let t: JSON = ["schema": "app.workflow/v2", "name": "late",
                       "nodes": [["id": "up", "kind": "Upscale", "outputs": ["image": "ImageRef"]]]]
        let wf = h.create(h.register(template: t))
        XCTAssertEqual(h.node(wf, "up")["blockedReason"]?["code"], "toolNotInstalled")
        h.call("network.set", ["online": false])
        h.register(tool: "Upscale", outputs: ["image": "ImageRef"], remote: true)
        XCTAssertEqual(h.node(wf, "up")["blockedReason"]?["code"], "offline", "a remote tool waits for the network")
        XCTAssertEqual(h.node(wf, "up")["resourceClass"], "remote")
        h.call("network.set", ["online": true])
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "up"])
        XCTAssertEqual(h.state(wf, "up"), "queuedRemote")
        XCTAssertEqual(h.take().map { $0["type"] }, ["remote.submit"])
    }

    func testARunKeepsTheClassItWasCreatedWithAndTheCardShowsIt() throws {
        let h = try Harness()
        let t: JSON = ["schema": "app.workflow/v2", "name": "two",
                       "nodes": [["id": "a", "kind": "Upscale", "outputs": ["image": "ImageRef"]],
                                 ["id": "b", "kind": "Upscale", "outputs": ["image": "ImageRef"]]]]
        let wf = h.create(h.register(template: t))
        h.register(tool: "Upscale", outputs: ["image": "ImageRef"])  // local
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "a"])
        XCTAssertEqual(h.state(wf, "a"), "runningLocal")
        h.register(tool: "Upscale", outputs: ["image": "ImageRef"], remote: true)
        XCTAssertEqual(h.node(wf, "a")["resourceClass"], "local", "its run is local")
        XCTAssertEqual(h.node(wf, "b")["resourceClass"], "remote", "a new run would be remote")
        let cards = h.call("workflow.detail", ["workflowId": .string(wf)])["cards"]!.arrayValue!
        XCTAssertEqual(cards.map { $0["resourceClass"] }, ["local", "remote"])
    }

    func testTheClassATemplateWritesIsKeptWhateverALaterToolSays() throws {
        let h = try Harness()
        let fixed: JSON = ["schema": "app.workflow/v2", "name": "fixed",
                           "nodes": [["id": "up", "kind": "Upscale", "outputs": ["image": "ImageRef"],
                                      "resources": ["class": "local"]]]]
        let wf = h.create(h.register(template: fixed))
        h.register(tool: "Upscale", outputs: ["image": "ImageRef"], remote: true)
        XCTAssertEqual(h.node(wf, "up")["resourceClass"], "local")
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "up"])
        XCTAssertEqual(h.state(wf, "up"), "runningLocal")
    }
}

/// Pausing polling stops polls: also one the host had taken, after a reopen (TEST PLAN §3.3:
/// after a relaunch polling resumes only if enabled; §7.3).
final class PausedPollingTests: XCTestCase {
    func testAPollTakenBeforeThePauseIsNotHandedOutAgainAfterAReopen() throws {
        let h = try Harness(file: true)
        let wf = h.startOneRemote()
        let submit = h.effects("remote.submit")[0]
        h.call("job.submitted", ["runId": submit["runId"]!, "jobId": "job-1"])
        h.advance(11)
        XCTAssertEqual(h.effects("remote.poll").count, 1, "taken: the host is polling")
        h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true])
        try h.crash()
        XCTAssertTrue(h.effects("remote.poll").isEmpty)
        h.advance(3600)
        XCTAssertTrue(h.effects("remote.poll").isEmpty, "paused")
        // The answer of the poll that was in flight still counts.
        XCTAssertEqual(h.call("job.update", ["jobId": "job-1", "status": "running", "progress": 0.5])["applied"], true)
    }
}

/// What a host reports is checked field by field: a field of the wrong type or of an unknown
/// name is refused with the field's path, and nothing changes (a typo never passes silently).
final class HostReportFieldTests: XCTestCase {
    func testAReportedErrorOrAssetWithAWrongOrUnknownFieldIsRefusedAndChangesNothing() throws {
        let h = try Harness()
        Templates.registerTextTools(h)
        let wf = h.create(h.register(template: Templates.chain))
        h.call("node.run", ["workflowId": .string(wf), "nodeId": "A"])
        let runId = h.effects("local.run")[0]["runId"]!
        let before = h.call("workflow.get", ["workflowId": .string(wf)])
        let refused: [(JSONObject, String)] = [
            (["error": ["code": 123]], "error.code"),
            (["error": ["code": ""]], "error.code"),
            (["error": ["message": ["x"]]], "error.message"),
            (["error": ["hint": false]], "error.hint"),
            (["error": ["details": "nope"]], "error.details"),
            (["error": ["code": "E1", "extra": 1]], "error.extra"),
            (["outputs": ["text": ["type": "TextRef", "uri": .string(TextAsset.uri("x")), "byte": 3]]], "outputs.text.byte"),
        ]
        for (report, argument) in refused {
            var args = report
            args["runId"] = runId
            let e = h.fail("local.completed", args)
            XCTAssertEqual(e.status, .invalid, argument)
            XCTAssertEqual(e.details["argument"], .string(argument), "\(report)")
        }
        XCTAssertEqual(h.call("workflow.get", ["workflowId": .string(wf)]), before, "nothing changed")
        // An asset given back as the engine writes it, and a host's own x- field, are accepted.
        let echoed: JSON = ["assetId": "as-99", "type": "TextRef", "uri": .string(TextAsset.uri("a")), "bytes": 1,
                            "createdAt": "2026-01-01T00:00:00.000Z", "pinned": false, "provenance": .null, "x-trace": "t1"]
        XCTAssertEqual(h.call("local.completed", ["runId": runId, "outputs": ["text": echoed]])["applied"], true)
        XCTAssertEqual(h.state(wf, "A"), "succeeded")
        XCTAssertNotEqual(h.node(wf, "A")["outputs"]?["text"], "as-99", "the engine assigns the id")
    }
}
