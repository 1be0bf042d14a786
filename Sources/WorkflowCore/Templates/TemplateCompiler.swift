/// A resolved edge, for spotting repeats without building strings. Hashes one mixed word.
struct EdgeKey: Hashable {
    let from: Int32, fromPort: Int32, to: Int32, toPort: Int32

    init(from: Int, fromPort: Int, to: Int, toPort: Int) {
        self.from = Int32(truncatingIfNeeded: from)
        self.fromPort = Int32(truncatingIfNeeded: fromPort)
        self.to = Int32(truncatingIfNeeded: to)
        self.toPort = Int32(truncatingIfNeeded: toPort)
    }

    func hash(into hasher: inout Hasher) {
        let a = UInt64(UInt32(bitPattern: from)) << 32 | UInt64(UInt32(bitPattern: to))
        let b = UInt64(UInt32(bitPattern: fromPort)) << 32 | UInt64(UInt32(bitPattern: toPort))
        hasher.combine(a &* 0x9E37_79B9_7F4A_7C15 ^ b)
    }
}

/// The outcome of validating a template: every error and warning, and the template when valid.
public struct TemplateValidation: Sendable {
    /// The schema the input declared (`app.workflow/v1` input is upgraded to v2).
    public var schema: String?
    public var template: Template?
    public var errors: [TemplateIssue]
    public var warnings: [TemplateIssue]

    public var valid: Bool { errors.isEmpty }

    /// `{valid, errors, warnings}` as `template.validate` returns it.
    public var json: JSON {
        ["valid": .bool(valid), "errors": .array(errors.map(\.json)), "warnings": .array(warnings.map(\.json))]
    }
}

/// Turns template JSON into a validated ``Template``: structure first (every malformed field with
/// its JSON path), then the graph rules (unknown nodes and ports, type mismatches, producers,
/// cycles), then the tool contracts. All errors are collected, not just the first.
public enum TemplateCompiler {
    /// `storedEarlier`: the template is one a store kept, registered by an earlier version whose
    /// rules were looser (lower-case or loosely written durations, a node named in an edge by
    /// another spelling of its id); those still read, so that an upgraded library opens every store
    /// the earlier one wrote. New templates never get this leniency.
    public static func compile(_ json: JSON, tools: [String: ToolSpec], storedEarlier: Bool = false) -> TemplateValidation {
        guard case let .object(top) = json else {
            let issue = TemplateIssue(code: TemplateErrorCode.malformedTemplate,
                                      message: "$: a template must be an object, not \(json.typeName)", path: "$")
            return TemplateValidation(schema: nil, template: nil, errors: [issue], warnings: [])
        }
        guard let schemaValue = top["schema"] else {
            let issue = TemplateIssue(code: TemplateErrorCode.malformedTemplate,
                                      message: "$.schema: missing required field 'schema'", path: "$.schema")
            return TemplateValidation(schema: nil, template: nil, errors: [issue], warnings: [])
        }
        guard case let .string(schema) = schemaValue else {
            let issue = TemplateIssue(code: TemplateErrorCode.malformedTemplate,
                                      message: "$.schema: 'schema' must be a string, not \(schemaValue.typeName)",
                                      path: "$.schema")
            return TemplateValidation(schema: nil, template: nil, errors: [issue], warnings: [])
        }
        switch schema {
        case Template.currentSchema:
            return compileV2(top, tools: tools, schema: schema, storedEarlier: storedEarlier)
        case Template.legacySchema:
            return TemplateUpgrade.compile(top, tools: tools, schema: schema)
        default:
            let issue = TemplateIssue(
                code: TemplateErrorCode.schemaUnsupported,
                message: "schema '\(schema)' is not supported; use \(Template.currentSchema) (or \(Template.legacySchema), which is upgraded on import)",
                path: "$.schema", extra: ["supported": [.string(Template.currentSchema), .string(Template.legacySchema)]])
            return TemplateValidation(schema: schema, template: nil, errors: [issue], warnings: [])
        }
    }

    static let templateFields = ["schema", "name", "description", "nodes", "edges", "options"]
    static let nodeFields = ["id", "kind", "params", "inputs", "outputs", "title", "description", "await", "resources",
                             "summaryParams", "presets"]
    static let awaitFields = ["type", "title", "detail", "blocking", "urgency", "expiresIn", "notification",
                              "resumePolicy", "skippable", "ui"]

