import WorkflowCore
import XCTest

/// DESIGN §5 Cache ("thumbnails LRU") and OPS §19 (LRU ties): the order thumbnails are evicted
/// in is by last use first; the use order only breaks ties between entries used at the same
/// instant, and the key breaks ties between entries that have no use order (entries kept by a
/// store from before use orders were recorded read back with use order 0).
final class CachePolicyOrderTests: XCTestCase {
    let t0 = Timestamp(milliseconds: 1_767_225_600_000)  // 2026-01-01T00:00:00.000Z

    func thumb(_ id: String, _ bytes: Int64, at t: Timestamp, order: Int64 = 0, pinned: Bool = false) -> CacheEntry {
        CacheEntry(assetId: id, variant: .thumbnail, bytes: bytes, lastUsedAt: t, pinned: pinned, useOrder: order)
    }

    func testEntriesWithoutUseOrdersAreEvictedByLastUseThenByKey() {
        let policy = CachePolicy(thumbnailCapBytes: 100)
        // All from before use orders: as-1 was used last, as-3 first; as-2 and as-4 at the same instant.
        let entries = [thumb("as-1", 50, at: t0.adding(seconds: 30)), thumb("as-2", 50, at: t0.adding(seconds: 10)),
                       thumb("as-3", 50, at: t0), thumb("as-4", 50, at: t0.adding(seconds: 10))]
        XCTAssertEqual(policy.thumbnailEvictions(entries).map(\.assetId), ["as-3", "as-2"])
        XCTAssertEqual(entries.sorted(by: CachePolicy.leastRecentlyUsedFirst).map(\.assetId), ["as-3", "as-2", "as-4", "as-1"])
    }

    func testTheLastUseComesBeforeTheUseOrder() {
        // The use order only orders entries used at the same instant: an entry last used earlier
        // goes first even with a later use number (a system clock set back between two uses).
        let earlierButNumberedLater = thumb("as-1", 60, at: t0, order: 9)
        let laterButNumberedEarlier = thumb("as-2", 60, at: t0.adding(seconds: 60), order: 2)
        XCTAssertTrue(CachePolicy.leastRecentlyUsedFirst(earlierButNumberedLater, laterButNumberedEarlier))
        XCTAssertFalse(CachePolicy.leastRecentlyUsedFirst(laterButNumberedEarlier, earlierButNumberedLater))
        let policy = CachePolicy(thumbnailCapBytes: 100)
        XCTAssertEqual(policy.thumbnailEvictions([laterButNumberedEarlier, earlierButNumberedLater]).map(\.assetId), ["as-1"])
    }

    func testSameInstantGoesByUseOrderWhateverTheKeys() {
        let a = thumb("as-9", 60, at: t0, order: 1)
        let b = thumb("as-10", 60, at: t0, order: 2)
        XCTAssertEqual([b, a].sorted(by: CachePolicy.leastRecentlyUsedFirst).map(\.assetId), ["as-9", "as-10"])
    }
}
