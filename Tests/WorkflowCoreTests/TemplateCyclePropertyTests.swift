import WorkflowCore
import XCTest

/// Property tests of template validation (not just the graph algorithm): random DAG templates
/// validate; the same templates with one random back edge are refused with exactly one
/// `cycleDetected`, whose message is the cycle path `A → B → … → A`, whose `cycle` member (what
/// `template.validate` returns and `template.register` puts in `details.errors`) carries the same
/// path, and whose path is a real cycle of the template's edges through the back edge.
final class TemplateCyclePropertyTests: XCTestCase {
    /// A random layered DAG as a v2 template, and its edges as (from, to) node ids.
    struct RandomTemplate {
        var ids: [String]  // in topological rank order
        var nodes: [JSON]
        var edges: [(from: String, to: String)]
        var successors: [[Int]]  // by rank

        func json(extraEdge: (from: String, to: String)? = nil, at position: Int = 0) -> JSON {
            var all = edges
            if let extraEdge { all.insert(extraEdge, at: min(position, all.count)) }
            var withPorts = nodes
            if let extraEdge, let k = withPorts.firstIndex(where: { $0["id"]?.stringValue == extraEdge.to }) {
                // The back edge feeds its own input port, so no port has two producers.
                var node = withPorts[k].objectValue!
                var inputs = node["inputs"]?.objectValue ?? [:]
                inputs["back"] = "ImageRef"
                node["inputs"] = .object(inputs)
                withPorts[k] = .object(node)
            }
            let edgeJSON: [JSON] = all.map { e in
                let port = e.from == extraEdge?.from && e.to == extraEdge?.to ? "back" : "in_\(e.from)"
                return ["from": [.string(e.from), "out"], "to": [.string(e.to), .string(port)]]
            }
            return ["schema": "app.workflow/v2", "name": "random", "nodes": .array(withPorts), "edges": .array(edgeJSON)]
        }
    }

    func randomTemplate(_ rng: inout SplitMix64) -> RandomTemplate {
        let n = Int.random(in: 2...30, using: &rng)
        let ids = (0..<n).map { "n\($0)" }.shuffled(using: &rng)  // ids unrelated to rank
        var successors = [[Int]](repeating: [], count: n)
        var edges: [(from: String, to: String)] = []
        for b in 1..<n {
            for a in 0..<b where Int.random(in: 0..<4, using: &rng) == 0 {
                successors[a].append(b)
                edges.append((ids[a], ids[b]))
            }
        }
        if edges.isEmpty {
            successors[0].append(1)
            edges.append((ids[0], ids[1]))
        }
        var nodes: [JSON] = []
        for id in ids {
            var inputs = JSONObject()
            for e in edges where e.to == id { inputs["in_\(e.from)"] = "ImageRef" }
            nodes.append(["id": .string(id), "kind": "Pass", "inputs": .object(inputs), "outputs": ["out": "ImageRef"]])
        }
        return RandomTemplate(ids: ids, nodes: nodes.shuffled(using: &rng), edges: edges.shuffled(using: &rng),
                              successors: successors)
    }

    /// A back edge v → u where v is reachable from u by a random walk of at least one edge.
    func randomBackEdge(_ t: RandomTemplate, _ rng: inout SplitMix64) -> (from: String, to: String) {
        let starts = t.successors.indices.filter { !t.successors[$0].isEmpty }
        let u = starts.randomElement(using: &rng)!
        var v = t.successors[u].randomElement(using: &rng)!
        while !t.successors[v].isEmpty, Bool.random(using: &rng) { v = t.successors[v].randomElement(using: &rng)! }
        return (t.ids[v], t.ids[u])
    }

    func testRandomDAGTemplatesValidate() {
        var rng = SplitMix64(seed: 2026)
        for trial in 0..<200 {
            let t = randomTemplate(&rng)
            let v = TemplateCompiler.compile(t.json(), tools: [:])
            XCTAssertTrue(v.valid, "trial \(trial): \(v.errors)")
            XCTAssertEqual(v.template?.edges.count, t.edges.count, "trial \(trial)")
        }
    }

    func testARandomBackEdgeIsOneCycleDetectedWhosePathIsARealCycleInMessageAndDetails() throws {
        var rng = SplitMix64(seed: 9)
        var lengths: Set<Int> = []
        for trial in 0..<200 {
            let t = randomTemplate(&rng)
            let back = randomBackEdge(t, &rng)
            let position = Int.random(in: 0...t.edges.count, using: &rng)
            let template = t.json(extraEdge: back, at: position)
            let v = TemplateCompiler.compile(template, tools: [:])
            XCTAssertFalse(v.valid, "trial \(trial)")
            XCTAssertEqual(v.errors.map(\.code), ["cycleDetected"], "trial \(trial): \(v.errors)")
            let error = try XCTUnwrap(v.errors.first)
            let cycle = try XCTUnwrap(error.cycle, "trial \(trial): the cycle path is in the error's details")

            // The message shows the path.
            XCTAssertEqual(error.message, "cycle detected: " + cycle.joined(separator: " → "), "trial \(trial)")
            // The result JSON (template.validate; details.errors of template.register) carries it.
            XCTAssertEqual(error.json["cycle"], JSON(cycle), "trial \(trial)")
            XCTAssertEqual(v.json["errors"]?[0]?["cycle"], JSON(cycle), "trial \(trial)")

            // It is a real cycle: closed, simple, every hop an edge of the template, through the back edge.
            XCTAssertGreaterThanOrEqual(cycle.count, 3, "trial \(trial): \(cycle)")
            XCTAssertEqual(cycle.first, cycle.last, "trial \(trial): \(cycle)")
            XCTAssertEqual(Set(cycle.dropLast()).count, cycle.count - 1, "trial \(trial): a node repeats in \(cycle)")
            let edgeSet = Set((t.edges + [back]).map { "\($0.from)>\($0.to)" })
            let hops = zip(cycle, cycle.dropFirst()).map { "\($0)>\($1)" }
            for hop in hops { XCTAssertTrue(edgeSet.contains(hop), "trial \(trial): \(hop) is not an edge of \(cycle)") }
            XCTAssertTrue(hops.contains("\(back.from)>\(back.to)"), "trial \(trial): \(cycle) misses the back edge")
            XCTAssertEqual(error.nodeId, cycle.first, "trial \(trial)")

            // Its path is the edge that closes the cycle.
            let edges = try XCTUnwrap(template["edges"]?.arrayValue)
            let path = try XCTUnwrap(error.path)
            let index = try XCTUnwrap(Int(path.dropFirst("$.edges[".count).dropLast()), "trial \(trial): \(path)")
            XCTAssertEqual(edges[index]["from"]?[0]?.stringValue, cycle[cycle.count - 2], "trial \(trial)")
            XCTAssertEqual(edges[index]["to"]?[0]?.stringValue, cycle[cycle.count - 1], "trial \(trial)")
            lengths.insert(cycle.count - 1)
        }
        XCTAssertGreaterThan(lengths.count, 2, "cycles of several lengths were tried: \(lengths)")
    }
}
