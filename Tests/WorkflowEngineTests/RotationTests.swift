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
