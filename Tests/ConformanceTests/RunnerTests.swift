import WorkflowConformance
import WorkflowCore
import WorkflowEngine
import XCTest

/// A scripted host: answers each op from a table, and records what the runner asked of it.
final class ScriptedHost: ConformanceHost {
    final class Handle {
        let generation: Int
        init(_ generation: Int) { self.generation = generation }
    }

    var answers: [String: (JSONObject) -> Outcome] = [:]
    var log: [String] = []
    var configs: [JSON] = []
    var failOpen: OutcomeError?
    private var opened = 0

    func open(config: JSON) -> Result<Handle, OutcomeError> {
        if let failOpen { return .failure(failOpen) }
        opened += 1
        configs.append(config)
        log.append("open")
        return .success(Handle(opened))
    }

    func call(_ engine: Handle, op: String, args: JSON) -> Outcome {
        log.append("\(op)@\(engine.generation) \(args.compactText)")
        guard let object = args.objectValue else { return .failure(.argsNotAnObject(args)) }
        guard let answer = answers[op] else {
            return .failure(OutcomeError(status: -8, code: "unknownOp", message: "unknown op '\(op)'"))
        }
        return answer(object)
    }

    func free(_ engine: Handle) { log.append("free@\(engine.generation)") }
    func abandon(_ engine: Handle) { log.append("abandon@\(engine.generation)") }
}

/// The runner: steps, expectations, save and substitution, reopen, and the report lines.
final class RunnerTests: XCTestCase {
    func fixture(_ text: String) throws -> Fixture { try Fixture(json: j(text)) }

    func makeHost() -> ScriptedHost {
        let host = ScriptedHost()
        host.answers["make"] = { _ in .success(["id": "w-1", "effects": [["runId": "r-9"]]]) }
        host.answers["echo"] = { args in .success(.object(args)) }
        host.answers["boom"] = { _ in
            .failure(OutcomeError(status: -5, code: "cycleDetected", message: "cycle detected: A → B → A",
                                  details: ["errors": [["cycle": ["A", "B", "A"]]]]))
        }
        return host
    }

