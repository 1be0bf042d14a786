import WorkflowCore

/// One conformance fixture (shared/conformance/FORMAT.md): an engine config and the steps to
/// replay on it.
public struct Fixture: Sendable {
    public var name: String
    public var description: String?
    /// The config given to `wf_engine_open`; `null` when the fixture names none.
    public var engine: JSON
    public var steps: [Step]

    public init(name: String, description: String? = nil, engine: JSON = .null, steps: [Step]) {
        self.name = name
        self.description = description
        self.engine = engine
        self.steps = steps
    }

    /// Reads a fixture object, refusing anything outside the format so a typo (`"expected"` for
    /// `"expect"`) can never make a check silently disappear.
    public init(json: JSON) throws(FixtureError) {
        guard case let .object(o) = json else { throw FixtureError("a fixture must be a JSON object") }
        try FixtureFields.rejectUnknown(o, allowed: ["name", "description", "engine", "steps"], at: "fixture")
        guard case let .string(name)? = o["name"], !name.isEmpty else {
            throw FixtureError("fixture.name must be a non-empty string")
        }
        self.name = name
        switch o["description"] {
        case nil, .null?: description = nil
        case let .string(s)?: description = s
        default: throw FixtureError("fixture.description must be a string")
        }
        engine = o["engine"] ?? .null
        if !engine.isNull, engine.objectValue == nil { throw FixtureError("fixture.engine must be an object") }
        guard case let .array(items)? = o["steps"] else { throw FixtureError("fixture.steps must be an array") }
        var steps: [Step] = []
        for (i, item) in items.enumerated() {
            steps.append(try Step(json: item, number: i + 1))
        }
        self.steps = steps
    }
}

/// A step: an op call, or a reopen of the engine on the same store.
public enum Step: Sendable {
    case op(OpStep)
    case reopen(ReopenMode)

    /// What failure lines call the step: the op name, or `reopen`.
    public var label: String {
        switch self {
        case let .op(s): return s.op
        case .reopen: return "reopen"
        }
    }

    /// Reads step `number` (1-based, for messages).
    public init(json: JSON, number: Int) throws(FixtureError) {
        let at = "step \(number)"
        guard case let .object(o) = json else { throw FixtureError("\(at) must be an object") }
        if let mode = o["reopen"] {
            try FixtureFields.rejectUnknown(o, allowed: ["reopen", "description"], at: at)
            guard let text = mode.stringValue, let m = ReopenMode(rawValue: text) else {
                throw FixtureError("\(at): reopen must be \"clean\" or \"crash\"")
            }
            self = .reopen(m)
            return
        }
        self = .op(try OpStep(object: o, at: at))
    }
}

/// `{"reopen": "clean"}` closes the engine first; `{"reopen": "crash"}` abandons it.
public enum ReopenMode: String, Sendable {
    case clean, crash
}

/// An op call: `op`, `args` (default `{}`), optional `expect`, optional `save`.
public struct OpStep: Sendable {
    public var op: String
    public var args: JSONObject
    /// nil: the step must come out ok.
    public var expect: JSON?
    /// Names to paths into the outcome, in the order written.
    public var save: [(name: String, path: ValuePath)]

    public init(op: String, args: JSONObject = [:], expect: JSON? = nil, save: [(name: String, path: ValuePath)] = []) {
        self.op = op
        self.args = args
        self.expect = expect
        self.save = save
    }

    init(object o: JSONObject, at: String) throws(FixtureError) {
        try FixtureFields.rejectUnknown(o, allowed: ["op", "args", "expect", "save", "description"], at: at)
        guard case let .string(op)? = o["op"], !op.isEmpty else {
            throw FixtureError("\(at): op must be a non-empty string (or the step a reopen)")
        }
        self.op = op
        switch o["args"] {
        case nil, .null?: args = [:]
        case let .object(a)?: args = a
        default: throw FixtureError("\(at) (\(op)): args must be an object")
        }
        expect = o["expect"]
        save = []
        switch o["save"] {
        case nil, .null?: break
        case let .object(s)?:
            for (name, pathValue) in s {
                guard !name.isEmpty, let text = pathValue.stringValue else {
                    throw FixtureError("\(at) (\(op)): save maps names to path strings")
                }
                do {
                    save.append((name, try ValuePath(parsing: text)))
                } catch {
                    throw FixtureError("\(at) (\(op)): save '\(name)': \(error.message)")
                }
            }
        default: throw FixtureError("\(at) (\(op)): save must be an object")
        }
    }
}

/// Field checks shared by the fixture readers.
enum FixtureFields {
    static func rejectUnknown(_ o: JSONObject, allowed: Set<String>, at: String) throws(FixtureError) {
        for key in o.keys where !allowed.contains(key) {
            throw FixtureError("\(at) has an unknown field '\(key)' (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }
}