    static func compileV2(_ top: JSONObject, tools: [String: ToolSpec], schema: String,
                          storedEarlier: Bool = false) -> TemplateValidation {
        var r = JSONFieldReader(path: "$")
        var warnings: [TemplateIssue] = []
        r.rejectUnknown(top, allowed: templateFields)
        let name = r.requiredString(top, "name") ?? ""
        if top["name"]?.stringValue?.isEmpty == true { r.malformed("$.name", "'name' must not be empty") }
        // The name is a workflow's title by default, kept in a plain text column of the store.
        if top["name"]?.stringValue?.utf8.contains(0) == true { r.malformed("$.name", "'name' must not contain U+0000") }
        let description = r.optionalString(top, "description")

        // Nodes
        var nodes: [TemplateNode] = []
        var nodeIndex = NodeIdTable(storedEarlier: storedEarlier)
        // Ports by node, apart from the (large) node structs, for the edge checks.
        var nodeInputs: [[PortSpec]] = []
        var nodeOutputs: [[PortSpec]] = []
        var toolLookup = ToolLookup(tools: tools)
        if let nodesValue = top["nodes"] {
            if case let .array(items) = nodesValue {
                nodes.reserveCapacity(items.count)
                nodeIndex = NodeIdTable(capacity: items.count, storedEarlier: storedEarlier)
                nodeInputs.reserveCapacity(items.count)
                nodeOutputs.reserveCapacity(items.count)
                for (i, item) in items.enumerated() {
                    var nodeWarnings: [TemplateIssue] = []
                    guard let node = decodeNode(item, index: i, tools: &toolLookup, reader: &r, warnings: &nodeWarnings,
                                                storedEarlier: storedEarlier) else {
                        continue
                    }
                    if !nodeIndex.insert(node.id, nodes.count) {
                        // The duplicate is dropped, with its warnings; edges naming the id mean the first.
                        r.append(TemplateIssue(code: TemplateErrorCode.duplicateNodeId,
                                               message: "node id '\(node.id)' is used more than once",
                                               nodeId: node.id, path: "$.nodes[\(i)].id"))
                        continue
                    }
                    if !nodeWarnings.isEmpty { warnings.append(contentsOf: nodeWarnings) }
                    nodeInputs.append(node.inputs)
                    nodeOutputs.append(node.outputs)
                    nodes.append(node)
                }
            } else {
                r.malformed("$.nodes", "'nodes' must be an array, not \(nodesValue.typeName)")
            }
        } else {
            r.malformed("$.nodes", "missing required field 'nodes'")
        }

        // Edges
        var edges: [TemplateEdge] = []
        /// For each accepted edge, its index in the template's `edges` array.
        var edgeSource: [Int] = []
        var resolved: [(from: Int, to: Int, edge: Int)] = []
        // Input ports numbered in one flat range: node n's port p is `portBase[n] + p`.
        var portBase = [Int](repeating: 0, count: nodeInputs.count + 1)
        for (n, inputs) in nodeInputs.enumerated() { portBase[n + 1] = portBase[n] + inputs.count }
        /// Per input port: how many accepted edges feed it.
        var feedCount = [Int](repeating: 0, count: portBase[nodeInputs.count])
        /// Per accepted edge: the input port it feeds, or -1 when its ends did not resolve.
        var feedsPort: [Int] = []
        if let edgesValue = top["edges"], !edgesValue.isNull {
            if case let .array(items) = edgesValue {
                edges.reserveCapacity(items.count)
                edgeSource.reserveCapacity(items.count)
                resolved.reserveCapacity(items.count)
                feedsPort.reserveCapacity(items.count)
                // Repeats feed the same input port, so only ports with a feeder already need the
                // (hashed) check; each port's first feeder joins the table when a second arrives.
                var seenEdges: [EdgeKey: Int] = [:]
                var firstFeeder = [(from: Int32, port: Int32, edge: Int)](repeating: (-1, -1, -1), count: feedCount.count)
                for (j, item) in items.enumerated() {
                    guard let edge = decodeEdge(item, index: j, reader: &r) else { continue }
                    var path: String { "$.edges[\(j)]" }
                    let fromIndex = nodeIndex.find(edge.from.node)
                    let toIndex = nodeIndex.find(edge.to.node)
                    var fromPort: Int?
                    var toPort: Int?
                    if let fi = fromIndex {
                        fromPort = nodeOutputs[fi].firstIndex { $0.name == edge.from.port }
                        if fromPort == nil {
                            r.append(TemplateIssue(
                                code: TemplateErrorCode.unknownPort,
                                message: "edge \(j): node '\(edge.from.node)' has no output port '\(edge.from.port)'",
                                nodeId: edge.from.node, port: edge.from.port, path: "\(path).from"))
                        }
                    } else {
                        r.append(TemplateIssue(code: TemplateErrorCode.unknownNode,
                                               message: "edge \(j) starts at unknown node '\(edge.from.node)'",
                                               nodeId: edge.from.node, path: "\(path).from"))
                    }
                    if let ti = toIndex {
                        toPort = nodeInputs[ti].firstIndex { $0.name == edge.to.port }
                        if toPort == nil {
                            r.append(TemplateIssue(
                                code: TemplateErrorCode.unknownPort,
                                message: "edge \(j): node '\(edge.to.node)' has no input port '\(edge.to.port)'",
                                nodeId: edge.to.node, port: edge.to.port, path: "\(path).to"))
                        }
                    } else {
                        r.append(TemplateIssue(code: TemplateErrorCode.unknownNode,
                                               message: "edge \(j) ends at unknown node '\(edge.to.node)'",
                                               nodeId: edge.to.node, path: "\(path).to"))
                    }
                    if let fi = fromIndex, let ti = toIndex, let fp = fromPort, let tp = toPort {
                        let slot = portBase[ti] + tp
                        if feedCount[slot] > 0 {
                            if feedCount[slot] == 1 {
                                let f = firstFeeder[slot]
                                seenEdges[EdgeKey(from: Int(f.from), fromPort: Int(f.port), to: ti, toPort: tp)] = f.edge
                            }
                            let key = EdgeKey(from: fi, fromPort: fp, to: ti, toPort: tp)
                            if let first = seenEdges[key] {
                                r.malformed(path, "edge \(j) repeats edge \(first) (\(edge.from) → \(edge.to))")
                                continue
                            }
                            seenEdges[key] = j
                        } else {
                            firstFeeder[slot] = (Int32(truncatingIfNeeded: fi), Int32(truncatingIfNeeded: fp), j)
                        }
                        let out = nodeOutputs[fi][fp]
                        let input = nodeInputs[ti][tp]
                        if out.type != input.type {
                            r.append(TemplateIssue(
                                code: TemplateErrorCode.portTypeMismatch,
                                message: "port type mismatch: \(edge.from) is \(out.type) but \(edge.to) expects \(input.type)",
                                nodeId: edge.to.node, port: edge.to.port, path: path,
                                extra: ["from": ["nodeId": .string(edge.from.node), "port": .string(edge.from.port),
                                                 "type": .string(out.type)],
                                        "to": ["nodeId": .string(edge.to.node), "port": .string(edge.to.port),
                                               "type": .string(input.type)]]))
                        }
                        feedCount[slot] += 1
                        feedsPort.append(slot)
                    } else {
                        feedsPort.append(-1)
                    }
                    // Only an edge whose ends both resolved joins the cycle check: one naming a port
                    // that does not exist is that error alone, not also a cycle.
                    if let fi = fromIndex, let ti = toIndex, fromPort != nil, toPort != nil {
                        resolved.append((fi, ti, edges.count))
                    }
                    edges.append(edge)
                    edgeSource.append(j)
                }
            } else {
                r.malformed("$.edges", "'edges' must be an array, not \(edgesValue.typeName)")
            }
        }

        // More than one producer into one input port.
        // Reported in order of each port's first feeding edge.
        var crowded: [(node: Int, port: Int, edges: [Int])] = []
        var crowdedAt: [Int: Int] = [:]
        for (e, slot) in feedsPort.enumerated() where slot >= 0 && feedCount[slot] > 1 {
            if let c = crowdedAt[slot] {
                crowded[c].edges.append(e)
            } else {
                crowdedAt[slot] = crowded.count
                // The node owning the slot: the last node whose range starts at or before it.
                var lo = 0, hi = nodeInputs.count - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if portBase[mid] <= slot { lo = mid } else { hi = mid - 1 }
                }
                crowded.append((lo, slot - portBase[lo], [e]))
            }
        }
        for (n, p, feeders) in crowded {
            let port = nodes[n].inputs[p]
            let target = PortRef(node: nodes[n].id, port: port.name)
            let from = feeders.map { edges[$0].from }
            let code = port.optional ? TemplateErrorCode.multiProducerOnOptionalPort
                : TemplateErrorCode.multiProducerOnRequiredPort
            let kind = port.optional ? "optional" : "required"
            r.append(TemplateIssue(
                code: code,
                message: "\(kind) input \(target) has \(feeders.count) producers: \(from.map(\.description).joined(separator: ", "))",
                nodeId: target.node, port: target.port, path: "$.edges[\(edgeSource[feeders[1]])].to",
                extra: ["producers": .array(from.map { ["nodeId": .string($0.node), "port": .string($0.port)] })]))
        }