    func testPassingFixtureSavesAndSubstitutes() throws {
        let host = makeHost()
        let f = try fixture(#"""
            {"name": "saves", "engine": {"store": ":memory:"}, "steps": [
              {"op": "make", "save": {"wf": "result.id", "run": "result.effects[0].runId"}},
              {"op": "echo", "args": {"workflowId": "${wf}", "label": "run ${run}!", "list": ["${run}"]},
               "expect": {"ok": true, "result": {"workflowId": "w-1", "label": "run r-9!", "list": ["r-9"]}}},
              {"op": "echo", "args": {"x": "${wf}"}, "expect": {"result": {"x": "${wf}"}}}
            ]}
            """#)
        let result = FixtureRunner(host: host).run(f)
        XCTAssertEqual(result.line, "PASS saves")
        XCTAssertEqual(host.log, ["open", "make@1 {}",
                                  #"echo@1 {"workflowId":"w-1","label":"run r-9!","list":["r-9"]}"#,
                                  #"echo@1 {"x":"w-1"}"#, "free@1"])
    }

    func testStepWithoutExpectMustBeOK() throws {
        let host = makeHost()
        let f = try fixture(#"{"name": "no-expect", "steps": [{"op": "make"}, {"op": "boom"}]}"#)
        XCTAssertEqual(FixtureRunner(host: host).run(f).line,
                       "FAIL no-expect: step 2 (boom): unexpected error cycleDetected: cycle detected: A → B → A")
        XCTAssertEqual(host.log.last, "free@1")
    }

    func testExpectedErrorMatches() throws {
        let f = try fixture(#"""
            {"name": "err", "steps": [{"op": "boom", "expect": {"ok": false, "error": {"status": -5,
              "code": "cycleDetected", "message": {"$match": "A → B → A"}, "details": {"errors": [{"cycle": ["A", "B", "A"]}]}}}}]}
            """#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line, "PASS err")
    }

    func testMismatchLineNamesStepOpPathAndValues() throws {
        let f = try fixture(#"""
            {"name": "differs", "steps": [
              {"op": "make"},
              {"op": "make", "expect": {"ok": true, "result": {"effects": [{"runId": "r-1"}]}}}]}
            """#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line,
                       #"FAIL differs: step 2 (make): result.effects[0].runId: expected "r-1", got "r-9""#)
    }

    func testWrongOkIsReportedWithTheError() throws {
        let f = try fixture(#"{"name": "ok", "steps": [{"op": "boom", "expect": {"ok": true, "result": {}}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line,
                       "FAIL ok: step 1 (boom): ok: expected true, got false (cycleDetected: cycle detected: A → B → A)")
        let g = try fixture(#"{"name": "notok", "steps": [{"op": "make", "expect": {"ok": false}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(g).line,
                       #"FAIL notok: step 1 (make): ok: expected false, got true (result {"id":"w-1","effects":[{"runId":"r-9"}]})"#)
    }

    func testUnknownSavedNameFailsAtItsStep() throws {
        let f = try fixture(#"{"name": "unknown", "steps": [{"op": "make"}, {"op": "echo", "args": {"a": "${nope}"}}]}"#)
        let host = makeHost()
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "FAIL unknown: step 2 (echo): unknown saved name 'nope'")
        XCTAssertFalse(host.log.contains { $0.hasPrefix("echo") }, "the op must not be called")
    }

    func testUnknownNameInExpectFailsToo() throws {
        let f = try fixture(#"{"name": "unknown2", "steps": [{"op": "make", "expect": {"result": {"id": "${x}"}}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line, "FAIL unknown2: step 1 (make): unknown saved name 'x'")
    }

    func testSavePathMissingFails() throws {
        let f = try fixture(#"{"name": "nosave", "steps": [{"op": "make", "save": {"x": "result.effects[3].runId"}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line,
                       "FAIL nosave: step 1 (make): save 'x': result.effects[3].runId is not in the outcome")
    }

    func testReopenCleanFreesAndCrashAbandons() throws {
        let host = makeHost()
        let f = try fixture(#"""
            {"name": "reopen", "engine": {"store": "$tempfile", "seed": 7}, "steps": [
              {"op": "make"}, {"reopen": "clean"}, {"op": "make"}, {"reopen": "crash"}, {"op": "make"}]}
            """#)
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "PASS reopen")
        XCTAssertEqual(host.log, ["open", "make@1 {}", "free@1", "open", "make@2 {}", "abandon@2", "open", "make@3 {}", "free@3"])
        // Every open got the same config, with a real temporary path for the store.
        XCTAssertEqual(host.configs.count, 3)
        XCTAssertEqual(Set(host.configs.map(\.compactText)).count, 1)
        let store = try XCTUnwrap(host.configs[0]["store"]?.stringValue)
        XCTAssertNotEqual(store, "$tempfile")
        XCTAssertTrue(store.hasSuffix(".sqlite"), store)
        XCTAssertEqual(host.configs[0]["seed"], .int(7))
    }

    func testOpenFailureIsReported() throws {
        let host = makeHost()
        host.failOpen = OutcomeError(status: -2, code: "unknownConfigKey", message: "config has an unknown key 'x'")
        let f = try fixture(#"{"name": "noopen", "engine": {"x": 1}, "steps": []}"#)
        XCTAssertEqual(FixtureRunner(host: host).run(f).line,
                       "FAIL noopen: opening the engine: unknownConfigKey: config has an unknown key 'x'")
    }

    func testFixtureFormatIsStrict() {
        func refused(_ text: String, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try fixture(text), file: file, line: line) { error in
                XCTAssertEqual((error as? FixtureError)?.message, why, file: file, line: line)
            }
        }
        refused(#"{"name": "x", "steps": [{"op": "a", "expected": {}}]}"#, "step 1: unexpected key 'expected'")
        refused(#"{"name": "x", "steps": [{"reopen": "warm"}]}"#, #"step 1: reopen must be "clean" or "crash""#)
        refused(#"{"name": "x", "steps": [{"reopen": "clean", "args": {}}]}"#, "step 1: unexpected key 'args'")
        refused(#"{"name": "x", "steps": [{"op": "a", "reopen": "clean"}]}"#, "step 1: needs exactly one of 'op' and 'reopen'")
        refused(#"{"name": "x", "steps": [{"op": "a", "save": {"v": "a..b"}}]}"#, "step 1: save 'v': bad path 'a..b'")
        refused(#"{"steps": []}"#, "name must be a non-empty string")
        refused(#"{"name": "x", "steps": [], "extra": 1}"#, "unexpected key 'extra'")
        refused(#"{"name": "x", "engine": null, "steps": []}"#, "engine must be an object")
        XCTAssertNoThrow(try fixture(#"{"name": "x", "description": "d", "steps": [{"op": "a", "comment": "c"}, {"reopen": "crash", "comment": "c"}]}"#))
        XCTAssertNoThrow(try fixture(#"{"name": "x", "steps": [{"op": "a", "args": [1]}, {"op": "a", "args": null}]}"#))
    }

    func testArgsThatAreNoObjectReachTheHost() throws {
        let host = makeHost()
        let f = try fixture(#"""
            {"name": "args", "steps": [
              {"op": "echo", "args": [1], "expect": {"ok": false, "error": {"status": -2, "code": "invalidArgument",
               "message": "args must be a JSON object, not array", "details": {"argument": "args"}}}},
              {"op": "echo", "args": null, "expect": {"result": {}}}]}
            """#)
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "PASS args")
        XCTAssertEqual(host.log, ["open", "echo@1 [1]", "echo@1 {}", "free@1"])
    }

    func testMalformedExpectationFailsBeforeTheCall() throws {
        let host = makeHost()
        let f = try fixture(#"{"name": "bad", "steps": [{"op": "boom", "expect": {"ok": true, "x": {"$not": {"$absent": false}}}}]}"#)
        XCTAssertEqual(FixtureRunner(host: host).run(f).line,
                       "FAIL bad: step 1 (boom): malformed expectation: x.$not: $absent takes only true, not false")
        XCTAssertFalse(host.log.contains { $0.hasPrefix("boom") }, "the op must not be called")
    }

    func testSuiteReportsFilesFoldersAndMissingPaths() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wf-conf-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"name": "b-pass", "steps": [{"op": "make"}]}"#.write(to: dir.appendingPathComponent("b.json"), atomically: true, encoding: .utf8)
        try #"{"name": "a-fail", "steps": [{"op": "boom"}]}"#.write(to: dir.appendingPathComponent("sub/a.json"), atomically: true, encoding: .utf8)
        try "not json".write(to: dir.appendingPathComponent("c.json"), atomically: true, encoding: .utf8)
        try "ignored".write(to: dir.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        try #"{"name": "d", "steps": [{"op": "make"}]}"#.write(to: dir.appendingPathComponent("A.json"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ConformanceSuite.fixtureFiles([dir.path, dir.path + "/nope.json"])) { error in
            XCTAssertEqual(error as? ConformanceSuite.UsageError,
                           ConformanceSuite.UsageError(message: "no such file or folder: \(dir.path)/nope.json"))
        }
        // Files and folders are sorted together, by the bytes of their paths.
        let files = try ConformanceSuite.fixtureFiles([dir.path + "/", dir.path + "/b.json"])
        XCTAssertEqual(files, ["A.json", "b.json", "b.json", "c.json", "sub/a.json"].map { "\(dir.path)/\($0)" })
        var lines: [String] = []
        let tally = ConformanceSuite.run(files: files, host: makeHost()) { lines.append($0.line) }
        XCTAssertEqual(tally.line, "3 passed, 2 failed")
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines[0], "PASS d")
        XCTAssertEqual(lines[1], "PASS b-pass")
        XCTAssertTrue(lines[3].hasPrefix("FAIL \(dir.path)/c.json: invalid fixture: not JSON: "), lines[3])
        XCTAssertEqual(lines[4], "FAIL a-fail: step 1 (boom): unexpected error cycleDetected: cycle detected: A → B → A")
    }

    /// By bytes, not by Swift's `String` order, which compares canonically equivalent text as
    /// equal: "e\u{301}z" (0x65 first) goes before "\u{E9}a" (0xC3 first), though "éa" < "éz".
    func testFilesAreSortedByTheirUTF8BytesNotByCanonicalOrder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wf-conf-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let decomposed = "e\u{301}z.json", precomposed = "\u{E9}a.json", hidden = ".json"
        for name in [decomposed, precomposed, hidden] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir.path + "/" + name, contents: Data("{}".utf8)))
        }
        let files = try ConformanceSuite.fixtureFiles([dir.path])
        XCTAssertEqual(files.map { Array($0.utf8) }, [decomposed, precomposed].map { Array("\(dir.path)/\($0)".utf8) },
                       "a file named just .json is no fixture")
    }

    func testTempStoreIsRemovedAfterTheFixture() throws {
        let host = makeHost()
        let f = try fixture(#"{"name": "tmp", "engine": {"store": "$tempfile"}, "steps": [{"op": "make"}]}"#)
        host.answers["make"] = { _ in
            // Stand in for the engine creating its files.
            let path = host.configs[0]["store"]!.stringValue!
            for file in Engine.storeFiles(path) { _ = FileManager.default.createFile(atPath: file, contents: Data()) }
            return .success([:])
        }
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "PASS tmp")
        let path = try XCTUnwrap(host.configs[0]["store"]?.stringValue)
        for file in Engine.storeFiles(path) {
            XCTAssertFalse(FileManager.default.fileExists(atPath: file), file)
        }
    }
}
