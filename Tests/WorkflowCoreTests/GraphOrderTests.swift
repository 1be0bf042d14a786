import WorkflowCore
import XCTest

/// Step 2: topological order (Kahn) and cycle detection, including property tests.
final class GraphOrderTests: XCTestCase {
    func testKahnOrderRespectsEdgesAndBreaksTiesByTemplateOrder() {
        // 3 → 1, 0 → 2: sources 0 and 3 come first in index order.
        let order = GraphAlgorithms.topologicalOrder(count: 4, edges: [(3, 1), (0, 2)])
        XCTAssertEqual(order, [0, 2, 3, 1])
    }

    func testACycleHasNoOrderAndIsReportedWithItsPath() {
        XCTAssertNil(GraphAlgorithms.topologicalOrder(count: 3, edges: [(0, 1), (1, 2), (2, 0)]))
        XCTAssertEqual(GraphAlgorithms.cycles(count: 3, edges: [(0, 1), (1, 2), (2, 0)]), [[0, 1, 2, 0]])
        XCTAssertEqual(GraphAlgorithms.cycles(count: 2, edges: [(1, 1)]), [[1, 1]], "a self-loop")
    }

    func testRandomDAGsAlwaysHaveAnOrderConsistentWithEveryEdge() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let n = Int.random(in: 1...40, using: &rng)
            let edges = randomDAG(n, &rng)
            guard let order = GraphAlgorithms.topologicalOrder(count: n, edges: edges) else {
                return XCTFail("a DAG was reported cyclic")
            }
            XCTAssertEqual(Set(order), Set(0..<n))
            var position = [Int](repeating: 0, count: n)
            for (p, v) in order.enumerated() { position[v] = p }
            for (a, b) in edges { XCTAssertLessThan(position[a], position[b]) }
            XCTAssertEqual(GraphAlgorithms.cycles(count: n, edges: edges), [])
        }
    }

    func testARandomBackEdgeIsReportedAsACycleWhosePathIsRealEdges() {
        var rng = SplitMix64(seed: 7)
        var checked = 0
        for _ in 0..<300 {
            let n = Int.random(in: 2...40, using: &rng)
            var edges = randomDAG(n, &rng)
            guard let (a, b) = edges.randomElement(using: &rng) else { continue }
            edges.append((b, a))  // back-edge: closes a → b → a
            XCTAssertNil(GraphAlgorithms.topologicalOrder(count: n, edges: edges))
            let cycles = GraphAlgorithms.cycles(count: n, edges: edges)
            XCTAssertFalse(cycles.isEmpty)
            let edgeSet = Set(edges.map { "\($0.0)>\($0.1)" })
            for cycle in cycles {
                XCTAssertEqual(cycle.first, cycle.last)
                for i in 0..<(cycle.count - 1) { XCTAssertTrue(edgeSet.contains("\(cycle[i])>\(cycle[i + 1])"), "\(cycle)") }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 250)
    }

    func testTemplateGraphOrderAndProducers() throws {
        let t = try XCTUnwrap(TemplateCompiler.compile(TemplateFixtures.sample, tools: [:]).template)
        let g = TemplateGraph(template: t)
        XCTAssertEqual(g.order.map { t.nodes[$0].id }, ["load1", "mask1", "stylize1", "compress1"])
        XCTAssertEqual(g.producers[g.index["stylize1"]!]["mask"]?.port, "mask")
        XCTAssertEqual(g.descendants(of: g.index["load1"]!).count, 3)
    }

    /// Edges only from lower to higher numbers: acyclic by construction.
    private func randomDAG(_ n: Int, _ rng: inout SplitMix64) -> [(Int, Int)] {
        var edges: [(Int, Int)] = []
        for b in 0..<n {
            for a in 0..<b where Int.random(in: 0..<5, using: &rng) == 0 { edges.append((a, b)) }
        }
        return edges.shuffled(using: &rng)
    }
}
