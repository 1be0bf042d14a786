/// A tool catalogue entry: what a kind of node takes, makes, and where it runs.
///
/// Template nodes must agree with the entry of their kind (`toolContractMismatch` otherwise); a
/// node whose kind has no entry and is not interactive is blocked "Tool not installed."
public struct ToolSpec: Sendable, Equatable {
    public var kind: String
    public var title: String?
    public var description: String?
    public var inputs: [PortSpec]
    public var outputs: [PortSpec]
    public var resourceClass: ResourceClass
    public var defaults: JSONObject
    public var summaryParams: [String]
    /// `x-` members, kept verbatim.
    public var extensions: JSONObject

    public init(kind: String, title: String? = nil, description: String? = nil, inputs: [PortSpec] = [],
                outputs: [PortSpec] = [], resourceClass: ResourceClass = .local, defaults: JSONObject = [:],
                summaryParams: [String] = [], extensions: JSONObject = [:]) {
        self.kind = kind
        self.title = title
        self.description = description
        self.inputs = inputs
        self.outputs = outputs
        self.resourceClass = resourceClass
        self.defaults = defaults
        self.summaryParams = summaryParams
        self.extensions = extensions
    }

    /// The catalogue entry as `tool.register` takes it and `tool.list` returns it.
    public var json: JSON {
        var o = JSONObject()
        o["kind"] = .string(kind)
        if let title { o["title"] = .string(title) }
        if let description { o["description"] = .string(description) }
        o["inputs"] = .object(PortSpec.json(inputs))
        o["outputs"] = .object(PortSpec.json(outputs))
        o["resourceClass"] = .string(resourceClass.rawValue)
        o["defaults"] = .object(defaults)
        o["summaryParams"] = JSON(summaryParams)
        for (k, v) in extensions.sortedByKey { o[k] = v }
        return .object(o)
    }

    /// Decodes a catalogue entry, reporting every problem with its JSON path. `refusingNUL`
    /// (`tool.register`) refuses a top-level string holding U+0000 as an argument would be; a
    /// stored entry is read without that check, so one an earlier version kept still loads.
    public static func decode(_ json: JSON, refusingNUL: Bool = false) -> (spec: ToolSpec?, issues: [TemplateIssue]) {
        var d = JSONFieldReader(path: "$")
        guard let o = d.object(json, what: "tool") else { return (nil, d.issues) }
        d.rejectUnknown(o, allowed: ["kind", "title", "description", "inputs", "outputs", "resourceClass", "defaults",
                                     "summaryParams"])
        let kind = d.requiredString(o, "kind") ?? ""
        let title = d.optionalString(o, "title")
        let description = d.optionalString(o, "description")
        let inputs = d.ports(o["inputs"], path: "$.inputs", inputs: true) ?? []
        let outputs = d.ports(o["outputs"], path: "$.outputs", inputs: false) ?? []
        var resourceClass = ResourceClass.local
        if let raw = o["resourceClass"] {
            if let s = raw.stringValue, let c = ResourceClass(rawValue: s) {
                resourceClass = c
            } else {
                d.malformed("$.resourceClass", "resourceClass must be \"remote\" or \"local\"")
            }
        }
        let defaults = d.optionalObject(o, "defaults") ?? [:]
        let summaryParams = d.optionalStringArray(o, "summaryParams") ?? []
        if o["kind"]?.stringValue?.isEmpty == true { d.malformed("$.kind", "kind must not be empty") }
        if o["kind"]?.stringValue?.utf8.contains(0) == true { d.malformed("$.kind", "kind must not contain U+0000") }
        if refusingNUL {
            for member in o.members where member.key != "kind" {
                if case let .string(s) = member.value, s.utf8.contains(0) {
                    d.malformed(JSONFieldReader.member("$", member.key), "\(member.key) must not contain U+0000")
                }
            }
        }
        // A tool's problems are argument errors, named as such.
        let issues = d.issues.map { issue -> TemplateIssue in
            var i = issue
            i.code = "invalidTool"
            return i
        }
        guard issues.isEmpty else { return (nil, issues) }
        return (ToolSpec(kind: kind, title: title, description: description, inputs: inputs, outputs: outputs,
                         resourceClass: resourceClass, defaults: defaults, summaryParams: summaryParams,
                         extensions: JSONFieldReader.extensions(of: o)), [])
    }
}

extension PortSpec {
    /// Ports in template form: `"image": "ImageRef"`, or an object when optional.
    public static func json(_ ports: [PortSpec]) -> JSONObject {
        var o = JSONObject(minimumCapacity: ports.count)
        for p in ports {
            o.append(uniqueKey: p.name, p.optional ? ["type": .string(p.type), "optional": true] : .string(p.type))
        }
        return o
    }
}
