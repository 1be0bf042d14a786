import WorkflowCore
import WorkflowEngine
import XCTest

/// The engine records times as RFC 3339 with a four-digit year: `clock.advance` refuses to move the
/// clock past 9999-12-31T23:59:59.999Z with `WF_EINVALID timeOutOfRange`, and changes nothing.
final class ClockRangeTests: XCTestCase {
    static let start = "9999-12-31T00:00:00.000Z"
    static let latest = "9999-12-31T23:59:59.999Z"

    /// A file-backed engine near the end of year 9999 with one await that expires an hour later.
    func harnessWithAnExpiringAwait() throws -> (Harness, awaitId: String) {
        let h = try Harness(file: true, extra: ["clock": ["mode": "manual", "start": .string(Self.start)]])
        let tpl = h.register(template: ["schema": "app.workflow/v2", "name": "ask",
                                        "nodes": [["id": "ask", "kind": "UserMaskEditor", "outputs": ["mask": "MaskRef"],
                                                   "await": ["type": "draw_mask", "expiresIn": "PT1H"]]]])
        _ = h.create(tpl)  // the interactive node files its await at once
        let notify = try XCTUnwrap(h.take().first { $0["type"]?.stringValue == "notify" })
        let awaitId = try XCTUnwrap(notify["awaitId"]?.stringValue)
        return (h, awaitId)
    }

    func testAdvancePastYear9999IsRefusedWithTimeOutOfRangeAndChangesNothing() throws {
        let (h, aw) = try harnessWithAnExpiringAwait()
        let deadline = h.call("engine.nextDeadline")
        let e = h.fail("clock.advance", ["seconds": 86_400])
        XCTAssertEqual(e.status, .invalid)
        XCTAssertEqual(e.code, "timeOutOfRange")
        XCTAssertTrue(e.message.contains("seconds"), e.message)
        XCTAssertTrue(e.message.contains(Self.latest), e.message)
        XCTAssertEqual(e.details["argument"], "seconds")
        XCTAssertEqual(e.details["now"], .string(Self.start))
        XCTAssertEqual(e.details["latest"], .string(Self.latest))
        XCTAssertEqual(e.details["maxSeconds"]?.doubleValue ?? -1, 86_399.999, accuracy: 1e-6)

        // Nothing moved, nothing fired (the await due at 01:00 did not expire), nothing was persisted.
        XCTAssertEqual(h.now(), Self.start)
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(aw)])["status"], "pending")
        XCTAssertEqual(h.take().count, 0)
        XCTAssertEqual(h.call("engine.nextDeadline"), deadline)
        try h.crash()
        XCTAssertEqual(h.now(), Self.start)
    }

    func testTheLastRecordableMillisecondIsReachedAndSurvivesReopeningButNotOneMore() throws {
        let (h, aw) = try harnessWithAnExpiringAwait()
        XCTAssertEqual(h.call("clock.advance", ["seconds": 86_399.999])["now"], .string(Self.latest))
        // The expiry fired on the way; the done await's retention, which would end after 9999,
        // ends at the last millisecond, so it has left the Action Center too.
        XCTAssertEqual(h.fail("await.get", ["awaitId": .string(aw)]).code, "unknownAwait")
        let e = h.fail("clock.advance", ["seconds": 0.001])
        XCTAssertEqual(e.code, "timeOutOfRange")
        XCTAssertEqual(e.details["maxSeconds"]?.doubleValue, 0)
        XCTAssertEqual(h.call("clock.advance", ["seconds": 0])["now"], .string(Self.latest))
        try h.crash()
        XCTAssertEqual(h.now(), Self.latest, "the stored time reads back after a restart")
    }

    func testDeadlinesPastYear9999StopAtTheLatestRecordableTimeAndReadBackAfterAReopen() throws {
        let (h, aw) = try harnessWithAnExpiringAwait()
        let snoozed = h.call("await.snooze", ["awaitId": .string(aw), "seconds": 31_536_000])
        XCTAssertEqual(snoozed["snoozeUntil"], .string(Self.latest), "a year of snooze ends at the last recordable time")
        XCTAssertNotNil(h.call("engine.nextDeadline")["at"]?.stringValue.flatMap { Timestamp(rfc3339: $0) })
        try h.crash()
        XCTAssertEqual(h.call("await.get", ["awaitId": .string(aw)])["snoozeUntil"], .string(Self.latest))
    }

    func testTimestampArithmeticSaturatesAtTheLatestTime() {
        let near = Timestamp(rfc3339: "9999-12-31T23:00:00.000Z")!
        XCTAssertEqual(near.adding(seconds: 7_200), Timestamp.latest)
        XCTAssertEqual(near.adding(seconds: .greatestFiniteMagnitude), Timestamp.latest)
        XCTAssertEqual(near.adding(milliseconds: .max), Timestamp.latest)
        XCTAssertEqual(near.adding(seconds: 60).rfc3339, "9999-12-31T23:01:00.000Z")
        XCTAssertEqual(Timestamp.latest.rfc3339, Self.latest)
    }
}

