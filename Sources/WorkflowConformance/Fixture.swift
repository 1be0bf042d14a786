import WorkflowCore

/// One conformance fixture (shared/conformance/FORMAT.md): an engine config and the steps to
/// replay on it.
public struct Fixture: Sendable {
    public var name: String
    public var description: String?
    /// The config given to `wf_engine_open` (`{}` when the fixture names none).
    public var engine: JSON
    public var steps: [Step]

    public init(name: String, description: String? = nil, engine: JSON = [:], steps: [Step]) {
        self.name = name
        self.description = description
        self.engine = engine
        self.steps = steps
    }

    /// Reads a fixture object, refusing anything outside the format so a typo (`"expct"` for
    /// `"expect"`) can never make a check silently disappear. The checks, their order and their
    /// messages are those of Tests/Conformance/runner-cases/README.md ("Reading a fixture").
    public init(json: JSON) throws(FixtureError) {
        guard case let .object(o) = json else { throw FixtureError("a fixture must be a JSON object") }
        try FixtureFields.rejectUnknown(o, allowed: ["name", "description", "engine", "steps"], at: "")
        guard let name = Fixture.name(of: json) else { throw FixtureError("name must be a non-empty string") }
        self.name = name
        switch o["description"] {
        case nil: description = nil
        case let .string(s)?: description = s
        default: throw FixtureError("description must be a string")
        }
        engine = o["engine"] ?? [:]
        if engine.objectValue == nil { throw FixtureError("engine must be an object") }
        guard case let .array(items)? = o["steps"] else { throw FixtureError("steps must be an array") }
        var steps: [Step] = []
        for (i, item) in items.enumerated() {
            steps.append(try Step(json: item, number: i + 1))
        }
        self.steps = steps
    }

    /// The `name` of a fixture document when it is a non-empty string: what an invalid fixture is
    /// reported under (else its path).
    public static func name(of json: JSON) -> String? {
        guard case let .string(name)? = json["name"], !name.isEmpty else { return nil }
        return name
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
        let at = "step \(number): "
        guard case let .object(o) = json else { throw FixtureError("\(at)must be an object") }
        guard (o["op"] == nil) != (o["reopen"] == nil) else {
            throw FixtureError("\(at)needs exactly one of 'op' and 'reopen'")
        }
        guard let mode = o["reopen"] else {
            self = .op(try OpStep(object: o, at: at))
            return
        }
        try FixtureFields.rejectUnknown(o, allowed: ["reopen", "description", "comment"], at: at)
        guard let text = mode.stringValue, let m = ReopenMode(rawValue: text) else {
            throw FixtureError("\(at)reopen must be \"clean\" or \"crash\"")
        }
        try FixtureFields.checkNotes(o, at: at)
        self = .reopen(m)
    }
}

/// `{"reopen": "clean"}` closes the engine first; `{"reopen": "crash"}` abandons it.
public enum ReopenMode: String, Sendable {
    case clean, crash
}

/// An op call: `op`, `args` (default `{}`), optional `expect`, optional `save`.
public struct OpStep: Sendable {
    public var op: String
    /// Usually an object; anything else goes to the engine as it is (and is refused there).
    public var args: JSON
    /// nil: the step must come out ok.
    public var expect: JSON?
    /// Names to paths into the outcome, in the order written.
    public var save: [(name: String, path: ValuePath)]

    public init(op: String, args: JSON = [:], expect: JSON? = nil, save: [(name: String, path: ValuePath)] = []) {
        self.op = op
        self.args = args
        self.expect = expect
        self.save = save
    }

    init(object o: JSONObject, at: String) throws(FixtureError) {
        try FixtureFields.rejectUnknown(o, allowed: ["op", "args", "expect", "save", "description", "comment"], at: at)
        guard case let .string(op)? = o["op"], !op.isEmpty else { throw FixtureError("\(at)op must be a non-empty string") }
        self.op = op
        try FixtureFields.checkNotes(o, at: at)
        switch o["args"] {
        case nil, .null?: args = [:]
        case let value?: args = value
        }
        expect = o["expect"]
        save = []
        guard let saveJSON = o["save"] else { return }
        guard case let .object(s) = saveJSON else { throw FixtureError("\(at)save must be an object") }
        for (name, pathValue) in s {
            guard !name.isEmpty else { throw FixtureError("\(at)save names must be non-empty") }
            guard let text = pathValue.stringValue else { throw FixtureError("\(at)save '\(name)' must be a path string") }
            do {
                save.append((name, try ValuePath(parsing: text)))
            } catch {
                throw FixtureError("\(at)save '\(name)': \(error.message)")
            }
        }
    }
}

/// Field checks shared by the fixture readers.
enum FixtureFields {
    /// The first key (in written order) not in `allowed`.
    static func rejectUnknown(_ o: JSONObject, allowed: Set<String>, at: String) throws(FixtureError) {
        for key in o.keys where !allowed.contains(key) { throw FixtureError("\(at)unexpected key '\(key)'") }
    }

    /// A step's `description` and `comment`: strings, otherwise ignored.
    static func checkNotes(_ o: JSONObject, at: String) throws(FixtureError) {
        for key in ["description", "comment"] {
            if let note = o[key], note.stringValue == nil { throw FixtureError("\(at)\(key) must be a string") }
        }
    }
}
