import CJansson
import WorkflowCAPI
import WorkflowCore

/// Issue 2's goal: converting a parsed `json_t` template of 10,000 nodes and 20,000 edges into the
/// engine's model and validating it takes at most half the time Jansson needs to parse its bytes.
enum ValidationBench {
    /// A layered DAG: 100 layers of 100 nodes; every node after the first layer takes two inputs
    /// from the previous layer, and 200 of them a third, optional one: 10,000 nodes, 20,000 edges.
    static func template(layers: Int = 100, width: Int = 100) -> JSON {
        var nodes: [JSON] = []
        var edges: [JSON] = []
        var extra = 20_000 - 2 * (layers - 1) * width
        for l in 0..<layers {
            for w in 0..<width {
                let id = "n\(l)_\(w)"
                var node: JSONObject = ["id": .string(id), "kind": .string("Stage\(w % 7)"),
                                        "params": ["steps": .int(Int64(w)), "cfg": .double(Double(l) / 10)],
                                        "outputs": ["image": "ImageRef"]]
                if l > 0 {
                    var inputs: JSONObject = ["a": "ImageRef", "b": "ImageRef"]
                    let prev = "n\(l - 1)_"
                    edges.append(["from": [.string(prev + "\(w)"), "image"], "to": [.string(id), "a"]])
                    edges.append(["from": [.string(prev + "\((w + 1) % width)"), "image"], "to": [.string(id), "b"]])
                    if extra > 0 {
                        inputs["c"] = ["type": "ImageRef", "optional": true]
                        edges.append(["from": [.string(prev + "\((w + 2) % width)"), "image"], "to": [.string(id), "c"]])
                        extra -= 1
                    }
                    node["inputs"] = .object(inputs)
                }
                nodes.append(.object(node))
            }
        }
        return ["schema": "app.workflow/v2", "name": "bench", "nodes": .array(nodes), "edges": .array(edges)]
    }

    static func run(repeats: Int) {
        let t = template()
        let bytes = JSONWriter.bytes(t)
        let nodeCount = t["nodes"]?.arrayValue?.count ?? 0
        let edgeCount = t["edges"]?.arrayValue?.count ?? 0
        print("validate: layered template, \(nodeCount) nodes, \(edgeCount) edges, \(bytes.count / 1024) KiB of JSON")
        var parsed: UnsafeMutablePointer<json_t>?
        let parse = Measure.median(repeats: repeats) {
            var error = json_error_t()
            if let p = parsed { json_decref(p) }
            parsed = bytes.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { json_loadb($0.baseAddress, buf.count, 0, &error) }
            }
        }
        guard let root = parsed else {
            print("validate: Jansson could not parse the template")
            return
        }
        defer { json_decref(root) }
        // The engine validates against its tool catalogue: the seven stage tools are registered.
        var tools: [String: ToolSpec] = [:]
        for k in 0..<7 {
            tools["Stage\(k)"] = ToolSpec(kind: "Stage\(k)", inputs: [PortSpec(name: "a", type: "ImageRef"),
                                                                      PortSpec(name: "b", type: "ImageRef"),
                                                                      PortSpec(name: "c", type: "ImageRef", optional: true)],
                                          outputs: [PortSpec(name: "image", type: "ImageRef")])
        }
        var valid = false
        let validate = Measure.median(repeats: repeats) {
            guard let json = try? JanssonBridge.toJSON(root, name: "template") else { return }
            valid = TemplateCompiler.compile(json, tools: tools).valid
        }
        // The two halves, for the record.
        var converted: JSON = .null
        let convert = Measure.median(repeats: repeats) { converted = (try? JanssonBridge.toJSON(root, name: "template")) ?? .null }
        let compile = Measure.median(repeats: repeats) { _ = TemplateCompiler.compile(converted, tools: tools) }
        let ratio = validate / parse
        print("  Jansson parse (baseline)      \(Measure.ms(parse))")
        print("  convert + validate            \(Measure.ms(validate))   valid: \(valid)")
        print("    of which json_t → JSON      \(Measure.ms(convert))")
        print("    of which validation         \(Measure.ms(compile))")
        print(String(format: "  ratio %.2f× the parse (goal ≤ 0.50×): %@", ratio, Measure.verdict(ratio <= 0.5)))
    }
}
