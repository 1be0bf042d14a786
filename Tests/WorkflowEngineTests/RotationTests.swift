import WorkflowCore
@testable import WorkflowEngine
import XCTest

/// The scheduler's turn order keeps its rule (least recently served first, never served before
/// any served, ties in arrival order) while moves to the back are O(1).
final class RotationTests: XCTestCase {
    /// The rule written the plain way: a list re-sorted on every change.
    private struct Model {
        var members: [(id: String, lastServed: Int64, arrival: Int64)] = []
        var arrivals: Int64 = 0

        mutating func insert(_ id: String, lastServed: Int64) {
            members.removeAll { $0.id == id }
            arrivals += 1
            members.append((id, lastServed, arrivals))
            members.sort { ($0.lastServed, $0.arrival) < ($1.lastServed, $1.arrival) }
        }

        mutating func remove(_ id: String) { members.removeAll { $0.id == id } }
    }

    func testRandomJoinsTurnsAndDeparturesKeepTheTurnOrderOfTheRule() {
        var rng = SplitMix64(seed: 11)
        var rotation = Rotation()
        var model = Model()
        var lastServed: [String: Int64] = [:]
        var counter: Int64 = 0
        let ids = (0..<40).map { "wf-\($0)" }
        for step in 0..<20_000 {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            switch rng.next() % 4 {
            case 0 where !rotation.contains(id):  // joins the line (its queue was empty)
                rotation.insert(id, lastServed: lastServed[id] ?? 0)
                model.insert(id, lastServed: lastServed[id] ?? 0)
            case 1:  // leaves it (nothing queued any more)
                rotation.remove(id)
                model.remove(id)
            default:  // served: to the back, if in line
                counter += 1
                lastServed[id] = counter
                if rotation.contains(id) {
                    rotation.insert(id, lastServed: counter)
                    model.insert(id, lastServed: counter)
                }
            }
            XCTAssertEqual(Array(rotation), model.members.map(\.id), "step \(step)")
            XCTAssertEqual(rotation.count, model.members.count)
            if Array(rotation) != model.members.map(\.id) { return }
        }
    }

    /// A long line whose front workflow is served again and again leaves a long run of passed
    /// entries before its head; once they are over half the array they are dropped in one go.
    /// The order stays the rule's throughout: each serve moves the front to the back.
    func testServingTheFrontOfALongLineOverAndOverKeepsTheOrderAcrossTheCompaction() {
        let n = 2_000
        let ids = (0..<n).map { "wf-\($0)" }
        var rotation = Rotation()
        for id in ids { rotation.insert(id, lastServed: 0) }
        for served in 1...(2 * n + 500) {
            let front = rotation.first { _ in true }!
            rotation.insert(front, lastServed: Int64(served))
            if served % 500 == 0 || served == n + 1 {
                let k = served % n
                let order = Array(rotation)
                // Compared whole, reported briefly (2,000 ids would bury the message).
                XCTAssertTrue(order == Array(ids[k...] + ids[..<k]),
                              "after \(served) serves: \(order.count) in line, from \(order.prefix(3)); expected from \(ids[k])")
            }
        }
        rotation.remove("wf-7")
        XCTAssertEqual(rotation.count, n - 1)
        XCTAssertEqual(Array(rotation).prefix(3), ["wf-500", "wf-501", "wf-502"])
        XCTAssertFalse(Array(rotation).contains("wf-7"))
    }

    func testASnapshotKeepsItsOrderWhileTheLineMovesOn() {
        var rotation = Rotation()
        for i in 0..<5 { rotation.insert("wf-\(i)", lastServed: 0) }
        let snapshot = rotation
        rotation.insert("wf-0", lastServed: 1)
        rotation.remove("wf-1")
        XCTAssertEqual(Array(snapshot), ["wf-0", "wf-1", "wf-2", "wf-3", "wf-4"])
        XCTAssertEqual(Array(rotation), ["wf-2", "wf-3", "wf-4", "wf-0"])
        XCTAssertTrue(snapshot.contains("wf-1"))
        XCTAssertFalse(rotation.contains("wf-1"))
    }
}