        // Cycles: one error per strongly connected component, with its path.
        let pairs = resolved.map { ($0.from, $0.to) }
        if GraphAlgorithms.topologicalOrder(count: nodes.count, edges: pairs) == nil {
            for cycle in GraphAlgorithms.cycles(count: nodes.count, edges: pairs) {
                let ids = cycle.map { nodes[$0].id }
                // Point at the edge that closes the cycle (its last hop back to the start).
                let (a, b) = (cycle[cycle.count - 2], cycle[cycle.count - 1])
                let closing = resolved.first { $0.from == a && $0.to == b }.map { "$.edges[\(edgeSource[$0.edge])]" }
                r.append(TemplateIssue(code: TemplateErrorCode.cycleDetected,
                                       message: "cycle detected: \(ids.joined(separator: " → "))",
                                       nodeId: ids[0], path: closing ?? "$.edges", cycle: ids))
            }
        }

        // Required inputs nothing produces: a warning, the workflow binds them or waits.
        for (n, inputs) in nodeInputs.enumerated() {
            for (p, port) in inputs.enumerated() where !port.optional && feedCount[portBase[n] + p] == 0 {
                let id = nodes[n].id
                warnings.append(TemplateIssue(
                    .warning, code: TemplateErrorCode.unboundRequiredInput,
                    message: "required input '\(id)'.\(port.name) (\(port.type)) has no producer; bind an asset when creating a workflow, or the node waits",
                    nodeId: id, port: port.name))
            }
        }

