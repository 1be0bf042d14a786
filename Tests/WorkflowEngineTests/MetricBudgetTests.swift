import WorkflowCore
import WorkflowEngine
import XCTest

/// 003 step 13 (Performance): "P95 launch ≤ X ms with 100 instances; polling loop <2% CPU idle",
/// with `MetricBudgetTests`: "run seeded workload, assert budget not exceeded". Times live in
/// `wf-bench`, not in timed tests (rehydration: 100 workflows, half mid-run, reopened against a
/// goal of 20 ms; timers: the cost of one fire). What a test can hold exactly is the work the
/// budget stands for: a host's idle loop (sleep until `engine.nextDeadline`, `clock.advance` or
/// `engine.tick`, take the effects) wakes only for the polls the engine owes, never in a busy
/// loop, and not at all when nothing is owed; a launch with 100 instances resubmits nothing.
final class MetricBudgetTests: XCTestCase {
    /// Room for the 100 jobs at once.
    private static let caps: JSONObject = ["concurrency": ["remote": 100, "local": 2]]

    /// A seeded workload: 100 one-node workflows, each with a remote job accepted and running.
    private func hundredJobsInFlight(_ h: Harness) -> [String] {
        h.register(tool: "StylizeRemote", outputs: ["image": "ImageRef"], remote: true)
        let tpl = h.register(template: Templates.oneRemote())
        let workflows = (0..<100).map { _ in
            let wf = h.create(tpl)
            h.call("workflow.runAllReady", ["workflowId": .string(wf)])
            return wf
        }
        let submits = h.effects("remote.submit")
        XCTAssertEqual(submits.count, 100)
        for (i, submit) in submits.enumerated() {
            h.call("job.submitted", ["runId": submit["runId"]!, "jobId": .string("job-\(i)")])
            h.call("job.update", ["jobId": .string("job-\(i)"), "status": "running"])
        }
        return workflows
    }

    /// The host's idle loop for `span` seconds of its clock: sleeps until the next deadline,
    /// advances to it and takes what is due. Returns the wake-ups and the effects by type.
    private func idleLoop(_ h: Harness, span: Double) -> (wakeUps: Int, effects: [String: Int]) {
        guard let start = Timestamp(rfc3339: h.now()) else { XCTFail("no clock"); return (0, [:]) }
        let end = start.adding(seconds: span)
        var wakeUps = 0
        var effects: [String: Int] = [:]
        while let next = h.call("engine.nextDeadline")["at"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
              next <= end
        {
            guard let now = Timestamp(rfc3339: h.now()), next > now else {
                XCTFail("a deadline at or before now (\(next.rfc3339)) would make the host spin")
                break
            }
            h.advance(now.seconds(until: next))
            wakeUps += 1
            for e in h.take() { effects[e["type"]?.stringValue ?? "?", default: 0] += 1 }
        }
        return (wakeUps, effects)
    }

    func testAHundredInstancesPollingWakeTheHostOnlyForThePollsTheyOwe() throws {
        let h = try Harness(extra: Self.caps)
        _ = hundredJobsInFlight(h)
        _ = h.take()
        let (wakeUps, effects) = idleLoop(h, span: 600)
        // A poll every 10 s ± 10 % per job: 55 to 67 in ten minutes for each of the 100 jobs.
        let polls = effects["remote.poll"] ?? 0
        XCTAssertGreaterThanOrEqual(polls, 100 * 55)
        XCTAssertLessThanOrEqual(polls, 100 * 67)
        XCTAssertEqual(effects.keys.sorted(), ["remote.poll"], "an idle engine owes polls and nothing else")
        XCTAssertLessThanOrEqual(wakeUps, polls, "every wake-up of the host has a poll to send")
    }

    func testWithPollingPausedOrNothingInFlightTheIdleHostNeverWakes() throws {
        let h = try Harness(extra: Self.caps)
        let workflows = hundredJobsInFlight(h)
        for wf in workflows { h.call("workflow.setPolling", ["workflowId": .string(wf), "paused": true]) }
        _ = h.take()
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null, "the jobs run on at the provider; nothing is due here")
        // A host that wakes anyway (a timer of its own) finds nothing to do all hour.
        for _ in 0..<60 {
            XCTAssertEqual(h.call("clock.advance", ["seconds": 60])["fired"], 0)
            XCTAssertEqual(h.take(), [])
        }
        XCTAssertEqual(h.call("engine.nextDeadline")["at"], .null)
    }

    func testALaunchWithAHundredInstancesResumesPollingAndResubmitsNothing() throws {
        let h = try Harness(file: true, extra: Self.caps)
        _ = hundredJobsInFlight(h)
        _ = h.take()
        try h.crash()
        XCTAssertEqual(h.effects("remote.submit"), [], "a run with a job id is never resubmitted")
        let (_, effects) = idleLoop(h, span: 60)
        XCTAssertEqual(effects.keys.sorted(), ["remote.poll"])
        XCTAssertGreaterThanOrEqual(effects["remote.poll"] ?? 0, 100 * 5, "every job is polled again after the launch")
        XCTAssertLessThanOrEqual(effects["remote.poll"] ?? 0, 100 * 7)
    }
}
