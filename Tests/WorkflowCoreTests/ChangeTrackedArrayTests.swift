import WorkflowCore
import XCTest

/// The record arrays of a workflow: copies share what they did not write, and a call's changes
/// are found from the positions it touched.
final class ChangeTrackedArrayTests: XCTestCase {
    struct Record: Equatable, Sendable {
        var name: String
        var count: Int
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
        XCTAssertEqual(call.touched, [129, 64, 130])
        XCTAssertEqual(call.changedPositions(since: committed), [64, 129, 130])
        call.markClean()
        XCTAssertEqual(call.touched, [])
        call[129] = 0
        XCTAssertEqual(call.touched, [129], "marked clean: positions are recorded afresh")
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
        XCTAssertEqual(call.changedPositions(since: committed), [0, 63, 64, 127, 128, 200, 250, 299] + Array(300..<330))
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
