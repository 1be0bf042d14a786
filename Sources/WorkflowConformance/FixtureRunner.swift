import WorkflowCore

/// Replays fixtures through a host: a fresh engine per fixture, each step's outcome matched
/// against its `expect` (or required to be ok), saved values substituted into later steps.
public struct FixtureRunner<Host: ConformanceHost> {
    public let host: Host

    public init(host: Host) { self.host = host }

    public func run(_ fixture: Fixture) -> FixtureResult {
        let temp = TempStore.isRequested(by: fixture.engine) ? TempStore() : nil
        defer { temp?.remove() }
        let config = temp?.resolve(fixture.engine) ?? fixture.engine

        var engine: Host.Handle
        switch host.open(config: config) {
        case let .success(e): engine = e
        case let .failure(error): return .fail(fixture.name, .open, error.summary)  // code: message
        }
        var variables = Variables()
        for (i, step) in fixture.steps.enumerated() {
            let location = FixtureResult.Location.step(number: i + 1, label: step.label)
            switch step {
            case let .reopen(mode):
                switch mode {
                case .clean: host.free(engine)
                case .crash: host.abandon(engine)
                }
                switch host.open(config: config) {
                case let .success(e): engine = e
                case let .failure(error): return .fail(fixture.name, location, "reopening the engine: \(error.summary)")
                }
            case let .op(opStep):
                if let message = run(opStep, on: engine, variables: &variables) {
                    host.free(engine)
                    return .fail(fixture.name, location, message)
                }
            }
        }
        host.free(engine)
        return .pass(fixture.name)
    }

    /// Runs one op step (runner-cases/README.md, "Running an op step"); returns what went wrong,
    /// or nil.
    func run(_ step: OpStep, on engine: Host.Handle, variables: inout Variables) -> String? {
        var args: JSON
        let expect: JSON?
        do {
            args = try variables.substitute(step.args)
            if args.isNull { args = [:] }  // as absent (a saved null substituted whole)
            expect = try step.expect.map { (e: JSON) throws(Variables.UnknownName) -> JSON in try variables.substitute(e) }
        } catch {
            return "unknown saved name '\(error.name)'"
        }
        if let expect, let bad = Matcher.check(expect) { return bad.description }
        let outcome = host.call(engine, op: step.op, args: args)
        if let problem = OutcomeCheck.check(outcome, against: expect) { return problem }
        let json = outcome.json
        for (name, path) in step.save {
            guard let value = path.lookup(in: json) else { return "save '\(name)': \(path) is not in the outcome" }
            variables[name] = value
        }
        return nil
    }
}

/// Judges one outcome against its (checked) expectation.
public enum OutcomeCheck {
    /// nil when the outcome is as expected; otherwise the line's "what differed".
    public static func check(_ outcome: Outcome, against expect: JSON?) -> String? {
        guard let expect else {
            if case let .failure(error) = outcome { return "unexpected error \(error.summary)" }
            return nil
        }
        // A wrong `ok` says more than any detail under it: report it first, with the error.
        if case let .bool(wantOK)? = expect["ok"], wantOK != outcome.isOK {
            switch outcome {
            case let .failure(error): return "ok: expected true, got false (\(error.summary))"
            case let .success(result): return "ok: expected false, got true (result \(Mismatch.render(result)))"
            }
        }
        return Matcher.matchChecked(expect, outcome.json, path: "").map(\.description)
    }
}
