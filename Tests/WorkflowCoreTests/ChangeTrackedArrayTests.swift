import WorkflowCore
import XCTest

extension Int: ChangeTrackedRecord {}

/// The record arrays of a workflow: copies share what they did not write, and a call's changes
/// are found from the positions it touched.
final class ChangeTrackedArrayTests: XCTestCase {
    struct Record: ChangeTrackedRecord {
        var name: String
        var count: Int
    }

    func testPositionsBelowACountAndTheirNumberCrossWordBoundaries() {
        for n in [0, 1, 63, 64, 65, 128, 130] {
            let all = TouchedPositions(below: n)
            XCTAssertEqual(Array(all), Array(0..<n), "below \(n)")
            XCTAssertEqual(all.count, n, "below \(n)")
            XCTAssertEqual(all.isEmpty, n == 0)
        }
        var b = TouchedPositions.Builder()
        for p in [200, 3, 64, 3, 0, 127] { b.insert(p) }
        XCTAssertEqual(Array(b.positions), [0, 3, 64, 127, 200], "ascending, each once, whatever the order inserted")
        XCTAssertEqual(b.positions.count, 5)
    }

    func testACopyWritesOnlyItsOwnRecordsAndReportsThem() {
        var committed = ChangeTrackedArray([Record(name: "a", count: 0), Record(name: "b", count: 0), Record(name: "c", count: 0)])
        committed.markClean()
        var call = committed
        call[1].count += 1
        call.append(Record(name: "d", count: 0))
        XCTAssertEqual(call.changedPositions(since: committed), [1, 3])
        XCTAssertEqual(committed.elements.map(\.count), [0, 0, 0], "the committed copy is untouched")
        XCTAssertEqual(call.elements.map(\.count), [0, 1, 0, 0])
        XCTAssertNotEqual(call, committed)
    }

    func testARecordReadInPlaceIsTheOneAtItsPositionInThatCopy() {
        var committed = ChangeTrackedArray([Record(name: "a", count: 0), Record(name: "b", count: 5)])
        committed.markClean()
        var call = committed
        call[1].count = 6
        XCTAssertEqual(committed.withRecord(at: 1) { $0.pointee.count }, 5, "the committed copy's record, not the call's")
        XCTAssertEqual(call.withRecord(at: 1) { $0.pointee.count }, 6)
        for i in call.indices {
            XCTAssertEqual(call.withRecord(at: i) { $0.pointee }, call[i])
        }
    }

    func testWritingAnEqualValueIsNotAChange() {
        var committed = ChangeTrackedArray([Record(name: "a", count: 1)])
        committed.markClean()
        var call = committed
        call[0].count = 1
        call[0] = Record(name: "a", count: 1)
        XCTAssertEqual(call.touched, [0])
        XCTAssertEqual(call.changedPositions(since: committed), [])
        XCTAssertEqual(call, committed)
    }

    /// The cheap check that spares the full comparison of a written record never calls equal
    /// records different: a node, a run and an await each written one field at a time (a field
    /// it reads, and fields it does not), in a workflow's record arrays.
    func testTheCheapComparisonOfWrittenRecordsFindsEveryChangeAndNoneThatIsNot() {
        let t0 = Timestamp(milliseconds: 1_000)
        func check<R: ChangeTrackedRecord>(_ record: R, _ writes: [(inout R) -> Void], line: UInt = #line) {
            var committed = ChangeTrackedArray([record])
            committed.markClean()
            var same = committed
            same[0] = record  // a write of the same value
            XCTAssertEqual(same.changedPositions(since: committed), [], line: line)
            for (k, write) in writes.enumerated() {
                var call = committed
                write(&call[0])
                XCTAssertEqual(call.changedPositions(since: committed), [0], "write \(k)", line: line)
            }
        }
        let node = NodeInstance(nodeId: "n", state: .blocked, updatedAt: t0)
        check(node, [{ $0.state = .ready }, { $0.updatedAt = Timestamp(milliseconds: 2_000) }, { $0.attempts = 1 },
                     { $0.outputs = ["text": "as-1"] }, { $0.blockedReason = BlockedReason(code: "x", message: "y") },
                     { $0.currentRunId = "run-1" }])
        let run = Run(runId: "run-1", nodeId: "n", number: 1, mode: .local, kind: "K", trigger: .auto, status: .queued,
                      params: [:], inputs: ["in": "as-1"], idempotencyKey: "k", createdAt: t0)
        check(run, [{ $0.status = .running }, { $0.holdsSlot = true }, { $0.startedAt = t0 }, { $0.finishedAt = t0 },
                    { $0.nextPollAt = t0 }, { $0.pollCount = 2 }, { $0.progress = 0.5 }, { $0.outputs = ["text": "as-2"] },
                    { $0.jobId = "job-1" }, { $0.logTail = ["line"] }])
        let awaitRequest = AwaitRequest(awaitId: "aw-1", workflowId: "wf-1", nodeId: "n", runId: "run-1", type: .drawMask,
                                        title: "Draw", detail: nil, urgency: .normal, blocking: true, createdAt: t0,
                                        expiresAt: nil, deepLink: "app://x", onTimeout: .cancel, onCancel: nil,
                                        skippable: false, notificationTitle: "t", notificationBody: "b")
        check(awaitRequest, [{ $0.status = .snoozed }, { $0.snoozeCount = 1 }, { $0.snoozeUntil = t0 }, { $0.title = "Other" }])
    }