/// Times the engine could not write back are refused where they come in, and arithmetic on the
/// edges of the recordable range never traps.
final class RecordableTimeEdgeTests: XCTestCase {
    func configError(start: String) -> EngineError? {
        do {
            _ = try Engine(configJSON: ["clock": ["mode": "manual", "start": .string(start)]])
            return nil
        } catch {
            return error
        }
    }

    func testAClockStartPastYear9999OrBeforeYear0IsRefusedAsInvalidConfig() {
        // An offset moves a four-digit local time out of the four-digit UTC range.
        for start in ["9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"] {
            let e = configError(start: start)
            XCTAssertEqual(e?.status, .invalid, start)
            XCTAssertEqual(e?.code, "invalidConfig", start)
            XCTAssertEqual(e?.details["argument"], "config.clock.start", start)
            XCTAssertTrue(e?.message.contains("9999-12-31T23:59:59.999Z") ?? false, e?.message ?? "")
        }
        XCTAssertNil(configError(start: "9999-12-31T22:59:59+01:00"), "the same instant as the latest minus an hour is fine")
    }

    func testAKeyTheClockModeDoesNotTakeIsRefusedRatherThanIgnored() {
        // A misspelt "start" left the clock at the default start, silently (OPS §2: unknown keys
        // inside nested objects are refused).
        let cases: [(JSONObject, String)] = [
            (["mode": "manual", "strat": "2030-01-01T00:00:00.000Z"], "config.clock.strat"),
            (["mode": "system", "start": "2030-01-01T00:00:00.000Z"], "config.clock.start"),
        ]
        for (clock, argument) in cases {
            XCTAssertThrowsError(try Engine(configJSON: ["store": ":memory:", "clock": .object(clock)])) { error in
                XCTAssertEqual((error as? EngineError)?.code, "invalidConfig", argument)
                XCTAssertEqual((error as? EngineError)?.details["argument"], .string(argument))
            }
        }
        XCTAssertThrowsError(try Engine(configJSON: ["clock": ["mode": "lunar", "start": "2030-01-01T00:00:00.000Z"]])) { error in
            XCTAssertEqual((error as? EngineError)?.details["argument"], "config.clock.mode", "an unknown mode is named first")
        }
        XCTAssertNoThrow(try Engine(configJSON: ["clock": ["mode": "manual", "start": "2030-01-01T00:00:00.000Z"]]).close())
    }

