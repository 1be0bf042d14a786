/// Upgrades the key-based `app.workflow/v1` form to `app.workflow/v2`, deterministically.
///
/// v1: `{"schema": "app.workflow/v1", "name", "steps": [{"id", "kind", "params"?, "requiredKeys": ["image"],
/// "producedKeys": ["mask"], "await"?, "resources"?, "title"?}]}`. A key `k` becomes a port of type
/// `KRef` (`image` → `ImageRef`), and each required key is fed by the nearest earlier step that
/// produces it. Steps keep their order; edges follow step order, then key order.
///
/// Every problem is collected, not just the first: the v1-only shapes (`steps`, `requiredKeys`,
/// `producedKeys`, repeated step ids) are checked here, and the rest of each step (kind, params, await,
/// resources, …) by the v2 compiler on a best-effort upgrade, whose paths are mapped back into the v1
/// document.
enum TemplateUpgrade {
    struct Outcome {
        /// The upgraded template. When `issues` is not empty it is a best-effort form built from the parts
        /// that could be read, for finding the remaining problems; it must not be registered.
        var v2: JSONObject
        /// The problems of the v1 shape itself, with paths into the v1 document.
        var issues: [TemplateIssue]
        /// For each v2 edge, the v1 path it came from (`$.steps[2].requiredKeys[0]`).
        var edgeOrigins: [String]
        /// For each v2 node, the index of the v1 step it came from (steps that are not objects have no node).
        var nodeOrigins: [Int]
        /// For each v2 node, its step's required and produced keys (to map port paths to key paths).
        var nodeKeys: [(required: [String], produced: [String])]

