import WorkflowCore
import XCTest

/// A workflow remembers whether any run or await could hold a timer as it was last marked
/// clean, and then reads only the records written since: what it answers must always be what
/// reading every record would, and a workflow holding none has no deadline.
final class TimerCacheTests: XCTestCase {
    static let t0 = Timestamp(milliseconds: 1_000)
    static let settings = RuleSettings()

    static func workflow(nodes: Int) -> Workflow {
        Workflow(workflowId: "wf_1", seq: 1, templateId: "t", title: "w", createdAt: t0,
                 nodes: (0..<nodes).map { NodeInstance(nodeId: "n\($0)", updatedAt: t0) })
    }

    static func run(_ i: Int) -> Run {
        Run(runId: "run-\(i)", nodeId: "n0", number: i, mode: .remote, kind: "K", trigger: .auto, status: .queued,
            params: [:], inputs: [:], idempotencyKey: "k\(i)", createdAt: t0)
    }

    static func awaitRequest(_ i: Int) -> AwaitRequest {
        AwaitRequest(awaitId: "aw-\(i)", workflowId: "wf_1", nodeId: "n0", runId: "run-1", type: .drawMask,
                     title: "Draw", detail: nil, urgency: .normal, blocking: true, createdAt: t0, expiresAt: nil,
                     deepLink: "app://x", onTimeout: .cancel, onCancel: nil, skippable: false,
                     notificationTitle: "t", notificationBody: "b")
    }

    /// The answer read from every run and await, as the cache must give it.
    static func fullScan(_ wf: Workflow) -> Bool {
        wf.runs.contains { r in withUnsafePointer(to: r) { Run.mayHoldTimer($0) } }
            || wf.awaits.contains { a in withUnsafePointer(to: a) { AwaitRequest.mayHoldTimer($0) } }
    }

    /// One random write a call could make: a run added, a run's timers set or cleared, an await
    /// added or cleared.
    static func write(_ wf: inout Workflow, _ rng: inout SplitMix64) {
        let at = Timestamp(milliseconds: Int64.random(in: 2_000...9_000, using: &rng))
        let choice = Int.random(in: 0..<6, using: &rng)
        if choice == 0 || (choice < 4 && wf.runs.isEmpty) {
            wf.runs.append(run(wf.runs.count + 1))
        } else if choice == 1 {
            let r = Int.random(in: 0..<wf.runs.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: wf.runs[r].nextPollAt = at
            case 1: wf.runs[r].nextAttemptAt = at
            case 2: wf.runs[r].nextDownloadAt = at
            default: wf.runs[r].nextCancelAt = at
            }
        } else if choice < 4 {
            let r = Int.random(in: 0..<wf.runs.count, using: &rng)
            wf.runs[r].nextPollAt = nil
            wf.runs[r].nextAttemptAt = nil
            wf.runs[r].nextDownloadAt = nil
            wf.runs[r].nextCancelAt = nil
        } else if choice == 4, !wf.awaits.isEmpty {
            wf.awaits[Int.random(in: 0..<wf.awaits.count, using: &rng)].cleared = true
        } else {
            var a = awaitRequest(wf.awaits.count + 1)
            a.cleared = Bool.random(using: &rng)
            wf.awaits.append(a)
        }
    }

    func testTheAnswerFromTheRecordsWrittenSinceCleanIsAlwaysTheFullOne() {
        var rng = SplitMix64(seed: 20_261_202)
        for round in 0..<200 {
            var committed = Self.workflow(nodes: 3)
            committed.markClean()
            XCTAssertFalse(committed.mayHoldTimers)
            for step in 0..<40 {
                // A call's copy: writes a few records, and sometimes commits (marks itself clean).
                var call = committed
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    Self.write(&call, &rng)
                    XCTAssertEqual(call.mayHoldTimers, Self.fullScan(call), "round \(round), step \(step)")
                }
                XCTAssertEqual(committed.mayHoldTimers, Self.fullScan(committed), "the committed copy keeps its own answer")
                if Bool.random(using: &rng) {
                    call.markClean()
                    committed = call
                }
                XCTAssertEqual(committed.mayHoldTimers, Self.fullScan(committed), "round \(round), step \(step)")
                if !Self.fullScan(committed) {
                    XCTAssertNil(Executor.nextDeadline(committed, online: true, settings: Self.settings))
                }
            }
        }
    }

    func testATimerWrittenAfterCleanGivesTheWorkflowItsDeadline() {
        var wf = Self.workflow(nodes: 2)
        wf.runs.append(Self.run(1))
        wf.runs.append(Self.run(2))
        wf.markClean()
        XCTAssertFalse(wf.mayHoldTimers)
        XCTAssertNil(Executor.nextDeadline(wf, online: true, settings: Self.settings))
        wf.runs[1].nextPollAt = Timestamp(milliseconds: 5_000)
        XCTAssertEqual(Executor.nextDeadline(wf, online: true, settings: Self.settings), Timestamp(milliseconds: 5_000))
        wf.markClean()
        XCTAssertTrue(wf.mayHoldTimers, "marked clean with a poll waiting")
        wf.runs[1].nextPollAt = nil
        XCTAssertNil(Executor.nextDeadline(wf, online: true, settings: Self.settings))
    }

    func testRunsReplacedWholeAreReadWhole() {
        var wf = Self.workflow(nodes: 1)
        wf.runs.append(Self.run(1))
        wf.markClean()
        XCTAssertFalse(wf.mayHoldTimers)
        var runs = wf.runs.elements
        runs[0].nextAttemptAt = Timestamp(milliseconds: 3_000)
        wf.runs = ChangeTrackedArray(runs)
        XCTAssertTrue(wf.mayHoldTimers, "an array replaced whole counts as written everywhere")
        wf.markClean()
        XCTAssertTrue(wf.mayHoldTimers)
    }
}
