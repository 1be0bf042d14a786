/// The two kinds of cached file an asset can have.
public enum CacheVariant: String, Sendable, Equatable, CaseIterable {
    case thumbnail, preview
}

/// A cached file of an asset and when it was last used.
public struct CacheEntry: Sendable, Equatable {
    public var assetId: String
    public var variant: CacheVariant
    public var bytes: Int64
    public var lastUsedAt: Timestamp
    /// The asset is pinned ("Keep offline"): never evicted.
    public var pinned: Bool
    /// When it was last used relative to the other entries: every record or touch takes the next
    /// number of a persisted counter. Entries last used at the same instant are in use order by
    /// it; it is persisted with the entry.
    public var useOrder: Int64

    public init(assetId: String, variant: CacheVariant, bytes: Int64, lastUsedAt: Timestamp, pinned: Bool = false,
                useOrder: Int64 = 0) {
        self.assetId = assetId
        self.variant = variant
        self.bytes = bytes
        self.lastUsedAt = lastUsedAt
        self.pinned = pinned
        self.useOrder = useOrder
    }

    public var key: String { "\(variant.rawValue):\(assetId)" }

    public var json: JSON {
        ["assetId": .string(assetId), "variant": .string(variant.rawValue), "bytes": .int(bytes),
         "lastUsedAt": JSON(lastUsedAt), "pinned": .bool(pinned)]
    }
}

/// The storage policy for cached files (DESIGN §5 Cache): thumbnails are an LRU bounded in bytes,
/// previews are purged a number of days after their last use, and pinned assets are never
/// evicted.
public struct CachePolicy: Sendable {
    public var thumbnailCapBytes: Int64
    public var previewLifetimeSeconds: Double

    /// The largest size a cached file may be recorded with: 2^53 − 1 bytes (8 PiB), the
    /// largest integer every JSON host reads exactly.
    public static let maxEntryBytes: Int64 = (1 << 53) - 1

    /// A sum of sizes that never traps: it stops at `Int64.max`, which only absurd sizes reach
    /// (more than a thousand files of petabytes each).
    public static func totalBytes<S: Sequence>(_ entries: S) -> Int64 where S.Element == CacheEntry {
        entries.reduce(Int64(0)) { add($0, $1.bytes) }
    }

    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    public init(thumbnailCapBytes: Int64 = 209_715_200, previewDays: Double = 7) {
        self.thumbnailCapBytes = thumbnailCapBytes
        self.previewLifetimeSeconds = previewDays * 86_400
    }

    /// Least recently used first: by last use, then, for entries used at the same instant, in
    /// the order they were used (so the entry just recorded or touched is the last to go), then
    /// by key (entries from before use orders were kept).
    public static func leastRecentlyUsedFirst(_ a: CacheEntry, _ b: CacheEntry) -> Bool {
        if a.lastUsedAt != b.lastUsedAt { return a.lastUsedAt < b.lastUsedAt }
        if a.useOrder != b.useOrder { return a.useOrder < b.useOrder }
        return a.key < b.key
    }

    /// Thumbnails to evict so that all thumbnails fit the cap: least recently used first
    /// (``leastRecentlyUsedFirst(_:_:)``), pinned never (if pinned thumbnails alone exceed the
    /// cap, every unpinned one goes).
    public func thumbnailEvictions(_ entries: [CacheEntry]) -> [CacheEntry] {
        let thumbnails = entries.filter { $0.variant == .thumbnail }
        var total = CachePolicy.totalBytes(thumbnails)
        guard total > thumbnailCapBytes else { return [] }
        var evict: [CacheEntry] = []
        let candidates = thumbnails.filter { !$0.pinned }.sorted(by: CachePolicy.leastRecentlyUsedFirst)
        for e in candidates where total > thumbnailCapBytes {
            evict.append(e)
            total -= e.bytes
        }
        return evict
    }

    /// When an unpinned preview is purged (nil for thumbnails and pinned entries).
    public func purgeTime(_ e: CacheEntry) -> Timestamp? {
        guard e.variant == .preview, !e.pinned else { return nil }
        return e.lastUsedAt.adding(seconds: previewLifetimeSeconds)
    }

    /// Whether an unpinned preview's purge time has come by `now`.
    public func isExpired(_ e: CacheEntry, at now: Timestamp) -> Bool {
        purgeTime(e).map { $0 <= now } ?? false
    }

    /// "Free up space": every unpinned preview.
    public func freeUpSpace(_ entries: [CacheEntry]) -> [CacheEntry] {
        entries.filter { $0.variant == .preview && !$0.pinned }.sorted { $0.key < $1.key }
    }

    /// `{thumbnails, previews, pinned, total}` in bytes, and entry counts.
    public static func usage(_ entries: [CacheEntry]) -> JSON {
        var thumbs: Int64 = 0
        var previews: Int64 = 0
        var pinned: Int64 = 0
        var pinnedAssets = Set<String>()
        for e in entries {
            if e.variant == .thumbnail { thumbs = add(thumbs, e.bytes) } else { previews = add(previews, e.bytes) }
            if e.pinned {
                pinned = add(pinned, e.bytes)
                pinnedAssets.insert(e.assetId)
            }
        }
        return ["thumbnails": .int(thumbs), "previews": .int(previews), "pinned": .int(pinned),
                "total": .int(add(thumbs, previews)), "entries": JSON(entries.count), "pinnedAssets": JSON(pinnedAssets.count)]
    }
}