        let options = decodeOptions(top["options"], reader: &r)
        let extensions = JSONFieldReader.extensions(of: top)
        guard r.issues.isEmpty else {
            return TemplateValidation(schema: schema, template: nil, errors: r.issues, warnings: warnings)
        }
        let template = Template(name: name, description: description, nodes: nodes, edges: edges, options: options,
                                extensions: extensions)
        return TemplateValidation(schema: schema, template: template, errors: [], warnings: warnings)
    }

    static func decodeNode(_ json: JSON, index i: Int, tools: inout ToolLookup, reader r: inout JSONFieldReader,
                           warnings: inout [TemplateIssue], storedEarlier: Bool = false) -> TemplateNode? {
        var d = JSONFieldReader(arrayPath: "$.nodes", index: i)
        defer { if !d.issues.isEmpty { r.append(contentsOf: d.issues) } }
        guard let o = d.object(json, what: "a node") else { return nil }
        // One pass over the members picks up every field; x- members are kept, others refused.
        var idValue, kindValue, titleValue, descriptionValue, paramsValue, inputsValue, outputsValue: JSON?
        var awaitValue, resourcesValue, summaryValue, presetsValue: JSON?
        var extensions = JSONObject()
        var unknown: [String] = []
        for m in o.members {
            switch m.key {
            case "id": idValue = m.value
            case "kind": kindValue = m.value
            case "params": paramsValue = m.value
            case "inputs": inputsValue = m.value
            case "outputs": outputsValue = m.value
            case "title": titleValue = m.value
            case "description": descriptionValue = m.value
            case "await": awaitValue = m.value
            case "resources": resourcesValue = m.value
            case "summaryParams": summaryValue = m.value
            case "presets": presetsValue = m.value
            default:
                if JSONFieldReader.isExtension(m.key) { extensions.append(uniqueKey: m.key, m.value) } else { unknown.append(m.key) }
            }
        }
        let rawId = idValue?.stringValue
        for key in unknown {
            d.malformed(JSONFieldReader.member(d.path, key), "unknown field '\(key)' (use an x- prefix for comments and extensions)",
                        nodeId: rawId)
        }
        // A node without a valid id is left out, but its other fields are still read: every
        // error is reported, not only the first (OPS §5).
        let givenId = d.requiredString(idValue, field: "id")
        var idIsValid = givenId != nil
        if let given = givenId {
            if !Identifiers.isValidNodeId(given) {
                d.malformed("\(d.path).id", "node id '\(given)' must be 1 to 128 letters, digits, '_', '-' or '.'",
                            nodeId: given)
                idIsValid = false
            } else if !storedEarlier && (given == "." || given == "..") {
                // `.` and `..` are a path's dot segments: a URL library resolving a deep link
                // (`app://workflow/W/node/..`) drops them, so the link would open another place.
                // A store written before this rule keeps reading its templates.
                d.malformed("\(d.path).id", "node id '\(given)' is a dot segment, which deep links would lose; use letters or digits too",
                            nodeId: given)
                idIsValid = false
            }
        }
        let id = givenId ?? ""
        let kind = d.requiredString(kindValue, field: "kind", nodeId: givenId) ?? ""
        if kindValue?.stringValue?.isEmpty == true { d.malformed("\(d.path).kind", "'kind' must not be empty", nodeId: givenId) }
        // No tool's kind holds U+0000 (tool.register refuses it): such a node could never run.
        if !storedEarlier, kindValue?.stringValue?.utf8.contains(0) == true {
            d.malformed("\(d.path).kind", "'kind' must not contain U+0000", nodeId: givenId)
        }
        let title = d.optionalString(titleValue, field: "title", nodeId: givenId)
        let description = d.optionalString(descriptionValue, field: "description", nodeId: givenId)
        let params = d.optionalObject(paramsValue, field: "params", nodeId: givenId) ?? [:]
        var inputs = d.ports(inputsValue, path: "$.nodes[\(i)].inputs", inputs: true, nodeId: givenId,
                             shared: &tools.ports)
        var outputs = d.ports(outputsValue, path: "$.nodes[\(i)].outputs", inputs: false, nodeId: givenId,
                              shared: &tools.ports)
        let summaryParams = d.optionalStringArray(summaryValue, field: "summaryParams", nodeId: givenId)

        var awaitSpec: AwaitSpec?
        if let a = awaitValue, !a.isNull {
            awaitSpec = decodeAwait(a, path: "\(d.path).await", nodeId: givenId, reader: &d, storedEarlier: storedEarlier)
        }

        var declaredClass: ResourceClass?
        if let res = d.optionalObject(resourcesValue, field: "resources", nodeId: givenId) {
            var rr = JSONFieldReader(path: "\(d.path).resources")
            rr.rejectUnknown(res, allowed: ["class"], nodeId: givenId)
            if let c = rr.optionalString(res, "class", nodeId: givenId) {
                if let rc = ResourceClass(rawValue: c) {
                    declaredClass = rc
                } else {
                    rr.malformed("\(d.path).resources.class", "class must be \"remote\" or \"local\", not '\(c)'",
                                 nodeId: givenId)
                }
            }
            d.append(contentsOf: rr.issues)
        }

        var presets: [(name: String, params: JSONObject)] = []
        if let p = d.optionalObject(presetsValue, field: "presets", nodeId: givenId) {
            for (presetName, delta) in p {
                guard case let .object(deltaObject) = delta else {
                    d.malformed(JSONFieldReader.member("\(d.path).presets", presetName), "a preset is an object of parameter values",
                                nodeId: givenId)
                    continue
                }
                presets.append((presetName, deltaObject))
            }
        }

        // The tool contract: a node agrees with its kind's catalogue entry.
        let toolRef = tools.tool(kind)
        if let toolRef {
            if inputs == nil { inputs = toolRef.spec.inputs.sorted { $0.name < $1.name } }
            if outputs == nil { outputs = toolRef.spec.outputs.sorted { $0.name < $1.name } }
            for issue in contractIssues(node: id, kind: kind, inputs: inputs ?? [], outputs: outputs ?? [],
                                        declaredClass: declaredClass, tool: toolRef.spec, path: d.path) {
                d.append(issue)
            }
        } else if TemplateNode.needsTool(awaitSpec), !kind.isEmpty, !kind.utf8.contains(0), idIsValid {
            warnings.append(TemplateIssue(
                .warning, code: TemplateErrorCode.toolNotInstalled,
                message: "tool '\(kind)' is not installed; node '\(id)' will be blocked until it is registered",
                nodeId: id))
        }

        guard idIsValid else { return nil }
        return TemplateNode(
            id: id, kind: kind, title: title, description: description, params: params,
            inputs: inputs ?? [], outputs: outputs ?? [],
            awaitSpec: awaitSpec, resourceClass: declaredClass ?? toolRef?.spec.resourceClass ?? .local,
            resourcesDeclared: declaredClass != nil, summaryParams: summaryParams, presets: presets,
            extensions: extensions)
    }

    /// Where a node's ports contradict its registered tool.
    public static func contractIssues(node id: String, kind: String, inputs: [PortSpec], outputs: [PortSpec],
                                      declaredClass: ResourceClass?, tool: ToolSpec,
                                      path: @autoclosure () -> String) -> [TemplateIssue] {
        var issues: [TemplateIssue] = []
        // A node without a valid id (reported at its id) is still checked, under no id.
        let named = id.isEmpty ? "a node" : "node '\(id)'"
        func mismatch(_ message: String, port: String? = nil, sub: String) {
            issues.append(TemplateIssue(code: TemplateErrorCode.toolContractMismatch,
                                        message: "\(named) contradicts tool '\(kind)': \(message)",
                                        nodeId: id.isEmpty ? nil : id, port: port, path: "\(path())\(sub)",
                                        extra: ["kind": .string(kind)]))
        }
        for p in inputs {
            guard let t = tool.inputs.port(named: p.name) else {
                mismatch("the tool has no input '\(p.name)'", port: p.name, sub: ".inputs.\(p.name)")
                continue
            }
            if t.type != p.type {
                mismatch("input '\(p.name)' is \(t.type) in the tool, \(p.type) in the node", port: p.name,
                         sub: ".inputs.\(p.name)")
            } else if p.optional && !t.optional {
                mismatch("input '\(p.name)' is required by the tool but optional in the node", port: p.name,
                         sub: ".inputs.\(p.name)")
            }
        }
        for t in tool.inputs where !t.optional && inputs.port(named: t.name) == nil {
            mismatch("the node lacks the tool's required input '\(t.name)' (\(t.type))", port: t.name, sub: ".inputs")
        }
        for p in outputs {
            guard let t = tool.outputs.port(named: p.name) else {
                mismatch("the tool has no output '\(p.name)'", port: p.name, sub: ".outputs.\(p.name)")
                continue
            }
            if t.type != p.type {
                mismatch("output '\(p.name)' is \(t.type) in the tool, \(p.type) in the node", port: p.name,
                         sub: ".outputs.\(p.name)")
            }
        }
        if let declaredClass, declaredClass != tool.resourceClass {
            mismatch("it runs \(tool.resourceClass.rawValue) in the tool, \(declaredClass.rawValue) in the node",
                     sub: ".resources.class")
        }
        return issues
    }

    static func decodeAwait(_ json: JSON, path: String, nodeId: String?, reader d: inout JSONFieldReader,
                            storedEarlier: Bool = false) -> AwaitSpec? {
        var a = JSONFieldReader(path: path)
        defer { d.append(contentsOf: a.issues) }
        guard let o = a.object(json, what: "'await'") else { return nil }
        a.rejectUnknown(o, allowed: awaitFields, nodeId: nodeId)
        var type: AwaitType?
        if let t = a.requiredString(o, "type", nodeId: nodeId) {
            type = AwaitType(rawValue: t)
            if type == nil {
                a.malformed("\(path).type",
                            "await type '\(t)' is not one of \(AwaitType.allCases.map(\.rawValue).joined(separator: ", "))",
                            nodeId: nodeId)
            }
        }
        let title = a.optionalString(o, "title", nodeId: nodeId)
        let detail = a.optionalString(o, "detail", nodeId: nodeId)
        let blocking = a.optionalBool(o, "blocking", nodeId: nodeId) ?? true
        var urgency = Urgency.normal
        if let u = a.optionalString(o, "urgency", nodeId: nodeId) {
            if let parsed = Urgency(rawValue: u) {
                urgency = parsed
            } else {
                a.malformed("\(path).urgency", "urgency must be blocking, normal or low, not '\(u)'", nodeId: nodeId)
            }
        }
        var expiresIn: String?
        var expiresMs: Int64?
        if let e = a.optionalString(o, "expiresIn", nodeId: nodeId) {
            let parsed = ISODuration.milliseconds(e, lenient: storedEarlier)
            if let ms = parsed, ms > 0 {
                expiresIn = e
                expiresMs = ms
            } else if parsed != nil {
                a.append(TemplateIssue(
                    code: TemplateErrorCode.invalidDuration,
                    message: "\(path).expiresIn: '\(e)' is zero (under a millisecond): a request must be given time to be answered",
                    nodeId: nodeId, path: "\(path).expiresIn"))
            } else {
                a.append(TemplateIssue(
                    code: TemplateErrorCode.invalidDuration,
                    message: "\(path).expiresIn: '\(e)' is not an ISO 8601 duration such as PT24H, P1D or PT30M (years and months are not allowed)",
                    nodeId: nodeId, path: "\(path).expiresIn"))
            }
        }
        var notificationTitle: String?
        var notificationBody: String?
        if let n = a.optionalObject(o, "notification", nodeId: nodeId) {
            var nr = JSONFieldReader(path: "\(path).notification")
            nr.rejectUnknown(n, allowed: ["title", "body"], nodeId: nodeId)
            notificationTitle = nr.optionalString(n, "title", nodeId: nodeId)
            notificationBody = nr.optionalString(n, "body", nodeId: nodeId)
            a.append(contentsOf: nr.issues)
        }
        var onTimeout = ResumeAction.cancel
        var onCancel: ResumeAction?
        if let rp = a.optionalObject(o, "resumePolicy", nodeId: nodeId) {
            var rr = JSONFieldReader(path: "\(path).resumePolicy")
            rr.rejectUnknown(rp, allowed: ["onTimeout", "onCancel"], nodeId: nodeId)
            for key in ["onTimeout", "onCancel"] {
                guard let s = rr.optionalString(rp, key, nodeId: nodeId) else { continue }
                guard let action = ResumeAction(rawValue: s) else {
                    rr.malformed("\(path).resumePolicy.\(key)", "\(key) must be cancel, autoDefault or skip, not '\(s)'",
                                 nodeId: nodeId)
                    continue
                }
                if key == "onTimeout" { onTimeout = action } else { onCancel = action }
            }
            a.append(contentsOf: rr.issues)
        }
        let skippable = a.optionalBool(o, "skippable", nodeId: nodeId)
        let ui = a.optionalString(o, "ui", nodeId: nodeId)
        guard let type else { return nil }
        return AwaitSpec(type: type, title: title, detail: detail, blocking: blocking, urgency: urgency,
                         expiresIn: expiresIn, expiresInMilliseconds: expiresMs, notificationTitle: notificationTitle,
                         notificationBody: notificationBody, onTimeout: onTimeout, onCancel: onCancel,
                         skippable: skippable, ui: ui, extensions: JSONFieldReader.extensions(of: o))
    }

    static func decodeEdge(_ json: JSON, index j: Int, reader r: inout JSONFieldReader) -> TemplateEdge? {
        var d = JSONFieldReader(arrayPath: "$.edges", index: j)
        defer { if !d.issues.isEmpty { r.append(contentsOf: d.issues) } }
        guard let o = d.object(json, what: "an edge") else { return nil }
        var fromValue, toValue: JSON?
        var extensions = JSONObject()
        for m in o.members {
            switch m.key {
            case "from": fromValue = m.value
            case "to": toValue = m.value
            default:
                if JSONFieldReader.isExtension(m.key) {
                    extensions.append(uniqueKey: m.key, m.value)
                } else {
                    d.malformed(JSONFieldReader.member(d.path, m.key), "unknown field '\(m.key)' (use an x- prefix for comments and extensions)")
                }
            }
        }
        func end(_ value: JSON?, _ key: String) -> PortRef? {
            guard let value else {
                d.malformed("\(d.path).\(key)", "missing required field '\(key)'")
                return nil
            }
            guard case let .array(a) = value, a.count == 2, case let .string(node) = a[0], case let .string(port) = a[1]
            else {
                d.malformed("\(d.path).\(key)", "'\(key)' must be [nodeId, port]")
                return nil
            }
            return PortRef(node: node, port: port)
        }
        let from = end(fromValue, "from")
        let to = end(toValue, "to")
        guard let from, let to else { return nil }
        return TemplateEdge(from: from, to: to, extensions: extensions)
    }

    static func decodeOptions(_ json: JSON?, reader r: inout JSONFieldReader) -> TemplateOptions {
        guard let json, !json.isNull else { return TemplateOptions() }
        var d = JSONFieldReader(path: "$.options")
        defer { r.append(contentsOf: d.issues) }
        guard let o = d.object(json, what: "'options'") else { return TemplateOptions() }
        d.rejectUnknown(o, allowed: ["concurrency", "errorPolicy"])
        var options = TemplateOptions(extensions: JSONFieldReader.extensions(of: o))
        if let c = d.optionalObject(o, "concurrency") {
            var cr = JSONFieldReader(path: "$.options.concurrency")
            cr.rejectUnknown(c, allowed: ["remote", "local"], extensions: false)
            options.remoteConcurrency = cr.optionalPositiveInt(c, "remote", path: "$.options.concurrency")
            options.localConcurrency = cr.optionalPositiveInt(c, "local", path: "$.options.concurrency")
            d.append(contentsOf: cr.issues)
        }
        if let p = d.optionalString(o, "errorPolicy") {
            if let policy = ErrorPolicy(rawValue: p) {
                options.errorPolicy = policy
                options.errorPolicyDeclared = true
            } else {
                d.malformed("$.options.errorPolicy", "errorPolicy must be fail-fast or isolate-node, not '\(p)'")
            }
        }
        return options
    }
}

