import WorkflowCore
@testable import WorkflowStore
import XCTest

/// A workflow summary's fields live in one shared object: copies stay values, and equality reads
/// every field.
final class WorkflowSummaryValueTests: XCTestCase {
    private let base = WorkflowSummary(
        workflowId: "wf-1", seq: 3, templateId: "tpl", title: "Title", status: .active, archived: false,
        createdAt: Timestamp(milliseconds: 5), updatedAt: Timestamp(milliseconds: 6), stepsDone: 1, stepsTotal: 4,
        awaitCount: 0, hasBlockingAwait: false, searchText: "title", nextDeadline: nil,
        queuedRemote: 0, queuedLocal: 1, runningRemote: 0, runningLocal: 1, inboxCount: 0)

    func testAWriteToACopyOfASummaryLeavesTheOriginalAsItWas() {
        var copy = base
        copy.stepsDone = 2
        copy.title = "Other"
        XCTAssertEqual(base.stepsDone, 1)
        XCTAssertEqual(base.title, "Title")
        XCTAssertEqual(copy.stepsDone, 2)
        XCTAssertNotEqual(copy, base)
        var again = copy
        again.stepsDone = 1
        again.title = "Title"
        XCTAssertFalse(again.storage === base.storage)
        XCTAssertEqual(again, base, "equal field by field, though two objects")
    }

    func testSummariesDifferingInAnyOneFieldAreNotEqual() {
        let writes: [(inout WorkflowSummary) -> Void] = [
            { $0.workflowId = "wf-2" }, { $0.seq = 4 }, { $0.templateId = "other" }, { $0.title = "T" },
            { $0.status = .done }, { $0.archived = true }, { $0.createdAt = Timestamp(milliseconds: 7) },
            { $0.updatedAt = Timestamp(milliseconds: 8) }, { $0.stepsDone = 2 }, { $0.stepsTotal = 5 },
            { $0.awaitCount = 1 }, { $0.hasBlockingAwait = true }, { $0.searchText = "t" },
            { $0.nextDeadline = Timestamp(milliseconds: 9) }, { $0.queuedRemote = 1 }, { $0.queuedLocal = 2 },
            { $0.runningRemote = 1 }, { $0.runningLocal = 2 }, { $0.inboxCount = 1 },
        ]
        // Every stored field has its write above: a field added later without one fails here.
        XCTAssertEqual(Mirror(reflecting: base.storage).children.count, writes.count)
        for (i, write) in writes.enumerated() {
            var other = base
            write(&other)
            XCTAssertNotEqual(other, base, "field \(i)")
            XCTAssertNotEqual(base, other, "field \(i), the other way")
        }
    }
}
