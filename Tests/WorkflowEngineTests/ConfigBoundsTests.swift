import Logging
import WorkflowCore
import WorkflowEngine
import XCTest

/// The config object of `wf_engine_open` (OPS §2): every key's type and range, unknown keys at the
/// top level and inside the nested objects, and the defaults. Configs that must be refused cannot
/// be conformance fixtures (a fixture's engine must open), so they are pinned here.
final class ConfigBoundsTests: XCTestCase {
    func parse(_ config: JSONObject) -> Result<EngineConfig, EngineError> {
        Result { () throws(EngineError) in try EngineConfig.parse(.object(config)) }
    }

    /// Asserts that `config` is refused as `code` naming `argument`.
    func assertRefused(_ config: JSONObject, _ argument: String, code: String = "invalidConfig",
                       file: StaticString = #filePath, line: UInt = #line) {
        switch parse(config) {
        case .success:
            XCTFail("\(config) should be refused", file: file, line: line)
        case .failure(let e):
            XCTAssertEqual(e.status, .invalid, "\(config)", file: file, line: line)
            XCTAssertEqual(e.code, code, "\(config)", file: file, line: line)
            XCTAssertEqual(e.details["argument"], .string(argument), "\(config)", file: file, line: line)
        }
    }

    func accepted(_ config: JSONObject, file: StaticString = #filePath, line: UInt = #line) -> EngineConfig? {
        switch parse(config) {
        case .success(let c): return c
        case .failure(let e):
            XCTFail("\(config) should be accepted: \(e)", file: file, line: line)
            return nil
        }
    }

    func testConcurrencyCapsAreIntegersFromOneToTenMillion() {
        for side in ["remote", "local"] {
            for bad: JSON in [0, -1, 10_000_001, 2.5, "8", true] {
                assertRefused(["concurrency": [side: bad]], "config.concurrency.\(side)")
            }
        }
        let low = accepted(["concurrency": ["remote": 1, "local": 1]])
        XCTAssertEqual(low?.remoteConcurrency, 1)
        XCTAssertEqual(low?.localConcurrency, 1)
        let high = accepted(["concurrency": ["remote": 10_000_000, "local": 10_000_000.0]])
        XCTAssertEqual(high?.remoteConcurrency, 10_000_000)
        XCTAssertEqual(high?.localConcurrency, 10_000_000)
    }

    func testConcurrencyTakesOnlyRemoteAndLocal() {
        assertRefused(["concurrency": ["remote": 2, "locl": 1]], "config.concurrency.locl")
        assertRefused(["concurrency": 4], "config.concurrency")
    }

    func testPollIntervalIsANumberOfSecondsFromOneTenthToADay() {
        for bad: JSON in [0, 0.09, -1, 86_400.5, 86_401, "10"] {
            assertRefused(["pollIntervalSeconds": bad], "config.pollIntervalSeconds")
        }
        XCTAssertEqual(accepted(["pollIntervalSeconds": 0.1])?.pollIntervalSeconds, 0.1)
        XCTAssertEqual(accepted(["pollIntervalSeconds": 86_400])?.pollIntervalSeconds, 86_400)
    }

    func testADeepLinkSchemeIsALetterThenLettersDigitsPlusMinusOrDotAtMost32AndIsStoredLowercased() {
        let thirtyTwo = "A" + String(repeating: "b", count: 31)
        for bad: JSON in ["", "1app", "-app", "+app", ".app", "ap p", "app:", "app/x", "äpp", "appé",
                          .string(thirtyTwo + "c"), 5] {
            assertRefused(["deepLinkScheme": bad], "config.deepLinkScheme")
        }
        XCTAssertEqual(accepted(["deepLinkScheme": .string(thirtyTwo)])?.deepLinkScheme, thirtyTwo.lowercased())
        XCTAssertEqual(accepted(["deepLinkScheme": "My+App-2.X"])?.deepLinkScheme, "my+app-2.x")
        XCTAssertEqual(accepted(["deepLinkScheme": "x"])?.deepLinkScheme, "x")
    }

    func testAnUnknownTopLevelKeyIsUnknownConfigKeyListingTheKnownOnes() {
        assertRefused(["store": ":memory:", "stroe": ":memory:"], "config.stroe", code: "unknownConfigKey")
        guard case .failure(let e) = parse(["concurrrency": ["remote": 2]]) else { return XCTFail("should be refused") }
        XCTAssertEqual(e.details["known"], ["assets", "awaits", "backgroundWrites", "cache", "clock", "concurrency",
                                            "deepLinkScheme", "durability", "logLevel", "memory", "metrics",
                                            "pollIntervalSeconds", "seed", "store"])
        // A null config, or none, is every default; anything else that is not an object is refused.
        XCTAssertNoThrow(try EngineConfig.parse(nil))
        XCTAssertNoThrow(try EngineConfig.parse(.null))
        XCTAssertThrowsError(try EngineConfig.parse("store")) { error in
            XCTAssertEqual((error as? EngineError)?.code, "invalidConfig")
            XCTAssertEqual((error as? EngineError)?.details["argument"], "config")
        }
    }