/// Node ids to node numbers: open addressing over a cheap hash of the id's bytes (ids are short).
/// The first id inserted wins. Stored ids are valid node ids, hence ASCII, and a name is found
/// only by the same bytes: a non-ASCII name names no node, even one String's canonical equality
/// would call equal ("\u{212A}", the Kelvin sign, is not "K"), so an edge never reaches a node
/// under another spelling than its id (which the export would then write).
struct NodeIdTable {
    private var slots: [Int32]
    private var ids: [String] = []
    private var values: [Int] = []
    private var mask: Int
    /// Reading a template a store kept from an earlier version, which also found a node by another
    /// spelling of its id (String's canonical equality): such a name is looked up that way.
    private let storedEarlier: Bool

    init(capacity: Int = 0, storedEarlier: Bool = false) {
        self.storedEarlier = storedEarlier
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        ids.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// A hash of the id's bytes; nil when it is not ASCII.
    @inline(__always)
    private static func hash(_ id: String) -> Int? {
        var id = id
        let (h, high) = id.withUTF8 { bytes -> (UInt64, UInt8) in
            var h: UInt64 = 0xCBF2_9CE4_8422_2325
            var high: UInt8 = 0
            for b in bytes {
                h = (h ^ UInt64(b)) &* 0x100_0000_01B3
                high |= b
            }
            return (h, high)
        }
        guard high < 0x80 else { return nil }
        return Int(truncatingIfNeeded: ((h ^ (h >> 32)) &* 0x9E37_79B9_7F4A_7C15) >> 17)
    }

    /// The number stored for `id`.
    func find(_ id: String) -> Int? {
        guard let h = Self.hash(id) else {  // not ASCII: no node's id
            return storedEarlier ? ids.firstIndex(where: { $0 == id }).map { values[$0] } : nil
        }
        var i = h & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { return nil }
            if ids[k] == id { return values[k] }  // both ASCII: equal exactly when their bytes are
            i = (i + 1) & mask
        }
    }