    /// A call that writes the same records over and over (a clock advanced over weeks of polls
    /// writes one run per poll) keeps one entry per record, so what reads the touched positions
    /// after each write stays as cheap as the first time.
    func testTouchedPositionsAreKeptOnceHoweverOftenTheyAreWritten() {
        var committed = ChangeTrackedArray(Array(repeating: 0, count: 130))
        committed.markClean()
        var call = committed
        for i in 0..<10_000 {
            call[i % 2 == 0 ? 129 : 64] += 1
        }
        call.append(7)
        call[130] = 8
        XCTAssertEqual(call.touched, [64, 129, 130])
        XCTAssertEqual(Array(call.touched), [64, 129, 130], "each once, ascending")
        XCTAssertEqual(call.changedPositions(since: committed), [64, 129, 130])
        call.markClean()
        XCTAssertEqual(call.touched, [])
        XCTAssertTrue(call.touched.isEmpty)
        call[129] = 0
        XCTAssertEqual(call.touched, [129], "marked clean: positions are recorded afresh")
    }

    func testTouchedPositionsAreReadAscendingAcrossEveryWordBoundary() {
        var committed = ChangeTrackedArray(Array(repeating: 0, count: 1_001))
        committed.markClean()
        var call = committed
        let written = [1_000, 128, 0, 191, 63, 127, 64, 500]
        for p in written { call[p] = 1 }
        XCTAssertEqual(Array(call.touched), written.sorted())
        XCTAssertEqual(Array(call.changedPositions(since: committed)), written.sorted())
    }

    /// Two copies of a large array (the touched positions past 63 kept apart from the first 64)
    /// that write and append at both ends leave the committed copy and each other as they were,
    /// and stay equal where they did not write.
    func testCopiesOfALargeArrayStayIndependentWhereverTheyWrite() {
        var committed = ChangeTrackedArray((0..<300).map { Record(name: "r\($0)", count: 0) })
        committed.markClean()
        var call = committed
        for i in [0, 63, 64, 127, 128, 200, 299] { call[i].count += 1 }
        call[250] = Record(name: "new", count: 5)
        for i in 300..<330 { call.append(Record(name: "r\(i)", count: 0)) }
        var other = committed
        other[64].count = 9
        other.append(Record(name: "other", count: 0))
        XCTAssertEqual(committed.count, 300)
        XCTAssertTrue(committed.elements.allSatisfy { $0.count == 0 }, "the committed copy is untouched")
        XCTAssertEqual(call.count, 330)
        XCTAssertEqual(Array(call.changedPositions(since: committed)), [0, 63, 64, 127, 128, 200, 250, 299] + Array(300..<330))
        XCTAssertEqual(call[250], Record(name: "new", count: 5))
        XCTAssertEqual(call[329], Record(name: "r329", count: 0))
        XCTAssertEqual(other[64].count, 9)
        XCTAssertEqual(other[300].name, "other")
        XCTAssertEqual(other.changedPositions(since: committed), [64, 300])
        XCTAssertEqual(Array(call.indices), Array(0..<330))
        XCTAssertEqual(call.elements.filter { $0.count == 1 }.count, 7)
        // Equality compares the records.
        var same = committed
        same[200].count = 0
        XCTAssertEqual(same, committed)
        XCTAssertNotEqual(call, committed)
        XCTAssertEqual(ChangeTrackedArray(committed.elements), committed)
    }