        /// Rewrites a v2 path in an issue found after the upgrade to the v1 document's path.
        func mapPath(_ issue: TemplateIssue) -> TemplateIssue {
            guard let path = issue.path else { return issue }
            var copy = issue
            var mapped = path
            if path.hasPrefix("$.nodes[") {
                let rest = path.dropFirst("$.nodes[".count)
                if let close = rest.firstIndex(of: "]"), let n = Int(rest[..<close]) {
                    let step = n < nodeOrigins.count ? nodeOrigins[n] : n
                    var tail = String(rest[rest.index(after: close)...])
                    if n < nodeKeys.count {
                        tail = Outcome.mapPortPath(tail, ports: ".inputs", keys: ".requiredKeys", names: nodeKeys[n].required)
                            ?? Outcome.mapPortPath(tail, ports: ".outputs", keys: ".producedKeys", names: nodeKeys[n].produced)
                            ?? tail
                    }
                    mapped = "$.steps[\(step)]" + tail
                }
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

        /// `.inputs.image` → `.requiredKeys[0]`, `.inputs` → `.requiredKeys`; nil when `tail` is not about `ports`.
        static func mapPortPath(_ tail: String, ports: String, keys: String, names: [String]) -> String? {
            guard tail.hasPrefix(ports) else { return nil }
            let after = tail.dropFirst(ports.count)
            if after.isEmpty { return keys }
            guard after.hasPrefix(".") else { return nil }
            let name = after.dropFirst().prefix { $0 != "." }
            guard let k = names.firstIndex(where: { $0 == name }) else { return keys }
            return "\(keys)[\(k)]"
        }
    }

    static let stepFields = ["id", "kind", "title", "description", "params", "requiredKeys",
                                          "producedKeys", "await", "resources", "summaryParams", "presets"]

    /// The port type of a v1 key: `image` → `ImageRef`.
    /// The longest key: its type, the key capitalised with "Ref" after it, is a type name of at
    /// most 64 characters.
    static let maxKeyLength = 61

    static func portType(forKey key: String) -> String {
        guard let first = key.first else { return "Ref" }
        return first.uppercased() + key.dropFirst() + "Ref"
    }

    /// Validates a v1 template: the v1 shape problems and everything the v2 compiler finds in the
    /// upgraded form, all with paths into the v1 document.
    static func compile(_ v1: JSONObject, tools: [String: ToolSpec], schema: String) -> TemplateValidation {
        let outcome = upgrade(v1)
        var result = TemplateCompiler.compileV2(outcome.v2, tools: tools, schema: schema)
        // The compiler may find again what the upgrade reported (a repeated id): report it once.
        let reported = Set(outcome.issues.map { "\($0.code) \($0.path ?? "")" })
        let found = result.errors.map { outcome.mapPath($0) }.filter { !reported.contains("\($0.code) \($0.path ?? "")") }
        result.errors = outcome.issues + found
        result.warnings = result.warnings.map { outcome.mapPath($0) }
        if !result.errors.isEmpty { result.template = nil }
        return result
    }

    static func upgrade(_ v1: JSONObject) -> Outcome {
        var r = JSONFieldReader(path: "$")
        r.rejectUnknown(v1, allowed: ["schema", "name", "description", "steps", "options"])
        // `name`, `description` and `options` have the same paths in v2: they are copied as written and
        // checked by the v2 compiler.
        var nodes: [JSON] = []
        var edges: [JSON] = []
        var origins: [String] = []
        var nodeOrigins: [Int] = []
        var nodeKeys: [(required: [String], produced: [String])] = []
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
                    /// The keys of `field`, or nil when the field has a problem (each one is reported).
                    func readKeys(_ field: String) -> [String]? {
                        guard let value = o[field], !value.isNull else { return [] }
                        guard case let .array(items) = value else {
                            s.malformed("\(s.path).\(field)", "'\(field)' must be an array of strings, not \(value.typeName)",
                                        nodeId: id)
                            return nil
                        }
                        var keys: [String] = []
                        var clean = true
                        for (k, item) in items.enumerated() {
                            guard case let .string(key) = item else {
                                s.malformed("\(s.path).\(field)[\(k)]", "must be a string, not \(item.typeName)", nodeId: id)
                                clean = false
                                continue
                            }
                            // A key names a port and, capitalised, its type (`image` → `ImageRef`):
                            // it starts with a letter, as a type name must.
                            guard key.utf8.first.map(Identifiers.isAlpha) == true,
                                  key.utf8.allSatisfy({ Identifiers.isAlnum($0) || $0 == UInt8(ascii: "_") }) else {
                                s.malformed("\(s.path).\(field)[\(k)]",
                                            "key '\(key)' must start with a letter and use letters, digits or _", nodeId: id)
                                clean = false
                                continue
                            }
                            // Its type adds "Ref", and a type name is at most 64 characters.
                            guard key.utf8.count <= Self.maxKeyLength else {
                                s.malformed("\(s.path).\(field)[\(k)]",
                                            "key '\(key)' is \(key.utf8.count) characters; a key is at most \(Self.maxKeyLength), as its type ('\(portType(forKey: key))') may have at most 64",
                                            nodeId: id)
                                clean = false
                                continue
                            }
                            guard !keys.contains(key) else {
                                s.malformed("\(s.path).\(field)[\(k)]", "key '\(key)' is listed twice", nodeId: id)
                                clean = false
                                continue
                            }
                            keys.append(key)
                        }
                        return clean ? keys : nil
                    }
                    let required = readKeys("requiredKeys")
                    let produced = readKeys("producedKeys")
                    var repeated = false
                    if let id, !stepIds.insert(id).inserted {
                        // Keys resolve by step id: a repeated id makes every edge ambiguous.
                        repeated = true
                        s.append(TemplateIssue(code: TemplateErrorCode.duplicateNodeId,
                                               message: "step id '\(id)' is used more than once", nodeId: id,
                                               path: "\(s.path).id"))
                    }
                    r.append(contentsOf: s.issues)

                    // The node, even for a step with problems, so the compiler checks the rest of it. A key
                    // list with a problem is left out (the tool catalogue may supply the ports).
                    var node = JSONObject()
                    for key in ["id", "kind", "title", "description", "params"] { if let v = o[key] { node[key] = v } }
                    if let required {
                        var inputs = JSONObject()
                        for key in required where !inputs.contains(key) { inputs[key] = .string(portType(forKey: key)) }
                        node["inputs"] = .object(inputs)
                    }
                    if let produced {
                        var outputs = JSONObject()
                        for key in produced where !outputs.contains(key) { outputs[key] = .string(portType(forKey: key)) }
                        node["outputs"] = .object(outputs)
                    }
                    for key in ["await", "resources", "summaryParams", "presets"] { if let v = o[key] { node[key] = v } }
                    for (k, v) in o where k.hasPrefix("x-") { node[k] = v }
                    nodes.append(.object(node))
                    nodeOrigins.append(i)
                    nodeKeys.append((required ?? [], produced ?? []))

                    // Edges only between steps the compiler can resolve, so a broken step adds no noise.
                    guard let id, Identifiers.isValidNodeId(id), !repeated else { continue }
                    if let required {
                        for (k, key) in required.enumerated() {
                            guard let producer = latestProducer[key] else { continue }
                            edges.append(["from": [.string(producer), .string(key)], "to": [.string(id), .string(key)]])
                            origins.append("$.steps[\(i)].requiredKeys[\(k)]")
                        }
                    }
                    for key in produced ?? [] { latestProducer[key] = id }
                }
            } else {
                r.malformed("$.steps", "'steps' must be an array, not \(stepsValue.typeName)")
            }
        } else {
            r.malformed("$.steps", "missing required field 'steps'")
        }
        var v2: JSONObject = ["schema": .string(Template.currentSchema)]
        if let n = v1["name"] { v2["name"] = n }
        if let d = v1["description"] { v2["description"] = d }
        v2["nodes"] = .array(nodes)
        v2["edges"] = .array(edges)
        if let options = v1["options"] { v2["options"] = options }
        for (k, v) in v1 where k.hasPrefix("x-") { v2[k] = v }
        return Outcome(v2: v2, issues: r.issues, edgeOrigins: origins, nodeOrigins: nodeOrigins, nodeKeys: nodeKeys)
    }
}
