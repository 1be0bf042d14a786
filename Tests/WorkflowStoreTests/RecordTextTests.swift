import Foundation
import WorkflowCore
@testable import WorkflowStore
import XCTest

/// The records written directly are byte for byte the JSON encoding the store always wrote.
final class RecordTextTests: XCTestCase {
    func testRunBytesMatchTheJSONEncoding() {
        var rng = SplitMix64(seed: 5)
        let strings = ["", "plain", "q\"uote", "back\\slash", "line\nbreak\r\ttab", "ctl\u{01}\u{1F}\u{08}\u{0C}",
                       "ünïcödé ✓", "emoji 🎉", "/slash/"]
        func pick() -> String { strings[Int(rng.next() % UInt64(strings.count))] }
        func maybe() -> Bool { rng.next() % 2 == 0 }
        for i in 0..<500 {
            var r = Run(runId: "run-\(i)", nodeId: "n\(i % 7)", number: Int(rng.next() % 5) + 1,
                        mode: RunMode.allCases[i % RunMode.allCases.count], kind: pick(),
                        trigger: RunTrigger.allCases[i % RunTrigger.allCases.count],
                        status: RunStatus.allCases[i % RunStatus.allCases.count],
                        params: maybe() ? [:] : [pick(): .string(pick()), "n": .double(0.1 * Double(i)), "k": 3,
                                                 "nested": ["a": [1, true, .null]]],
                        inputs: maybe() ? [:] : [pick(): pick(), "b": "as-\(i)", "a": "as-2"],
                        idempotencyKey: pick(), createdAt: Timestamp(milliseconds: Int64(i) * 1_000 - 500))
            if maybe() { r.jobId = "job-\(pick())" }
            r.submitAttempts = Int(rng.next() % 3)
            r.submitFailures = Int(rng.next() % 3)
            if maybe() { r.nextAttemptAt = Timestamp(milliseconds: Int64(rng.next() % 1_000_000)) }
            if maybe() { r.nextPollAt = Timestamp(milliseconds: Int64(rng.next() % 1_000_000)) }
            r.pollCount = Int(rng.next() % 3)
            r.pollFailures = Int(rng.next() % 3)
            if maybe() {
                let values: [Double] = [0, 1, 0.5, 0.01, 0.07, 1e-05, 0.3333333333333333, Double(i % 100) / 100]
                r.progress = values[Int(rng.next() % UInt64(values.count))]
            }
            if maybe() { r.estimatedEndAt = Timestamp(milliseconds: Int64(rng.next() % 1_000_000)) }
            if maybe() { r.logTail = (0..<Int(rng.next() % 7)).map { _ in pick() } }
            if maybe() { r.outputs = [pick(): pick(), "z": "as-1"] }
            if maybe() { r.pendingDownloads = ["image": "https://example.invalid/\(pick())"] }
            r.downloadFailures = Int(rng.next() % 2)
            if maybe() { r.nextDownloadAt = Timestamp(milliseconds: Int64(rng.next() % 1_000)) }
            r.cancelFailures = Int(rng.next() % 3)
            if maybe() { r.nextCancelAt = Timestamp(milliseconds: Int64(rng.next() % 1_000_000)) }
            r.holdsSlot = maybe()
            if maybe() { r.startedAt = Timestamp(milliseconds: 7) }
            if maybe() { r.finishedAt = Timestamp(milliseconds: 9) }
            if maybe() {
                r.error = NodeError(code: pick(), message: pick(), hint: maybe() ? pick() : nil,
                                    details: maybe() ? [:] : ["httpStatus": 503, "why": .string(pick())])
            }
            XCTAssertEqual(RecordCoding.runBytes(r), JSONWriter.bytes(RecordCoding.encode(r)), "run \(i)")
        }
    }

    /// A run's later writes reuse the text of the members that never change (kept with the run
    /// from its first write until a write of it finished): each is still its JSON encoding,
    /// whatever else changed in between, in copies of the run too.
    func testLaterWritesOfARunReuseItsUnchangingTextAndStillMatchTheJSONEncoding() {
        var rng = SplitMix64(seed: 8)
        for i in 0..<200 {
            var r = Run(runId: "run-\(i)", nodeId: "n", number: i % 3 + 1, mode: i % 2 == 0 ? .local : .remote,
                        kind: "K\"\(i)", trigger: .auto, status: .queued,
                        params: i % 4 == 0 ? [:] : ["steps": .int(Int64(i)), "cfg": 4.5], inputs: ["b": "as-\(i)", "a": "as-1"],
                        idempotencyKey: "wf-1/n/run-\(i)", createdAt: Timestamp(milliseconds: Int64(i) * 1_000))
            XCTAssertNil(r.textCache.bytes)
            XCTAssertEqual(RecordCoding.runBytes(r), JSONWriter.bytes(RecordCoding.encode(r)), "run \(i), first write")
            XCTAssertNotNil(r.textCache.bytes, "kept after the first write of a run under way")
            let copy = r
            for (k, status) in [RunStatus.running, .submitted, .downloading].enumerated() where rng.next() % 2 == 0 {
                r.status = status
                r.startedAt = Timestamp(milliseconds: Int64(k))
                r.progress = Double(k) / 4
                r.jobId = "job-\(i)"
                XCTAssertEqual(RecordCoding.runBytes(r), JSONWriter.bytes(RecordCoding.encode(r)), "run \(i), \(status)")
            }
            XCTAssertEqual(RecordCoding.runBytes(copy), JSONWriter.bytes(RecordCoding.encode(copy)), "run \(i), a copy")
            r.finish(.succeeded, at: Timestamp(milliseconds: 99))
            XCTAssertEqual(RecordCoding.runBytes(r), JSONWriter.bytes(RecordCoding.encode(r)), "run \(i), finished")
            XCTAssertNil(r.textCache.bytes, "let go once written finished")
            XCTAssertEqual(RecordCoding.runBytes(r), JSONWriter.bytes(RecordCoding.encode(r)), "run \(i), finished again")
        }
    }

