import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import WorkflowStore
import XCTest

/// The journal's file on its own: records, a failed append, and two engines taking it over.
final class JournalFileTests: XCTestCase {
    private var store = ""

    override func setUp() {
        store = NSTemporaryDirectory() + "wf-journal-file-\(UUID().uuidString).sqlite"
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: JournalFile.path(forStore: store))
    }

    private func size() throws -> Int {
        try FileManager.default.attributesOfItem(atPath: JournalFile.path(forStore: store))[.size] as! Int
    }

    /// An append the disk cannot take (here the process's file size limit, as a full disk
    /// would: the write is cut short) fails and leaves the file as it was: the same entry number goes in whole on the
    /// next try, and the file reads back every entry once.
    func testAFailedAppendLeavesTheFileAsItWas() throws {
        let journal = try JournalFile(storePath: store, durability: .normal)
        try journal.recover(storeId: "id-1")
        try journal.begin()
        try journal.append(seq: 1, body: Array(repeating: 1, count: 100), syncedThrough: 0)
        let before = try size()
        try withFileSizeLimit(before + 50) {
            XCTAssertThrowsError(try journal.append(seq: 2, body: Array(repeating: 2, count: 1_000), syncedThrough: 0)) {
                // A short write sets no errno: the message says what was written, not a stale error.
                XCTAssertEqual(($0 as? StoreError)?.code, "storeWriteFailed")
                XCTAssertTrue("\($0)".contains(": 50 of 1024 bytes written (is the disk full?)"), "\($0)")
            }
        }
        XCTAssertEqual(try size(), before, "what the failed append wrote is cut off")
        try journal.append(seq: 2, body: Array(repeating: 2, count: 1_000), syncedThrough: 0)
        journal.close()
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: store), [1, 2])
    }

    /// Entry numbers follow each other by one: an append out of sequence is refused, not
    /// written where reading would stop.
    func testEntryNumbersFollowEachOther() throws {
        let journal = try JournalFile(storePath: store, durability: .normal)
        try journal.recover(storeId: "id-1")
        try journal.begin()
        try journal.append(seq: 5, body: [1], syncedThrough: 0)
        try journal.append(seq: 6, body: [2], syncedThrough: 0)
        journal.close()
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: store), [5, 6])
    }

    /// A journal closes emptied only while it still owns the file: the entries of the engine that
    /// took the journal over since stay.
    func testClosingAJournalAnotherEngineTookOverLeavesThatEnginesEntries() throws {
        let first = try JournalFile(storePath: store, durability: .normal)
        try first.recover(storeId: "id-1")
        try first.begin()
        try first.append(seq: 1, body: [1], syncedThrough: 0)
        let second = try JournalFile(storePath: store, durability: .normal)
        try second.recover(storeId: "id-1")
        try second.begin()
        try second.append(seq: 1, body: [2], syncedThrough: 0)
        first.close(syncedThrough: 1)  // all of its entries folded: it would empty a file of its own
        XCTAssertEqual(JournalFile.entryNumbers(ofStore: store), [1], "the second engine's entry is kept")
        second.close()
    }

    /// Two engines opening a store that has no journal yet at the same moment take it over one
    /// after the other; the one that took it last owns it, the other's appends are refused.
    func testTwoEnginesOpeningAtOnceEachGetAJournalAndTheLastOneOwnsIt() throws {
        let path = store
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: JournalFile.path(forStore: path))
            let opened = atOnce(2) { () throws -> JournalFile in
                let j = try JournalFile(storePath: path, durability: .normal)
                try j.recover(storeId: "id-1")
                try j.begin()
                return j
            }
            let journals = opened.compactMap { try? $0.get() }
            let failures = opened.filter { (try? $0.get()) == nil }
            XCTAssertTrue(failures.isEmpty, "\(failures)")
            let accepted = journals.filter { (try? $0.append(seq: 1, body: [1], syncedThrough: 0)) != nil }
            XCTAssertEqual(accepted.count, 1, "exactly one owns the journal")
            for j in journals { j.close() }
        }
    }
}
