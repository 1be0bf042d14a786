import WorkflowCore

extension Engine {
    static let batchOps: [String: OpHandler] = [
        // batch {calls: [{op, args?}]} → {results}: several calls in one unit of work and one store
        // transaction, all or nothing. A host with many reports at once (a pool of local tools
        // finishing, a burst of job updates) pays for one commit instead of one per report. If a
        // call fails, nothing of the batch happens and the error names the call (details.batchIndex).
        "batch": OpHandler(mutates: true, args: ["calls"]) { (engine, uow, args) throws(EngineError) -> JSON in
            guard let given = args["calls"], !given.isNull else { throw Args.missing("calls") }
            guard let calls = given.arrayValue else {
                throw .invalid("invalidArgument", "calls must be an array of {op, args}",
                               details: ["argument": "calls", "expected": "an array of {op, args}"])
            }
            var results: [JSON] = []
            results.reserveCapacity(calls.count)
            uow.reserve(calls: calls.count)
            for (i, call) in calls.enumerated() {
                guard case let .object(o) = call, case let .string(op)? = o["op"] else {
                    throw .invalid("invalidArgument", "calls[\(i)] must be {op, args}",
                                   details: ["argument": .string("calls[\(i)]"), "expected": "{op, args}"])
                }
                // A member other than op and args is refused, as an unknown argument of a single
                // call is: a misspelt `arg` would otherwise run the call without its arguments.
                if let extra = o.members.first(where: { $0.key != "op" && $0.key != "args" })?.key {
                    throw .invalid("invalidArgument", "calls[\(i)] must be {op, args}, not have '\(extra)'",
                                   details: ["argument": .string("calls[\(i)].\(extra)")])
                }
                // An empty name is refused as the C surface refuses one for a single call.
                guard !op.isEmpty else {
                    throw .invalid("invalidArgument", "calls[\(i)].op must not be empty",
                                   details: ["argument": .string("calls[\(i)].op"), "expected": "a non-empty string",
                                             "batchIndex": JSON(i)])
                }
                guard op != "batch", let handler = Engine.ops[op] else {
                    throw EngineError(.unsupported, "unknownOp", "calls[\(i)]: unknown op '\(op)'",
                                      details: ["op": .string(op), "batchIndex": JSON(i)])
                }
                var callArgs = JSONObject()
                if let a = o["args"], !a.isNull {
                    guard case let .object(ao) = a else {
                        throw .invalid("invalidArgument", "calls[\(i)].args must be an object",
                                       details: ["argument": .string("calls[\(i)].args"), "expected": "an object"])
                    }
                    callArgs = ao
                }
                do throws(EngineError) {
                    try handler.checkArguments(op, callArgs)
                    results.append(try handler.run(engine, uow, Args(callArgs)))
                } catch {
                    var e = error
                    e.message = "calls[\(i)] (\(op)): \(error.message)"
                    e.details["batchIndex"] = JSON(i)
                    e.details["op"] = .string(op)
                    throw e
                }
            }
            return ["results": .array(results)]
        },
    ]
}