    func testTheStoreIsANonEmptyStringWithoutNul() {
        for bad: JSON in ["", 5, ["path": "x"]] {
            assertRefused(["store": bad], "config.store")
        }
        XCTAssertEqual(accepted(["store": ":memory:"])?.store, ":memory:")
    }

    func testTheClockIsManualOrSystemWithAnRFC3339Start() {
        assertRefused(["clock": "manual"], "config.clock")
        assertRefused(["clock": [:]], "config.clock")
        assertRefused(["clock": ["mode": 1]], "config.clock")
        assertRefused(["clock": ["mode": "Manual"]], "config.clock.mode")
        assertRefused(["clock": ["mode": "manual", "start": "tomorrow"]], "config.clock.start")
        assertRefused(["clock": ["mode": "manual", "start": 0]], "config.clock.start")
        XCTAssertEqual(accepted([:])?.clock, .system)
        XCTAssertEqual(accepted(["clock": ["mode": "manual"]])?.clock, .manual(start: EngineConfig.defaultStart))
        XCTAssertEqual(EngineConfig.defaultStart.rfc3339, "2026-01-01T00:00:00.000Z")
        XCTAssertEqual(accepted(["clock": ["mode": "manual", "start": "2030-06-01T12:00:00+02:00"]])?.clock,
                       .manual(start: Timestamp(rfc3339: "2030-06-01T10:00:00.000Z")!))
    }

    func testSeedDurabilityAndLogLevelTakeOnlyTheirValues() {
        assertRefused(["seed": "7"], "config.seed")
        assertRefused(["seed": 2.5], "config.seed")
        XCTAssertEqual(accepted(["seed": 42])?.seed, 42)
        assertRefused(["durability": "fast"], "config.durability")
        XCTAssertEqual(accepted(["durability": "full"])?.durability, .full)
        XCTAssertEqual(accepted([:])?.durability, .normal)
        assertRefused(["logLevel": "verbose"], "config.logLevel")
        assertRefused(["logLevel": "ERROR"], "config.logLevel")
        for level in ["trace", "debug", "info", "notice", "warning", "error", "critical"] {
            XCTAssertEqual(accepted(["logLevel": .string(level)])?.logLevel.rawValue, level)
        }
        XCTAssertEqual(accepted([:])?.logLevel, .error, "quiet by default")
    }

    func testCacheAndRetentionsAreNonNegativeAndTakeOnlyTheirDocumentedMembers() {
        assertRefused(["cache": ["thumbnailBytes": -1]], "config.cache.thumbnailBytes")
        assertRefused(["cache": ["thumbnailBytes": 1.5]], "config.cache.thumbnailBytes")
        assertRefused(["cache": ["previewDays": -0.5]], "config.cache.previewDays")
        assertRefused(["assets": ["retentionDays": -1]], "config.assets.retentionDays")
        assertRefused(["awaits": ["doneRetentionDays": -1]], "config.awaits.doneRetentionDays")
        assertRefused(["metrics": ["maxQueued": -1]], "config.metrics.maxQueued")
        assertRefused(["metrics": ["maxQueued": 10_000_001]], "config.metrics.maxQueued")
        for (key, member) in [("cache", "thumbnails"), ("assets", "retention"), ("awaits", "retentionDays"),
                              ("memory", "done"), ("metrics", "max")] {
            assertRefused([key: [member: 1]], "config.\(key).\(member)")
        }
        let zero = accepted(["cache": ["thumbnailBytes": 0, "previewDays": 0], "assets": ["retentionDays": 0],
                             "awaits": ["doneRetentionDays": 0], "metrics": ["maxQueued": 0]])
        XCTAssertEqual(zero?.thumbnailBytes, 0)
        XCTAssertEqual(zero?.previewDays, 0)
        XCTAssertEqual(zero?.assetRetentionDays, 0)
        XCTAssertEqual(zero?.awaitRetentionDays, 0)
        XCTAssertEqual(zero?.maxQueuedMetrics, 0)
    }

    func testTheDefaultsAreTheDocumentedOnes() {
        guard let c = accepted([:]) else { return }
        XCTAssertEqual(c.store, ":memory:")
        XCTAssertEqual(c.seed, 0)
        XCTAssertEqual(c.remoteConcurrency, 8)
        XCTAssertEqual(c.localConcurrency, 2)
        XCTAssertEqual(c.pollIntervalSeconds, 10)
        XCTAssertEqual(c.deepLinkScheme, "app")
        XCTAssertEqual(c.thumbnailBytes, 209_715_200)
        XCTAssertEqual(c.previewDays, 7)
        XCTAssertEqual(c.assetRetentionDays, 7)
        XCTAssertEqual(c.awaitRetentionDays, 7)
        XCTAssertEqual(c.doneWorkflowsInMemory, 256)
        XCTAssertEqual(c.maxQueuedMetrics, 100_000)
    }
}
