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

    public init(assetId: String, variant: CacheVariant, bytes: Int64, lastUsedAt: Timestamp, pinned: Bool = false) {
        self.assetId = assetId
        self.variant = variant
        self.bytes = bytes
        self.lastUsedAt = lastUsedAt
        self.pinned = pinned
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

    public init(thumbnailCapBytes: Int64 = 209_715_200, previewDays: Double = 7) {
        self.thumbnailCapBytes = thumbnailCapBytes
        self.previewLifetimeSeconds = previewDays * 86_400
    }

    /// Thumbnails to evict so that all thumbnails fit the cap: least recently used first, pinned
    /// never (if pinned thumbnails alone exceed the cap, every unpinned one goes).
    public func thumbnailEvictions(_ entries: [CacheEntry]) -> [CacheEntry] {
        let thumbnails = entries.filter { $0.variant == .thumbnail }
        var total = thumbnails.reduce(Int64(0)) { $0 + $1.bytes }
        guard total > thumbnailCapBytes else { return [] }
        var evict: [CacheEntry] = []
        let candidates = thumbnails.filter { !$0.pinned }.sorted {
            $0.lastUsedAt != $1.lastUsedAt ? $0.lastUsedAt < $1.lastUsedAt : $0.assetId < $1.assetId
        }
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
            if e.variant == .thumbnail { thumbs += e.bytes } else { previews += e.bytes }
            if e.pinned {
                pinned += e.bytes
                pinnedAssets.insert(e.assetId)
            }
        }
        return ["thumbnails": .int(thumbs), "previews": .int(previews), "pinned": .int(pinned),
                "total": .int(thumbs + previews), "entries": JSON(entries.count), "pinnedAssets": JSON(pinnedAssets.count)]
    }
}