    /// Copies of one run share its kept text, and a run is `Sendable`: stores on several threads
    /// writing copies of the same runs at once, some of them finished, each get its JSON encoding
    /// (the instrumented stage runs this under ThreadSanitizer, which flags an unguarded cache).
    func testCopiesOfARunWrittenOnSeveralThreadsAtOnceEachMatchTheJSONEncoding() {
        let runs = (0..<64).map { i in
            Run(runId: "run-\(i)", nodeId: "n", number: 1, mode: .local, kind: "K", trigger: .auto, status: .queued,
                params: ["i": .int(Int64(i))], inputs: ["a": "as-\(i)"], idempotencyKey: "wf/n/run-\(i)",
                createdAt: Timestamp(milliseconds: Int64(i)))
        }
        let lock = NSLock()
        nonisolated(unsafe) var mismatches = 0
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for round in 0..<20 {
                for var r in runs {
                    if (t + round) % 3 == 0 { r.status = .running }
                    if (t + round) % 5 == 0 { r.finish(.succeeded, at: Timestamp(milliseconds: 99)) }
                    if RecordCoding.runBytes(r) != JSONWriter.bytes(RecordCoding.encode(r)) {
                        lock.lock()
                        mismatches += 1
                        lock.unlock()
                    }
                }
            }
        }
        XCTAssertEqual(mismatches, 0)
    }

    func testNodeBytesMatchTheJSONEncoding() {
        var rng = SplitMix64(seed: 6)
        let strings = ["", "plain", "q\"uote", "back\\slash", "line\nbreak", "ctl\u{01}\u{1F}", "ünïcödé ✓", "emoji 🎉"]
        func pick() -> String { strings[Int(rng.next() % UInt64(strings.count))] }
        func maybe() -> Bool { rng.next() % 2 == 0 }
        func ports() -> [String: String] {
            let n = Int(rng.next() % 4)
            var m: [String: String] = [:]
            for k in 0..<n { m["\(pick())\(k)"] = "as-\(pick())" }
            return m
        }
        for i in 0..<500 {
            var n = NodeInstance(nodeId: "n\(i)", state: NodeState.allCases[i % NodeState.allCases.count],
                                 updatedAt: Timestamp(milliseconds: Int64(i) * 997 - 300))
            if maybe() {
                n.blockedReason = BlockedReason(code: pick(), message: pick(),
                                                details: maybe() ? [:] : ["ports": [.string(pick()), "b"], "n": 2])
            }
            if maybe() { n.params = [pick(): .string(pick()), "k": 3, "nested": ["a": [1, true, .null]], "d": 0.25] }
            n.bindings = ports()
            n.inputSelections = ports()
            n.outputs = ports()
            if maybe() { n.currentRunId = "run-\(pick())" }
            if maybe() {
                // The engine's interruption and a host's failure coded `interrupted` alike.
                n.lastError = NodeError(code: maybe() ? "interrupted" : pick(), message: pick(), hint: maybe() ? pick() : nil,
                                        details: maybe() ? [:] : ["httpStatus": 503], isInterruption: maybe())
            }
            n.attempts = Int(rng.next() % 4)
            XCTAssertEqual(RecordCoding.nodeBytes(n), JSONWriter.bytes(RecordCoding.encode(n)), "node \(i)")
        }
    }

    func testAssetBytesMatchTheJSONEncoding() {
        var rng = SplitMix64(seed: 7)
        let strings = ["", "plain", "q\"uote", "mem://a/b", "line\nbreak", "ünïcödé ✓", "emoji 🎉"]
        func pick() -> String { strings[Int(rng.next() % UInt64(strings.count))] }
        func maybe() -> Bool { rng.next() % 2 == 0 }
        for i in 0..<300 {
            var a = Asset(assetId: "as-\(i)", type: "TextRef", uri: pick(), createdAt: Timestamp(milliseconds: Int64(i)))
            if maybe() { a.bytes = Int64(rng.next() % 1_000_000) }
            if maybe() { a.hash = "sha256:\(pick())" }
            if maybe() { a.meta = [pick(): .string(pick()), "width": 512, "nested": ["x": [1, .null, false]]] }
            if maybe() { a.provenance = Provenance(workflowId: "wf-\(pick())", nodeId: pick(), runId: "run-\(i)", port: pick()) }
            XCTAssertEqual(RecordCoding.assetBytes(a), JSONWriter.bytes(RecordCoding.encode(a)), "asset \(i)")
        }
    }

    /// The workflow row's data, written from four texts made once, is its JSON encoding.
    func testWorkflowDataBytesMatchTheJSONEncoding() {
        for autoRun in [false, true] {
            for paused in [false, true] {
                var w = Workflow(workflowId: "wf-1", seq: 1, templateId: "tpl-1", title: "t",
                                 createdAt: Timestamp(milliseconds: 0), nodes: [])
                w.autoRun = autoRun
                w.pollingPaused = paused
                XCTAssertEqual(RecordCoding.workflowDataBytes(w), JSONWriter.bytes(RecordCoding.encodeWorkflowData(w)))
            }
        }
    }
}
