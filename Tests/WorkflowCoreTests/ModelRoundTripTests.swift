import Foundation
@testable import WorkflowCore
import XCTest

/// Step 1: models survive an encode/decode round trip (seeded RNG).
final class ModelRoundTripTests: XCTestCase {
    func testRandomJSONValuesRoundTripThroughText() throws {
        var rng = SplitMix64(seed: 1)
        for _ in 0..<500 {
            let v = randomJSON(&rng, depth: 0)
            XCTAssertEqual(try JSON(parsing: v.compactText), v)
            XCTAssertEqual(try JSON(parsing: v.canonicalText), v)
        }
    }

    func testIntegersStayIntegersAndRealsStayReals() throws {
        let v = try JSON(parsing: #"{"steps": 30, "cfg": 4.0, "big": 9007199254740993, "tiny": 1e-5}"#)
        XCTAssertEqual(v["steps"], .int(30))
        XCTAssertEqual(v["cfg"]?.compactText, "4.0")
        XCTAssertEqual(v["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(v.compactText, #"{"steps":30,"cfg":4.0,"big":9007199254740993,"tiny":1e-05}"#)
    }

    func testIntegersAreWrittenAsSwiftSpellsThemIncludingTheExtremes() {
        var rng = SplitMix64(seed: 3)
        var values: [Int64] = [0, 1, 9, 10, -1, -9, -10, 99, 100, 1_000_000, Int64.max, Int64.min, Int64.min + 1]
        for _ in 0..<500 { values.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)) }
        for v in values {
            XCTAssertEqual(JSON.int(v).compactText, String(v))
            XCTAssertEqual(JSON.array([.int(v), .bool(v < 0), .null]).compactText, "[\(v),\(v < 0),null]")
        }
    }

    func testStringsEscapeExactlyQuotesBackslashesAndControlCharactersAndKeepTheRestWhole() {
        let long = String(repeating: "long ", count: 40)
        let cases: [(String, String)] = [
            ("", #""""#), ("plain", #""plain""#), ("q\"uote", #""q\"uote""#), ("back\\slash", #""back\\slash""#),
            ("\"", #""\"""#), ("a\nb\r\tc", #""a\nb\r\tc""#), ("\u{08}\u{0C}", #""\b\f""#),
            ("\u{01}x\u{1F}", #""\u0001x\u001f""#), ("ünï ✓ 🎉 /", "\"ünï ✓ 🎉 /\""), ("\u{7F}", "\"\u{7F}\""),
            (long + "\"end", "\"" + long + #"\"end""#),
        ]
        for (value, text) in cases {
            XCTAssertEqual(JSON.string(value).compactText, text)
            XCTAssertEqual(try JSON(parsing: text), .string(value))
        }
    }

    /// Reals are written as Swift describes them (the shortest text that reads back the same),
    /// the whole ones below 10^15 too, which the writer spells without asking for a description.
    func testRealsAreWrittenAsSwiftDescribesThemWholeOnesIncluded() {
        var rng = SplitMix64(seed: 4)
        var values: [Double] = [0, -0.0, 1, -1, 2, 10, 2.5, 0.1, 1e-05, 999_999_999_999_999, 1e15 - 1, 1e15, -1e15,
                                1e15 + 1, 1e16, -1e16, 123_456_789_012_345, 4_503_599_627_370_496.5, 9_007_199_254_740_992,
                                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for _ in 0..<500 {
            values.append(Double(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)))  // whole, any size
            let bits = Double(bitPattern: rng.next())
            if bits.isFinite { values.append(bits) }
        }
        for d in values {
            XCTAssertEqual(JSON.double(d).compactText, d.description, "\(d)")
        }
        for d in [Double.infinity, -.infinity, .nan] { XCTAssertEqual(JSON.double(d).compactText, "null") }
    }

    /// A character that needs an escape is found wherever it stands, in strings of every length
    /// (the writer looks at eight bytes at a time, then the rest one by one).
    func testACharacterToEscapeIsFoundAtEveryPositionOfAStringOfAnyLength() {
        func reference(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
                default: out.unicodeScalars.append(u)
                }
            }
            return out + "\""
        }
        for length in 1..<26 {
            for position in 0..<length {
                for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\u{7F}", " ", "é", "\u{80}"] {
                    var chars = Array(repeating: "a", count: length)
                    chars[position] = special
                    let s = chars.joined()
                    XCTAssertEqual(JSON.string(s).compactText, reference(s), "\(length) \(position) \(special.unicodeScalars.first!.value)")
                }
            }
        }
    }

    func testStrictParsingRejectsWhatJSONForbids() {
        for bad in ["{\"a\":1,}", "[1 2]", "01", "{'a':1}", "\"\\ud800\"", "[1]x", "", "nul", "\"\u{01}\""] {
            XCTAssertThrowsError(try JSON(parsing: bad), bad)
        }
        XCTAssertThrowsError(try JSONParser.parse(bytes: [0x22, 0xFF, 0x22]), "invalid UTF-8")
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        XCTAssertThrowsError(try JSON(parsing: deep), "too deep")
    }

    func testEveryRawControlCharacterInAStringIsRefused() {
        // RFC 8259: U+0000 … U+001F must be escaped in a string, on the fast path (no escape
        // before it) as on the slow one (after an escape).
        for b in UInt8(0)..<0x20 {
            XCTAssertThrowsError(try JSONParser.parse(bytes: [0x22, 0x61, b, 0x22]), "raw 0x\(String(b, radix: 16))")
            XCTAssertThrowsError(try JSONParser.parse(bytes: [0x22, 0x5C, 0x6E, b, 0x22]), "raw 0x\(String(b, radix: 16)) after an escape")
        }
    }

    func testAnEscapedLoneSurrogateIsNotUnicodeTextHighOrLow() {
        for bad in [#""\ud800""#, #""\udc00""#, #""a\udfffb""#, #""\ud800\u0041""#] {
            XCTAssertThrowsError(try JSON(parsing: bad), bad) { error in
                XCTAssertEqual((error as? JSONParser.Failure)?.kind, .invalidUnicode, bad)
            }
        }
        XCTAssertEqual(try JSON(parsing: #""\ud83c\udf89""#), .string("🎉"), "a pair is one scalar")
    }

    func testNestingCountsEveryContainerUpTo512ObjectsAndArraysAlike() throws {
        // 512 containers deep parses, an empty innermost one counted; 513 is too deep.
        func nested(_ depth: Int, object: Bool) -> String {
            object ? String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
                : String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        for object in [true, false] {
            XCTAssertNoThrow(try JSON(parsing: nested(JSONParser.maxDepth, object: object)), "512 deep, object: \(object)")
            XCTAssertThrowsError(try JSON(parsing: nested(JSONParser.maxDepth + 1, object: object))) { error in
                XCTAssertEqual((error as? JSONParser.Failure)?.kind, .tooDeep, "513 deep, object: \(object)")
            }
        }
    }

    func testKeysThatAreOtherSpellingsOfTheSameTextAreTwoMembers() throws {
        // "café" precomposed and decomposed: Swift's String calls them equal; JSON keys are bytes.
        let o = try XCTUnwrap(JSON(parsing: #"{"caf\u00e9": 1, "cafe\u0301": 2, "caf\u00e9": 3}"#).objectValue)
        XCTAssertEqual(o.count, 2, "the repeated precomposed key keeps its last value; the decomposed one is its own")
        XCTAssertEqual(o.members.map(\.value), [3, 2])
        XCTAssertEqual(o["cafe\u{301}"], 2)
        XCTAssertEqual(try JSON(parsing: JSONWriter.string(.object(o))).objectValue?.count, 2, "and both are written")
    }

    func testTimestampsRoundTripAsRFC3339WithMilliseconds() {
        var rng = SplitMix64(seed: 2)
        for _ in 0..<1000 {
            let t = Timestamp(milliseconds: Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &rng))
            XCTAssertEqual(Timestamp(rfc3339: t.rfc3339), t, t.rfc3339)
        }
        XCTAssertEqual(Timestamp(rfc3339: "2026-01-01T00:00:30Z")?.rfc3339, "2026-01-01T00:00:30.000Z")
        XCTAssertEqual(Timestamp(milliseconds: 0).rfc3339, "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamp(milliseconds: -1).rfc3339, "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(Timestamp(rfc3339: "0001-01-01T00:00:00.007Z")?.rfc3339, "0001-01-01T00:00:00.007Z")
        XCTAssertEqual(Timestamp(rfc3339: "9999-12-31T23:59:59.999Z")?.rfc3339, "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(Timestamp(rfc3339: "2026-01-01T02:00:00.5+02:00")?.rfc3339, "2026-01-01T00:00:00.500Z")
        XCTAssertNil(Timestamp(rfc3339: "2026-02-30T00:00:00Z"))
        XCTAssertEqual(RFC3339Time(parsing: "2026-01-01t00:00:00.1234567899z")?.nanoseconds, 123_456_789)
        XCTAssertEqual(Timestamp(rfc3339: "2026-01-01T00:00:00.1239Z")?.rfc3339, "2026-01-01T00:00:00.123Z",
                       "fraction digits past the millisecond are ignored, not rounded")
        XCTAssertNil(RFC3339Time(parsing: "2026-01-01T00:00:60Z"), "no leap second")
        XCTAssertNil(RFC3339Time(parsing: "2026-01-01T00:00:00.Z"))
        XCTAssertNil(Timestamp(rfc3339: "yesterday"))
        // RFC 3339 needs an offset: Z or ±hh:mm, nothing else and nothing after it.
        for bad in ["2026-01-01T00:00:00", "2026-01-01T00:00:00.5", "2026-01-01T00:00:00X", "2026-01-01T00:00:00 Z",
                    "2026-01-01T00:00:00+0200", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00-01:60",
                    "2026-01-01T00:00:00Z ", "2026-01-01T00:00:00+01:00Z"] {
            XCTAssertNil(Timestamp(rfc3339: bad), bad)
        }
        XCTAssertEqual(Timestamp(rfc3339: "2025-12-31T23:30:00-00:30")?.rfc3339, "2026-01-01T00:00:00.000Z")
    }

    /// A damaged store can hold any integer as a time; writing it, or the span between two of
    /// them, must not trap (Int64.min overflowed the formatting's floor division).
    func testEveryMillisecondCountFormatsAndSubtractsWithoutOverflow() {
        XCTAssertEqual(Timestamp(milliseconds: .min).rfc3339, "-292275055-05-16T16:47:04.192Z")
        XCTAssertEqual(Timestamp(milliseconds: .max).rfc3339, "292278994-08-17T07:12:55.807Z")
        XCTAssertEqual(Timestamp(milliseconds: -1001).rfc3339, "1969-12-31T23:59:58.999Z")
        XCTAssertEqual(Timestamp(milliseconds: -1000).rfc3339, "1969-12-31T23:59:59.000Z")
        for ms in [Int64.min, .min + 1, -1, 0, .max - 1, .max] { _ = Timestamp(milliseconds: ms).rfc3339 }
        XCTAssertEqual(Timestamp(milliseconds: .min).seconds(until: Timestamp(milliseconds: .max)), 18_446_744_073_709_551.615,
                       accuracy: 1e4)
        XCTAssertEqual(Timestamp(milliseconds: 1500).seconds(until: Timestamp(milliseconds: 0)), -1.5)
    }

    func testRandomTemplatesRoundTripThroughCanonicalExport() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<100 {
            let json = randomTemplate(&rng)
            let t = try XCTUnwrap(TemplateCompiler.compile(json, tools: [:]).template, "\(json)")
            let again = try XCTUnwrap(TemplateCompiler.compile(TemplateEncoder.canonicalJSON(t), tools: [:]).template)
            XCTAssertEqual(again, t)
        }
    }

    private func randomJSON(_ rng: inout SplitMix64, depth: Int) -> JSON {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &rng))
        case 3: return .double(Double.random(in: -1e12...1e12, using: &rng))
        case 4: return .string(randomString(&rng))
        case 5: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomJSON(&rng, depth: depth + 1) })
        default:
            var o = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &rng) { o[randomString(&rng)] = randomJSON(&rng, depth: depth + 1) }
            return .object(o)
        }
    }

    private func randomString(_ rng: inout SplitMix64) -> String {
        let alphabet = Array("abcXYZ019 \"\\/\n\t\u{0}\u{1f}é€😀→")
        return String((0..<Int.random(in: 0...8, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    private func randomTemplate(_ rng: inout SplitMix64) -> JSON {
        let n = Int.random(in: 1...12, using: &rng)
        var nodes: [JSON] = []
        var edges: [JSON] = []
        for i in 0..<n {
            var node: JSONObject = ["id": .string("n\(i)"), "kind": .string("K\(i % 3)"), "outputs": ["out": "ImageRef"]]
            if i > 0, Bool.random(using: &rng) {
                node["inputs"] = ["in": "ImageRef"]
                edges.append(["from": [.string("n\(Int.random(in: 0..<i, using: &rng))"), "out"], "to": [.string("n\(i)"), "in"]])
            }
            if Bool.random(using: &rng) { node["params"] = ["steps": .int(Int64(i)), "cfg": .double(Double(i) / 2)] }
            if Int.random(in: 0..<4, using: &rng) == 0 { node["await"] = ["type": "confirm_params", "expiresIn": "PT1H"] }
            if Bool.random(using: &rng) { node["resources"] = ["class": Bool.random(using: &rng) ? "remote" : "local"] }
            if Bool.random(using: &rng) { node["x-note"] = .string("node \(i)") }
            nodes.append(.object(node))
        }
        return ["schema": "app.workflow/v2", "name": "random", "nodes": .array(nodes), "edges": .array(edges),
                "options": ["errorPolicy": "isolate-node"]]
    }
}

/// Step 1: legacy and future values decode instead of failing.
final class EnumBackcompatTests: XCTestCase {
    func testLegacyNodeStateNamesDecodeToTodaysStates() {
        let cases: [(JSON, NodeState)] = [
            ("queued", .queuedRemote), ("running", .runningRemote), ("done", .succeeded), ("error", .failed),
            ("awaiting", .awaitingUser), ("canceled", .cancelled), (["failed": "oops"], .failed), ("someFutureState", .blocked),
            ("downloading", .downloading), ("skipped", .skipped),
        ]
        for (raw, expected) in cases { XCTAssertEqual(NodeState(persisted: raw), expected, "\(raw)") }
    }

    func testLegacyRunStatusesDecodeAndUnknownNeverReadsAsSuccess() {
        XCTAssertEqual(RunStatus(persisted: "completed"), .succeeded)
        XCTAssertEqual(RunStatus(persisted: "canceled"), .cancelled)
        XCTAssertEqual(RunStatus(persisted: "pending"), .queued)
        XCTAssertEqual(RunStatus(persisted: "whatever"), .failed)
    }
}

/// Step 2: legal and illegal transitions of the node state machine.
final class StateMachineTests: XCTestCase {
    func testTheLifecycleOfThePlanIsLegal() {
        let path: [NodeState] = [.blocked, .ready, .queuedRemote, .runningRemote, .downloading, .succeeded]
        for (a, b) in zip(path, path.dropFirst()) { XCTAssertTrue(NodeStateMachine.canTransition(from: a, to: b), "\(a)→\(b)") }
        XCTAssertTrue(NodeStateMachine.canTransition(from: .ready, to: .awaitingUser))
        XCTAssertTrue(NodeStateMachine.canTransition(from: .ready, to: .runningLocal))
        XCTAssertTrue(NodeStateMachine.canTransition(from: .runningLocal, to: .failed))
    }

    func testIllegalTransitionsAreRefused() {
        let illegal: [(NodeState, NodeState)] = [(.succeeded, .runningRemote), (.blocked, .runningLocal), (.failed, .downloading),
                                                 (.awaitingUser, .queuedRemote), (.runningLocal, .ready), (.downloading, .runningRemote),
                                                 (.cancelled, .succeeded)]
        for (a, b) in illegal { XCTAssertFalse(NodeStateMachine.canTransition(from: a, to: b), "\(a)→\(b)") }
    }

    /// The check reads a bit table built from `transitions`: it must say what the table says
    /// for every pair, a state moving to itself included.
    func testTheCheckAgreesWithTheTableForEveryPairOfStates() {
        XCTAssertEqual(NodeState.allCases.map(\.position), Array(NodeState.allCases.indices))
        for from in NodeState.allCases {
            for to in NodeState.allCases {
                XCTAssertEqual(NodeStateMachine.canTransition(from: from, to: to),
                               from == to || NodeStateMachine.transitions[from]!.contains(to), "\(from)→\(to)")
            }
        }
    }

    func testEveryStateHasAnEntryAndInteractiveNodesNeverEnqueueAJob() {
        for s in NodeState.allCases { XCTAssertNotNil(NodeStateMachine.transitions[s], "\(s)") }
        XCTAssertFalse(NodeStateMachine.canTransition(from: .awaitingUser, to: .runningLocal))
    }

    /// DESIGN §5's groups: a node is over (succeeded, failed, cancelled, skipped), running (a job,
    /// a local run or a download under way), or waiting for a person; in flight is running or
    /// waiting for a person, and nothing over is in flight. Whatever is in flight can be cancelled.
    func testNodeStatesGroupIntoOverRunningAndInFlightAsTheDesignSays() {
        let over: Set<NodeState> = [.succeeded, .failed, .cancelled, .skipped]
        let running: Set<NodeState> = [.queuedRemote, .runningRemote, .runningLocal, .downloading]
        for s in NodeState.allCases {
            XCTAssertEqual(s.isTerminal, over.contains(s), "\(s)")
            XCTAssertEqual(s.isRunning, running.contains(s), "\(s)")
            XCTAssertEqual(s.isInFlight, running.contains(s) || s == .awaitingUser, "\(s)")
            XCTAssertFalse(s.isTerminal && s.isInFlight, "\(s)")
            if s.isInFlight { XCTAssertTrue(NodeStateMachine.canTransition(from: s, to: .cancelled), "\(s)→cancelled") }
        }
    }
}

/// An asset's fields live in one shared object: copies stay values, and equality reads every field.
final class AssetValueTests: XCTestCase {
    private let base = Asset(assetId: "as-1", type: "ImageRef", uri: "file:///a.png", bytes: 10, hash: "h", meta: ["w": 1],
                             createdAt: Timestamp(milliseconds: 5),
                             provenance: Provenance(workflowId: "wf-1", nodeId: "n", runId: "run-1", port: "image"))

    func testAWriteToACopyOfAnAssetLeavesTheOriginalAsItWas() {
        var copy = base
        copy.pinned = true
        copy.meta["w"] = 2
        XCTAssertFalse(base.pinned)
        XCTAssertEqual(base.meta["w"], 1)
        XCTAssertTrue(copy.pinned)
        XCTAssertNotEqual(copy, base)
        var again = copy
        again.pinned = false
        again.meta["w"] = 1
        XCTAssertEqual(again, base, "equal field by field, though two objects")
    }

    func testAssetsDifferingInAnyOneFieldAreNotEqual() {
        let writes: [(inout Asset) -> Void] = [
            { $0.assetId = "as-2" }, { $0.type = "MaskRef" }, { $0.uri = "file:///b.png" }, { $0.bytes = 11 },
            { $0.hash = nil }, { $0.meta = [:] }, { $0.createdAt = Timestamp(milliseconds: 6) },
            { $0.provenance = nil }, { $0.pinned = true }, { $0.orphanedAt = Timestamp(milliseconds: 7) },
        ]
        // Every stored field has its write above: a field added later without one fails here.
        XCTAssertEqual(Mirror(reflecting: base.storage).children.count, writes.count)
        for (i, write) in writes.enumerated() {
            var other = base
            write(&other)
            XCTAssertNotEqual(other, base, "field \(i)")
        }
    }
}