    func testAStorePathWithANulCharacterIsRefusedRatherThanCutShort() throws {
        // "x.sqlite\0.other" would open x.sqlite; ":memory:\0x" an in-memory store. The folder is
        // this run's own: a fixed path in /tmp would be seen by other runs of the suite at once.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wf-nul-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cut = folder.appendingPathComponent("x.sqlite").path
        for store in [cut + "\u{0}.other", ":memory:\u{0}x"] {
            XCTAssertThrowsError(try Engine(configJSON: ["store": .string(store)])) { error in
                XCTAssertEqual((error as? EngineError)?.code, "invalidConfig")
                XCTAssertEqual((error as? EngineError)?.details["argument"], "config.store")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "no store was made at the cut path")
    }

    func testAdvancingByExactlyTheReportedMaximumIsAcceptedAtAnAwkwardTime() throws {
        // A time whose distance to the latest is not a whole number of seconds.
        let h = try Harness(extra: ["clock": ["mode": "manual", "start": "9999-12-31T23:59:58.123Z"]])
        let e = h.fail("clock.advance", ["seconds": 10])
        XCTAssertEqual(e.code, "timeOutOfRange")
        let max = try XCTUnwrap(e.details["maxSeconds"]?.doubleValue)
        XCTAssertEqual(h.call("clock.advance", ["seconds": .double(max)])["now"], .string(ClockRangeTests.latest))
    }

    func testAHugeAssetRetentionCollectsNothingAndDoesNotTrap() throws {
        let h = try Harness(extra: ["assets": ["retentionDays": 1e300]])
        let asset = h.call("asset.import", ["type": "ImageRef", "uri": "file:///kept.png"])
        h.advance(86_400 * 365)
        let gc = h.call("assets.gc")
        XCTAssertEqual(gc["count"], 0)
        XCTAssertNotNil(h.call("asset.get", ["assetId": asset["assetId"]!])["assetId"])
        // The same asset under a one-day retention is collected: the scan itself works.
        let short = try Harness(extra: ["assets": ["retentionDays": 1]])
        let other = short.call("asset.import", ["type": "ImageRef", "uri": "file:///gone.png"])
        short.advance(86_400 * 2)
        XCTAssertEqual(short.call("assets.gc")["removed"], .array([other["assetId"]!]))
    }

    func testTimestampArithmeticSaturatesAtBothEndsAndIgnoresNaN() {
        let t = Timestamp(rfc3339: "2026-01-01T00:00:00.000Z")!
        XCTAssertEqual(t.adding(seconds: -.greatestFiniteMagnitude), Timestamp.earliest)
        XCTAssertEqual(t.adding(milliseconds: .min), Timestamp.earliest)
        XCTAssertEqual(t.adding(seconds: .nan), t)
        XCTAssertEqual(Timestamp.earliest.rfc3339, "0000-01-01T00:00:00.000Z")
        XCTAssertTrue(Timestamp.earliest.isRecordable && Timestamp.latest.isRecordable)
        XCTAssertFalse(Timestamp(milliseconds: Timestamp.latest.milliseconds + 1).isRecordable)
    }
}

/// docs/OPS.md `clock`: on a store that ran before, a manual clock resumes at the later of the
/// configured `start` and where the store left off; it never goes back.
final class ManualClockResumeTests: XCTestCase {
    func testAManualClockReopenedWithALaterStartResumesThereAndWithAnEarlierStartWhereItLeftOff() throws {
        let h = try Harness(file: true)
        h.advance(90)
        XCTAssertEqual(h.now(), "2026-01-01T00:01:30.000Z")
        h.engine.close()
        func reopen(start: String) throws -> Engine {
            var config = h.config
            config["clock"] = ["mode": "manual", "start": .string(start)]
            return try Engine(configJSON: .object(config))
        }
        func now(_ engine: Engine) -> String? { (try? engine.call("clock.now", [:]).get())?["now"]?.stringValue }

        // A start before the stored time: the stored time.
        var engine = try reopen(start: "2025-06-01T00:00:00.000Z")
        XCTAssertEqual(now(engine), "2026-01-01T00:01:30.000Z")
        engine.close()
        // A start after it: the start, and that time is what the store keeps from then on.
        engine = try reopen(start: "2026-03-01T00:00:00.000Z")
        XCTAssertEqual(now(engine), "2026-03-01T00:00:00.000Z")
        _ = engine.call("clock.advance", ["seconds": 1])
        engine.close()
        engine = try reopen(start: "2026-01-01T00:00:00.000Z")
        XCTAssertEqual(now(engine), "2026-03-01T00:00:01.000Z", "never back to the first start")
        engine.close()
        h.engine = try reopen(start: "2026-01-01T00:00:00.000Z")  // closed by the harness
    }
}