    /// Versions of one array, each a copy of another changed a little and marked clean, as a
    /// workflow is committed call after call: every version keeps its own records whatever its
    /// successors write or append (below position 64 and from 64 up), and reports exactly the
    /// positions it wrote.
    func testEveryVersionKeepsItsRecordsThroughTheWritesOfItsSuccessors() {
        var rng = SplitMix64(seed: 20_261_202)
        for round in 0..<60 {
            let start = [0, 1, 20, 63, 64, 90][round % 6]
            var current = ChangeTrackedArray((0..<start).map { Record(name: "r\($0)", count: 0) })
            current.markClean()
            var model = current.elements
            var versions: [(array: ChangeTrackedArray<Record>, model: [Record])] = [(current, model)]
            for step in 0..<50 {
                var call = current
                var written = Set<Int>()
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0..<2 where call.count < 140:
                        let r = Record(name: "a\(call.count)", count: step)
                        call.append(r)
                        model.append(r)
                        written.insert(call.count - 1)
                    case 2 where !model.isEmpty:
                        let i = Int.random(in: 0..<model.count, using: &rng)
                        let r = Record(name: "set\(step)", count: -step)
                        call[i] = r
                        model[i] = r
                        written.insert(i)
                    case _ where !model.isEmpty:
                        let i = Int.random(in: 0..<model.count, using: &rng)
                        call[i].count += 1
                        model[i].count += 1
                        written.insert(i)
                    default:
                        break
                    }
                }
                XCTAssertEqual(call.elements, model, "round \(round), step \(step)")
                XCTAssertEqual(Array(call.touched), written.sorted(), "round \(round), step \(step)")
                let changed = written.filter { $0 >= current.count || model[$0] != current[$0] }.sorted()
                XCTAssertEqual(Array(call.changedPositions(since: current)), changed, "round \(round), step \(step)")
                for i in model.indices { XCTAssertEqual(call.withRecord(at: i) { $0.pointee }, model[i]) }
                call.markClean()
                current = call
                versions.append((current, model))
                if versions.count > 6 { versions.removeFirst(Int.random(in: 1...3, using: &rng)) }
                for (v, m) in versions { XCTAssertEqual(v.elements, m, "an earlier version is as it was, round \(round)") }
            }
            XCTAssertEqual(current, ChangeTrackedArray(model), "equal to the same records in a new array")
        }
    }

    func testAnArrayNotMarkedCleanIsComparedWhole() {
        let stored = ChangeTrackedArray([1, 2, 3])
        let rebuilt = ChangeTrackedArray([1, 9, 3, 4])
        XCTAssertTrue(rebuilt.wholesale)
        XCTAssertEqual(rebuilt.changedPositions(since: stored), [1, 3])
    }

    func testRepeatedWritesAreReportedOnceInOrder() {
        var committed = ChangeTrackedArray([0, 0, 0, 0])
        committed.markClean()
        var call = committed
        call[3] = 1
        call[0] = 1
        call[3] = 2
        XCTAssertEqual(call.changedPositions(since: committed), [0, 3])
        call.markClean()
        XCTAssertEqual(call.changedPositions(since: committed), [], "clean again: it is what the store holds")
    }

    func testAWorkflowReportsItsOwnFieldsAndTheRecordsThatChanged() {
        let t = Timestamp(milliseconds: 1_767_225_600_000)
        var committed = Workflow(workflowId: "wf-1", seq: 1, templateId: "tpl-1", title: "One", createdAt: t,
                                 nodes: [NodeInstance(nodeId: "A", state: .ready, updatedAt: t),
                                         NodeInstance(nodeId: "B", state: .blocked, updatedAt: t)])
        XCTAssertEqual(committed.changes(since: nil), WorkflowChanges(record: true, nodes: [0, 1], runs: [], awaits: []))
        committed.markClean()
        var call = committed
        call.nodes[1].state = .ready
        XCTAssertEqual(call.changes(since: committed), WorkflowChanges(record: false, nodes: [1], runs: [], awaits: []))
        call.title = "Renamed"
        XCTAssertTrue(call.changes(since: committed).record)
        XCTAssertTrue(committed.changes(since: committed).isEmpty)
    }
}
