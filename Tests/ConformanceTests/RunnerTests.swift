import WorkflowConformance
import WorkflowCore
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

    func call(_ engine: Handle, op: String, args: JSONObject) -> Outcome {
        log.append("\(op)@\(engine.generation) \(JSON.object(args).compactText)")
        guard let answer = answers[op] else {
            return .failure(OutcomeError(status: -8, code: "unknownOp", message: "unknown op '\(op)'"))
        }
        return answer(args)
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
                       "FAIL no-expect: step 2 (boom): unexpected error WF_ETEMPLATE cycleDetected: cycle detected: A → B → A")
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
                       "FAIL ok: step 1 (boom): ok: expected true, got false (WF_ETEMPLATE cycleDetected: cycle detected: A → B → A)")
        let g = try fixture(#"{"name": "notok", "steps": [{"op": "make", "expect": {"ok": false}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(g).line,
                       #"FAIL notok: step 1 (make): ok: expected false, got true (result {"id":"w-1","effects":[{"runId":"r-9"}]})"#)
    }

    func testUnknownSavedNameFailsAtItsStep() throws {
        let f = try fixture(#"{"name": "unknown", "steps": [{"op": "make"}, {"op": "echo", "args": {"a": "${nope}"}}]}"#)
        let host = makeHost()
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "FAIL unknown: step 2 (echo): nothing was saved as 'nope'")
        XCTAssertFalse(host.log.contains { $0.hasPrefix("echo") }, "the op must not be called")
    }

    func testUnknownNameInExpectFailsToo() throws {
        let f = try fixture(#"{"name": "unknown2", "steps": [{"op": "make", "expect": {"result": {"id": "${x}"}}}]}"#)
        XCTAssertEqual(FixtureRunner(host: makeHost()).run(f).line, "FAIL unknown2: step 1 (make): nothing was saved as 'x'")
    }

    func testSavePathMissingFails() throws {
        let f = try fixture(#"{"name": "nosave", "steps": [{"op": "make", "save": {"x": "result.effects[3].runId"}}]}"#)
        let line = FixtureRunner(host: makeHost()).run(f).line
        XCTAssertTrue(line.hasPrefix("FAIL nosave: step 1 (make): save 'x': result.effects[3].runId is not in the outcome"), line)
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
                       "FAIL noopen: opening the engine: WF_EINVALID unknownConfigKey: config has an unknown key 'x'")
    }

    func testFixtureFormatIsStrict() {
        XCTAssertThrowsError(try fixture(#"{"name": "x", "steps": [{"op": "a", "expected": {}}]}"#))
        XCTAssertThrowsError(try fixture(#"{"name": "x", "steps": [{"reopen": "warm"}]}"#))
        XCTAssertThrowsError(try fixture(#"{"name": "x", "steps": [{"op": "a", "args": [1]}]}"#))
        XCTAssertThrowsError(try fixture(#"{"name": "x", "steps": [{"op": "a", "save": {"v": "a..b"}}]}"#))
        XCTAssertThrowsError(try fixture(#"{"steps": []}"#))
        XCTAssertThrowsError(try fixture(#"{"name": "x", "steps": [], "extra": 1}"#))
        XCTAssertNoThrow(try fixture(#"{"name": "x", "description": "d", "engine": null, "steps": [{"op": "a"}, {"reopen": "crash"}]}"#))
    }

    func testSuiteReportsFilesFoldersAndMissingPaths() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wf-conf-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"name": "b-pass", "steps": [{"op": "make"}]}"#.write(to: dir.appendingPathComponent("b.json"), atomically: true, encoding: .utf8)
        try #"{"name": "a-fail", "steps": [{"op": "boom"}]}"#.write(to: dir.appendingPathComponent("sub/a.json"), atomically: true, encoding: .utf8)
        try "not json".write(to: dir.appendingPathComponent("c.json"), atomically: true, encoding: .utf8)
        try "ignored".write(to: dir.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        var lines: [String] = []
        let tally = ConformanceSuite.run([dir.path, dir.path + "/nope.json"], host: makeHost()) { lines.append($0.line) }
        XCTAssertEqual(tally.line, "1 passed, 3 failed")
        XCTAssertEqual(lines.count, 4)
        XCTAssertEqual(lines[0], "PASS b-pass")  // b.json sorts before c.json and sub/a.json
        XCTAssertTrue(lines[1].hasPrefix("FAIL c: invalid fixture: "), lines[1])
        XCTAssertTrue(lines[2].hasPrefix("FAIL a-fail: step 1 (boom): unexpected error"), lines[2])
        XCTAssertEqual(lines[3], "FAIL \(dir.path)/nope.json: invalid fixture: no such file or folder")
    }

    func testTempStoreIsRemovedAfterTheFixture() throws {
        let host = makeHost()
        let f = try fixture(#"{"name": "tmp", "engine": {"store": "$tempfile"}, "steps": [{"op": "make"}]}"#)
        host.answers["make"] = { _ in
            // Stand in for the engine creating its files.
            let path = host.configs[0]["store"]!.stringValue!
            for suffix in ["", "-wal", "-shm"] { _ = FileManager.default.createFile(atPath: path + suffix, contents: Data()) }
            return .success([:])
        }
        XCTAssertEqual(FixtureRunner(host: host).run(f).line, "PASS tmp")
        let path = try XCTUnwrap(host.configs[0]["store"]?.stringValue)
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + suffix), path + suffix)
        }
    }
}
