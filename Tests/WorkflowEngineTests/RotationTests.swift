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

    /// The ids of the line's workflows, in turn order.
    private static func ids(_ rotation: Rotation) -> [String] { rotation.map(\.id) }

    func testRandomJoinsTurnsAndDeparturesKeepTheTurnOrderOfTheRule() {
        var rng = SplitMix64(seed: 11)
        // Both queues' lines over the same workflows: each keeps its own keys in their places.
        let rotations = [Rotation(remote: true), Rotation(remote: false)]
        var models = [Model(), Model()]
        var lastServed: [[String: Int64]] = [[:], [:]]
        var counter: Int64 = 0
        let places = (0..<40).map { LinePlace(id: "wf-\($0)") }
        for step in 0..<20_000 {
            let place = places[Int(rng.next() % UInt64(places.count))]
            let id = place.id
            let q = Int(rng.next() % 2)
            let rotation = rotations[q]
            switch rng.next() % 4 {
            case 0 where !rotation.contains(place):  // joins the line (its queue was empty)
                rotation.insert(place, lastServed: lastServed[q][id] ?? 0)
                models[q].insert(id, lastServed: lastServed[q][id] ?? 0)
            case 1:  // leaves it (nothing queued any more)
                rotation.remove(place)
                models[q].remove(id)
            default:  // served: to the back, if in line
                counter += 1
                lastServed[q][id] = counter
                if rotation.contains(place) {
                    rotation.insert(place, lastServed: counter)
                    models[q].insert(id, lastServed: counter)
                }
            }
            let model = models[q]
            XCTAssertEqual(Self.ids(rotation), model.members.map(\.id), "step \(step)")
            XCTAssertEqual(rotation.count, model.members.count)
            if Self.ids(rotation) != model.members.map(\.id) { return }
        }
    }

    /// A long line whose front workflow is served again and again leaves a long run of passed
    /// entries before its head; once they are over half the array they are dropped in one go.
    /// The order stays the rule's throughout: each serve moves the front to the back.
    func testServingTheFrontOfALongLineOverAndOverKeepsTheOrderAcrossTheCompaction() {
        let n = 2_000
        let ids = (0..<n).map { "wf-\($0)" }
        let places = ids.map(LinePlace.init)
        let rotation = Rotation(remote: false)
        for place in places { rotation.insert(place, lastServed: 0) }
        for served in 1...(2 * n + 500) {
            let front = rotation.first { _ in true }!
            rotation.insert(front, lastServed: Int64(served))
            if served % 500 == 0 || served == n + 1 {
                let k = served % n
                let order = Self.ids(rotation)
                // Compared whole, reported briefly (2,000 ids would bury the message).
                XCTAssertTrue(order == Array(ids[k...] + ids[..<k]),
                              "after \(served) serves: \(order.count) in line, from \(order.prefix(3)); expected from \(ids[k])")
            }
        }
        rotation.remove(places[7])
        XCTAssertEqual(rotation.count, n - 1)
        XCTAssertEqual(Self.ids(rotation).prefix(3), ["wf-500", "wf-501", "wf-502"])
        XCTAssertFalse(Self.ids(rotation).contains("wf-7"))
    }

    /// A workflow's place holds its key in each queue's line: joining, being served in or
    /// leaving one line leaves its place in the other as it was.
    func testAPlaceKeepsItsKeyInEachLineApart() {
        let remote = Rotation(remote: true), local = Rotation(remote: false)
        let places = (0..<4).map { LinePlace(id: "wf-\($0)") }
        for p in places { remote.insert(p, lastServed: 0) }
        for p in places.reversed() { local.insert(p, lastServed: 0) }
        remote.insert(places[0], lastServed: 1)  // served remotely: to the back of that line only
        local.remove(places[2])
        XCTAssertEqual(Self.ids(remote), ["wf-1", "wf-2", "wf-3", "wf-0"])
        XCTAssertEqual(Self.ids(local), ["wf-3", "wf-1", "wf-0"])
        XCTAssertTrue(remote.contains(places[2]))
        XCTAssertFalse(local.contains(places[2]))
        XCTAssertEqual([remote.count, local.count], [4, 3])
    }
}
