/// Upgrades the key-based `app.workflow/v1` form to `app.workflow/v2`, deterministically.
///
/// v1: `{"schema": "app.workflow/v1", "name", "steps": [{"id", "kind", "params"?, "requiredKeys": ["image"],
/// "producedKeys": ["mask"], "await"?, "resources"?, "title"?}]}`. A key `k` becomes a port of type
/// `KRef` (`image` → `ImageRef`), and each required key is fed by the nearest earlier step that
/// produces it. Steps keep their order; edges follow step order, then key order.
public enum TemplateUpgrade {
    public struct Outcome {
        public var v2: JSONObject?
        public var issues: [TemplateIssue]
        /// For each v2 edge, the v1 path it came from (`$.steps[2].requiredKeys[0]`).
        var edgeOrigins: [String]

        /// Rewrites a v2 path in an issue found after the upgrade to the v1 document's path.
        func mapPath(_ issue: TemplateIssue) -> TemplateIssue {
            guard let path = issue.path else { return issue }
            var copy = issue
            var mapped = path
            if path.hasPrefix("$.nodes[") {
                mapped = "$.steps[" + path.dropFirst("$.nodes[".count)
            } else if path.hasPrefix("$.edges[") {
                let rest = path.dropFirst("$.edges[".count)
                if let close = rest.firstIndex(of: "]"), let j = Int(rest[..<close]), j < edgeOrigins.count {
                    mapped = edgeOrigins[j]
                }
            } else if path == "$.edges" {
                mapped = "$.steps"
            }
            copy.path = mapped
            if copy.message.hasPrefix(path + ":") {
                copy.message = mapped + copy.message.dropFirst(path.count)
            }
            return copy
        }
    }

    static let stepFields = ["id", "kind", "title", "description", "params", "requiredKeys",
                                          "producedKeys", "await", "resources", "summaryParams", "presets"]

    /// The port type of a v1 key: `image` → `ImageRef`.
    public static func portType(forKey key: String) -> String {
        guard let first = key.first else { return "Ref" }
        return first.uppercased() + key.dropFirst() + "Ref"
    }

    public static func upgrade(_ v1: JSONObject) -> Outcome {
        var r = JSONFieldReader(path: "$")
        r.rejectUnknown(v1, allowed: ["schema", "name", "description", "steps", "options"])
        let name = r.requiredString(v1, "name")
        _ = r.optionalString(v1, "description")
        var nodes: [JSON] = []
        var edges: [JSON] = []
        var origins: [String] = []
        var latestProducer: [String: String] = [:]  // key -> id of the nearest earlier producer
        var stepIds: Set<String> = []
        if let stepsValue = v1["steps"] {
            if case let .array(steps) = stepsValue {
                for (i, step) in steps.enumerated() {
                    var s = JSONFieldReader(arrayPath: "$.steps", index: i)
                    guard let o = s.object(step, what: "a step") else {
                        r.append(contentsOf: s.issues)
                        continue
                    }
                    let id = o["id"]?.stringValue
                    s.rejectUnknown(o, allowed: stepFields, nodeId: id)
                    let required = s.optionalStringArray(o, "requiredKeys", nodeId: id) ?? []
                    let produced = s.optionalStringArray(o, "producedKeys", nodeId: id) ?? []
                    for (k, key) in (required + produced).enumerated() where !Identifiers.isValidPortName(key) {
                        let field = k < required.count ? "requiredKeys[\(k)]" : "producedKeys[\(k - required.count)]"
                        s.malformed("\(s.path).\(field)", "key '\(key)' must start with a letter and use letters, digits or _",
                                    nodeId: id)
                    }
                    if let id, !stepIds.insert(id).inserted {
                        // Keys resolve by step id: a repeated id makes every edge ambiguous.
                        s.append(TemplateIssue(code: TemplateErrorCode.duplicateNodeId,
                                               message: "step id '\(id)' is used more than once", nodeId: id,
                                               path: "\(s.path).id"))
                    }
                    r.append(contentsOf: s.issues)
                    guard s.issues.isEmpty else { continue }

                    var node = JSONObject()
                    for key in ["id", "kind", "title", "description", "params"] { if let v = o[key] { node[key] = v } }
                    var inputs = JSONObject()
                    for key in required where !inputs.contains(key) { inputs[key] = .string(portType(forKey: key)) }
                    var outputs = JSONObject()
                    for key in produced where !outputs.contains(key) { outputs[key] = .string(portType(forKey: key)) }
                    node["inputs"] = .object(inputs)
                    node["outputs"] = .object(outputs)
                    for key in ["await", "resources", "summaryParams", "presets"] { if let v = o[key] { node[key] = v } }
                    for (k, v) in o where k.hasPrefix("x-") { node[k] = v }
                    nodes.append(.object(node))

                    if let id {
                        for (k, key) in required.enumerated() {
                            guard let producer = latestProducer[key] else { continue }
                            edges.append(["from": [.string(producer), .string(key)], "to": [.string(id), .string(key)]])
                            origins.append("$.steps[\(i)].requiredKeys[\(k)]")
                        }
                        for key in produced { latestProducer[key] = id }
                    }
                }
            } else {
                r.malformed("$.steps", "'steps' must be an array, not \(stepsValue.typeName)")
            }
        } else {
            r.malformed("$.steps", "missing required field 'steps'")
        }
        guard r.issues.isEmpty, let name else { return Outcome(v2: nil, issues: r.issues, edgeOrigins: []) }
        var v2: JSONObject = ["schema": .string(Template.currentSchema), "name": .string(name)]
        if let d = v1["description"] { v2["description"] = d }
        v2["nodes"] = .array(nodes)
        v2["edges"] = .array(edges)
        if let options = v1["options"] { v2["options"] = options }
        for (k, v) in v1 where k.hasPrefix("x-") { v2[k] = v }
        return Outcome(v2: v2, issues: [], edgeOrigins: origins)
    }
}
