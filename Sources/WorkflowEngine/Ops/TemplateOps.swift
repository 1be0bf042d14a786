import WorkflowCore
import WorkflowStore

extension Engine {
    static let templateOps: [String: OpHandler] = [
        // template.validate {template} → {valid, errors, warnings}; changes nothing.
        "template.validate": OpHandler(mutates: false, args: ["template"]) { (_, uow, args) throws(EngineError) -> JSON in
            let validation = TemplateCompiler.compile(try args.value("template"), tools: uow.allTools)
            return validation.json
        },

        // template.register {template} → {templateId, name, schema (always v2), sourceSchema, warnings, existing}
        // or WF_ETEMPLATE with the first error's code and details.errors listing all.
        "template.register": OpHandler(mutates: true, args: ["template"]) { (_, uow, args) throws(EngineError) -> JSON in
            let validation = TemplateCompiler.compile(try args.value("template"), tools: uow.allTools)
            guard let template = validation.template else {
                let first = validation.errors[0]
                let more = validation.errors.count > 1 ? " (and \(validation.errors.count - 1) more)" : ""
                throw EngineError(.template, first.code, "template invalid: \(first.message)\(more)",
                                  details: ["errors": .array(validation.errors.map(\.json)),
                                            "warnings": .array(validation.warnings.map(\.json))])
            }
            let text = TemplateEncoder.canonicalText(template)
            let warnings = JSON.array(validation.warnings.map(\.json))
            if let existing = uow.templateId(forCanonicalText: text) {
                return ["templateId": .string(existing), "name": .string(template.name),
                        "schema": .string(Template.currentSchema),
                        "sourceSchema": JSON(uow.template(existing)?.stored.sourceSchema),
                        "warnings": warnings, "existing": true]
            }
            let seq = uow.nextNumber("tpl")
            let stored = StoredTemplate(templateId: "tpl-\(seq)", seq: seq, name: template.name, createdAt: uow.now,
                                        canonicalText: text, sourceSchema: validation.schema ?? Template.currentSchema)
            uow.addTemplate(RegisteredTemplate(stored: stored, graph: TemplateGraph(template: template)))
            uow.log(.info, "template registered", ["templateId": "\(stored.templateId)", "nodes": "\(template.nodes.count)"])
            return ["templateId": .string(stored.templateId), "name": .string(template.name),
                    "schema": .string(Template.currentSchema), "sourceSchema": JSON(validation.schema),
                    "warnings": warnings, "existing": false]
        },

        // template.get {templateId} → {templateId, name, schema, createdAt, nodeCount, edgeCount, template}
        "template.get": OpHandler(mutates: false, args: ["templateId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let t = try requireTemplate(uow, args)
            var o = summary(t)
            o["template"] = TemplateEncoder.canonicalJSON(t.template)
            return .object(o)
        },

        // template.list → {templates: [{templateId, name, schema, createdAt, nodeCount, edgeCount}]}
        "template.list": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in
            ["templates": .array(uow.state.templateOrder.compactMap { uow.template($0) }.map { .object(summary($0)) })]
        },

        // template.export {templateId} → {templateId, template, text}: canonical v2 JSON, and its exact text.
        "template.export": OpHandler(mutates: false, args: ["templateId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let t = try requireTemplate(uow, args)
            return ["templateId": .string(t.templateId), "template": TemplateEncoder.canonicalJSON(t.template),
                    "text": .string(t.stored.canonicalText)]
        },
    ]

    static func requireTemplate(_ uow: UnitOfWork, _ args: Args) throws(EngineError) -> RegisteredTemplate {
        let id = try args.string("templateId")
        guard let t = uow.template(id) else {
            throw .notFound("unknownTemplate", "no template '\(id)'", details: ["templateId": .string(id)])
        }
        return t
    }

    static func summary(_ t: RegisteredTemplate) -> JSONObject {
        ["templateId": .string(t.templateId), "name": .string(t.template.name),
         "schema": .string(Template.currentSchema), "sourceSchema": .string(t.stored.sourceSchema),
         "createdAt": JSON(t.stored.createdAt), "nodeCount": JSON(t.template.nodes.count),
         "edgeCount": JSON(t.template.edges.count)]
    }
}
