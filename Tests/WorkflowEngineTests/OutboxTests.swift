import WorkflowCore
@testable import WorkflowEngine
import XCTest

/// The outbox's bookkeeping in memory: what the next `effects.take` acknowledges, what it hands
/// out, and what a reopen delivers again.
final class OutboxTests: XCTestCase {
    private func evict(_ seq: Int64, taken: Bool = false) -> Effect {
        Effect(seq: seq, id: "e-\(seq)", type: EffectType.cacheEvict, body: ["assetId": .string("as-\(seq)"), "variant": "preview"],
               answerKey: AnswerKey.evict("as-\(seq)", "preview"), taken: taken)
    }

    private func poll(_ seq: Int64, taken: Bool = false) -> Effect {
        Effect(seq: seq, id: "e-\(seq)", type: EffectType.remotePoll, body: ["jobId": .string("job-\(seq)")],
               answerKey: AnswerKey.poll("run-\(seq)"), taken: taken)
    }

    func testATakenEffectNothingAnswersThatIsRemovedIsNoLongerLeftForTheNextTakeToAcknowledge() {
        // A cache.record drops a taken cache.evict of the same file: the next take must not
        // delete its row a second time.
        var outbox = Outbox(effects: [evict(1, taken: true), evict(2, taken: true)])
        XCTAssertEqual(outbox.takenUnanswerable, [1, 2])
        outbox.remove(1)
        XCTAssertEqual(outbox.takenUnanswerable, [2])
        XCTAssertNil(outbox.bySeq[1])
        XCTAssertTrue(outbox.byAnswerKey[AnswerKey.evict("as-1", "preview")] == nil)
    }

    /// Effects sharing an answer key (a cancel sent again) are found, in order, until the last
    /// of them leaves; a key with one effect and a key with several are kept apart.
    func testEffectsSharingAnAnswerKeyAreFoundInOrderUntilTheLastOfThemLeaves() {
        func cancel(_ seq: Int64) -> Effect {
            Effect(seq: seq, id: "e-\(seq)", type: EffectType.remoteCancel, body: ["jobId": "job-1"],
                   answerKey: AnswerKey.cancel("job-1"))
        }
        var outbox = Outbox(effects: [cancel(1), poll(2), cancel(3), cancel(4)])
        let key = AnswerKey.cancel("job-1")
        XCTAssertEqual(outbox.seqs(answerKey: key), [1, 3, 4])
        XCTAssertEqual(outbox.effects(answerKey: key).map(\.seq), [1, 3, 4])
        XCTAssertEqual(outbox.seqs(answerKey: AnswerKey.poll("run-2")), [2])
        outbox.remove(3)
        XCTAssertEqual(outbox.seqs(answerKey: key), [1, 4])
        outbox.remove(1)
        XCTAssertEqual(outbox.byAnswerKey[key], .one(4))
        outbox.insert(cancel(5))
        XCTAssertEqual(outbox.effects(answerKey: key).map(\.seq), [4, 5])
        outbox.remove(4)
        outbox.remove(5)
        XCTAssertNil(outbox.byAnswerKey[key])
        XCTAssertEqual(outbox.effects(answerKey: key), [])
        outbox.remove(2)
        XCTAssertTrue(outbox.byAnswerKey.isEmpty)
        XCTAssertEqual(outbox.pendingCount, 0)
    }

    func testTakingAnEffectNothingAnswersLeavesItForTheNextTakeButAnAnsweredOneWaitsForItsAnswer() {
        var outbox = Outbox(effects: [evict(1), poll(2)])
        XCTAssertEqual(outbox.pendingCount, 2)
        outbox.markTaken(1)
        outbox.markTaken(2)
        XCTAssertEqual(outbox.pendingCount, 0)
        XCTAssertEqual(outbox.takenUnanswerable, [1])
        XCTAssertEqual(outbox.pending(limit: 10, excluded: []), [])
        outbox.markTaken(2)  // twice changes nothing
        XCTAssertEqual(outbox.pendingCount, 0)
    }

    func testPendingEffectsComeOutInOutboxOrderWhateverTheOrderTheyWereInserted() {
        var outbox = Outbox()
        outbox.insert(poll(5))
        outbox.insert(poll(3))
        outbox.insert(evict(4))
        XCTAssertEqual(outbox.pending(limit: 10, excluded: []).map(\.seq), [3, 4, 5])
        XCTAssertEqual(outbox.pending(limit: 10, excluded: [4]).map(\.seq), [3, 5])
        XCTAssertEqual(outbox.pending(limit: 10, excluded: [], holdingRemote: true).map(\.seq), [4])
        XCTAssertEqual(outbox.pendingNeedingNetwork, 2)
    }

    func testAReopenDeliversEveryTakenEffectAgainAndForgetsWhatTheLastTakeHandedOut() {
        var outbox = Outbox(effects: [evict(1, taken: true), poll(2, taken: true), poll(3)])
        XCTAssertEqual(outbox.pendingCount, 1)
        outbox.redeliverTaken()
        XCTAssertEqual(outbox.takenUnanswerable, [])
        XCTAssertEqual(outbox.pendingCount, 3)
        XCTAssertEqual(outbox.pending(limit: 10, excluded: []).map(\.seq), [1, 2, 3])
    }
}