    /// Stores `value` for `id` unless it is present already; false when it was. `id` must be ASCII.
    mutating func insert(_ id: String, _ value: Int) -> Bool {
        if ids.count * 2 >= slots.count { grow() }
        var i = Self.hash(id)! & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { break }
            if ids[k] == id { return false }
            i = (i + 1) & mask
        }
        slots[i] = Int32(ids.count)
        ids.append(id)
        values.append(value)
        return true
    }

    private mutating func grow() {
        let size = slots.count * 2
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        for (k, id) in ids.enumerated() {
            var i = Self.hash(id)! & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(k)
        }
    }
}

/// The tool catalogue as one compilation reads it: node kinds repeat, so the last few kinds looked
/// up are remembered (with a miss too), and each spec is shared rather than copied per node.
struct ToolLookup {
    final class Ref {
        let spec: ToolSpec
        init(_ spec: ToolSpec) { self.spec = spec }
    }

    let tools: [String: ToolSpec]
    /// Nodes' port lists, shared where equal.
    var ports = SharedPorts()
    private var recent: [(kind: String, ref: Ref?)] = []
    private var next = 0

    init(tools: [String: ToolSpec]) { self.tools = tools }

    mutating func tool(_ kind: String) -> Ref? {
        for entry in recent where entry.kind == kind { return entry.ref }
        let ref = tools[kind].map(Ref.init)
        if recent.count < 16 {
            recent.append((kind, ref))
        } else {
            recent[next] = (kind, ref)
            next = (next + 1) % 16
        }
        return ref
    }
}
