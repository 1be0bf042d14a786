/// Writes a ``Template`` as canonical `app.workflow/v2` JSON: members in a fixed logical order
/// (schema, name, description, nodes, edges, options, then `x-` members sorted), parameters and
/// ports sorted by name, nodes and edges in template order. Exporting, importing and exporting
/// again gives the same text, so templates diff cleanly under version control.
public enum TemplateEncoder {
    public static func canonicalJSON(_ t: Template) -> JSON {
        var o = JSONObject()
        o["schema"] = .string(Template.currentSchema)
        o["name"] = .string(t.name)
        if let d = t.description { o["description"] = .string(d) }
        o["nodes"] = .array(t.nodes.map(node))
        o["edges"] = .array(t.edges.map(edge))
        let options = self.options(t.options)
        if !options.isEmpty { o["options"] = .object(options) }
        appendExtensions(t.extensions, to: &o)
        return .object(o)
    }

    /// The canonical text: two-space indent, one member per line, final newline.
    public static func canonicalText(_ t: Template) -> String {
        JSONWriter.string(canonicalJSON(t), options: JSONWriter.Options(pretty: true, sortKeys: false))
    }

    static func node(_ n: TemplateNode) -> JSON {
        var o = JSONObject()
        o["id"] = .string(n.id)
        o["kind"] = .string(n.kind)
        if let title = n.title { o["title"] = .string(title) }
        if let d = n.description { o["description"] = .string(d) }
        if !n.params.isEmpty { o["params"] = sortedDeep(.object(n.params)) }
        if !n.inputs.isEmpty { o["inputs"] = .object(PortSpec.json(n.inputs)) }
        if !n.outputs.isEmpty { o["outputs"] = .object(PortSpec.json(n.outputs)) }
        if let a = n.awaitSpec { o["await"] = awaitSpec(a) }
        if n.resourcesDeclared || n.resourceClass == .remote {
            o["resources"] = ["class": .string(n.resourceClass.rawValue)]
        }
        if let s = n.summaryParams { o["summaryParams"] = JSON(s) }
        if !n.presets.isEmpty {
            var p = JSONObject()
            for preset in n.presets.sorted(by: { $0.name < $1.name }) {
                p.append(uniqueKey: preset.name, sortedDeep(.object(preset.params)))
            }
            o["presets"] = .object(p)
        }
        appendExtensions(n.extensions, to: &o)
        return .object(o)
    }

    static func awaitSpec(_ a: AwaitSpec) -> JSON {
        var o = JSONObject()
        o["type"] = .string(a.type.rawValue)
        if let t = a.title { o["title"] = .string(t) }
        if let d = a.detail { o["detail"] = .string(d) }
        o["blocking"] = .bool(a.blocking)
        o["urgency"] = .string(a.urgency.rawValue)
        if let e = a.expiresIn { o["expiresIn"] = .string(e) }
        if a.notificationTitle != nil || a.notificationBody != nil {
            var n = JSONObject()
            if let t = a.notificationTitle { n["title"] = .string(t) }
            if let b = a.notificationBody { n["body"] = .string(b) }
            o["notification"] = .object(n)
        }
        var rp: JSONObject = ["onTimeout": .string(a.onTimeout.rawValue)]
        if let c = a.onCancel { rp["onCancel"] = .string(c.rawValue) }
        o["resumePolicy"] = .object(rp)
        if a.skippableDeclared { o["skippable"] = .bool(a.skippable) }
        if let ui = a.ui { o["ui"] = .string(ui) }
        appendExtensions(a.extensions, to: &o)
        return .object(o)
    }

    static func edge(_ e: TemplateEdge) -> JSON {
        var o: JSONObject = ["from": [.string(e.from.node), .string(e.from.port)],
                             "to": [.string(e.to.node), .string(e.to.port)]]
        appendExtensions(e.extensions, to: &o)
        return .object(o)
    }

    static func options(_ opts: TemplateOptions) -> JSONObject {
        var o = JSONObject()
        if opts.remoteConcurrency != nil || opts.localConcurrency != nil {
            var c = JSONObject()
            if let r = opts.remoteConcurrency { c["remote"] = JSON(r) }
            if let l = opts.localConcurrency { c["local"] = JSON(l) }
            o["concurrency"] = .object(c)
        }
        if opts.errorPolicyDeclared { o["errorPolicy"] = .string(opts.errorPolicy.rawValue) }
        appendExtensions(opts.extensions, to: &o)
        return o
    }

    static func appendExtensions(_ x: JSONObject, to o: inout JSONObject) {
        for (k, v) in x.sortedByKey { o[k] = sortedDeep(v) }
    }

    /// The value with every nested object's keys sorted.
    public static func sortedDeep(_ v: JSON) -> JSON {
        switch v {
        case let .object(o): return .object(JSONObject(uniqueKeysWithValues: o.sortedByKey.map { ($0.key, sortedDeep($0.value)) }))
        case let .array(a): return .array(a.map(sortedDeep))
        default: return v
        }
    }
}
