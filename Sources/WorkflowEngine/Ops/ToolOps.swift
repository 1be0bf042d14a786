import WorkflowCore
import WorkflowStore

extension Engine {
    static let toolOps: [String: OpHandler] = [
        // tool.register {kind, inputs, outputs, resourceClass, defaults, summaryParams, title?, description?}
        // → the catalogue entry. Registering a kind again replaces its entry.
        "tool.register": OpHandler(mutates: true, args: ["kind", "title", "description", "inputs", "outputs", "resourceClass", "defaults", "summaryParams"], extensions: true, checksOwnTexts: true) { (engine, uow, args) throws(EngineError) -> JSON in
            // A `null` member counts as absent (OPS section 1): the entry is read without them.
            let given = JSONObject(uniqueMembers: args.object.members.filter { !$0.value.isNull })
            let (spec, issues) = ToolSpec.decode(.object(given), refusingNUL: true)
            guard let spec else {
                let first = issues[0]
                let argument = String((first.path ?? "$").dropFirst(2))
                throw .invalid("invalidTool", "tool invalid: \(first.message)",
                               details: ["argument": .string(argument.isEmpty ? "tool" : argument),
                                         "errors": .array(issues.map(\.json))])
            }
            let previous = uow.storedTool(spec.kind)
            if previous?.spec == spec { return spec.json }
            uow.putTool(StoredTool(spec: spec, registeredAt: uow.now))
            uow.log(.info, "tool registered", ["kind": "\(spec.kind)"])
            try uow.toolCatalogueChanged(kind: spec.kind, engine: engine)
            return spec.json
        },

        // tool.get {kind} → the catalogue entry.
        "tool.get": OpHandler(mutates: false, args: ["kind"]) { (_, uow, args) throws(EngineError) -> JSON in
            let kind = try args.string("kind")
            guard let spec = uow.tool(kind) else {
                throw .notFound("unknownTool", "no tool '\(kind)' is registered", details: ["kind": .string(kind)])
            }
            return spec.json
        },

        // tool.list → {tools: [...]} sorted by kind.
        "tool.list": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in
            ["tools": .array(uow.allTools.values.sorted { $0.kind < $1.kind }.map(\.json))]
        },
    ]
}
