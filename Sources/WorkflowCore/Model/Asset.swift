/// Who made an asset: the workflow, node, run and output port (DESIGN §6).
public struct Provenance: Sendable, Equatable {
    public var workflowId: String
    public var nodeId: String
    public var runId: String
    public var port: String

    public init(workflowId: String, nodeId: String, runId: String, port: String) {
        self.workflowId = workflowId
        self.nodeId = nodeId
        self.runId = runId
        self.port = port
    }

    public var json: JSON {
        // Members appended in place (a dictionary literal builds an array of pairs first): every
        // effect that carries an asset carries its provenance.
        var o = JSONObject(minimumCapacity: 4)
        o.append(uniqueKey: "workflowId", .string(workflowId))
        o.append(uniqueKey: "nodeId", .string(nodeId))
        o.append(uniqueKey: "runId", .string(runId))
        o.append(uniqueKey: "port", .string(port))
        return .object(o)
    }
}

/// A produced or imported file-like value: an image, a mask, a text. The engine assigns the id and
/// stamps the provenance; the host owns the bytes at `uri`.
///
/// Its fields live in one shared object, copied on the first write to a copy (as
/// ``Workflow``'s): an asset is read and handed along many times per call (gating reads its
/// type, a run's start its whole record, the commit and the engine's tables keep it), and each
/// copy of the plain struct retained every one of its strings.
public struct Asset: Sendable, Equatable {
    @usableFromInline
    final class Storage: @unchecked Sendable {  // written only while uniquely referenced
        @usableFromInline @exclusivity(unchecked) var assetId: String
        @usableFromInline @exclusivity(unchecked) var type: String
        @usableFromInline @exclusivity(unchecked) var uri: String
        @usableFromInline @exclusivity(unchecked) var bytes: Int64?
        @usableFromInline @exclusivity(unchecked) var hash: String?
        @usableFromInline @exclusivity(unchecked) var meta: JSONObject
        @usableFromInline @exclusivity(unchecked) var createdAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var provenance: Provenance?
        @usableFromInline @exclusivity(unchecked) var pinned: Bool
        @usableFromInline @exclusivity(unchecked) var orphanedAt: Timestamp?

        @inlinable init(assetId: String, type: String, uri: String, bytes: Int64?, hash: String?, meta: JSONObject,
                        createdAt: Timestamp, provenance: Provenance?, pinned: Bool, orphanedAt: Timestamp?) {
            self.assetId = assetId
            self.type = type
            self.uri = uri
            self.bytes = bytes
            self.hash = hash
            self.meta = meta
            self.createdAt = createdAt
            self.provenance = provenance
            self.pinned = pinned
            self.orphanedAt = orphanedAt
        }

        @inlinable func copy() -> Storage {
            Storage(assetId: assetId, type: type, uri: uri, bytes: bytes, hash: hash, meta: meta, createdAt: createdAt,
                    provenance: provenance, pinned: pinned, orphanedAt: orphanedAt)
        }
    }

    @usableFromInline var storage: Storage

    /// Makes ``storage`` this value's own before a write.
    @inlinable mutating func unique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    public init(assetId: String, type: String, uri: String, bytes: Int64? = nil, hash: String? = nil,
                meta: JSONObject = [:], createdAt: Timestamp, provenance: Provenance? = nil, pinned: Bool = false,
                orphanedAt: Timestamp? = nil) {
        storage = Storage(assetId: assetId, type: type, uri: uri, bytes: bytes, hash: hash, meta: meta,
                          createdAt: createdAt, provenance: provenance, pinned: pinned, orphanedAt: orphanedAt)
    }

    @inlinable public var assetId: String {
        _read { yield storage.assetId }
        _modify { unique(); yield &storage.assetId }
    }

    @inlinable public var type: String {
        _read { yield storage.type }
        _modify { unique(); yield &storage.type }
    }

    @inlinable public var uri: String {
        _read { yield storage.uri }
        _modify { unique(); yield &storage.uri }
    }

    @inlinable public var bytes: Int64? {
        _read { yield storage.bytes }
        _modify { unique(); yield &storage.bytes }
    }

    @inlinable public var hash: String? {
        _read { yield storage.hash }
        _modify { unique(); yield &storage.hash }
    }

    @inlinable public var meta: JSONObject {
        _read { yield storage.meta }
        _modify { unique(); yield &storage.meta }
    }

    @inlinable public var createdAt: Timestamp {
        _read { yield storage.createdAt }
        _modify { unique(); yield &storage.createdAt }
    }

    /// nil for assets a host imported (bound at workflow creation, picked by a person).
    @inlinable public var provenance: Provenance? {
        _read { yield storage.provenance }
        _modify { unique(); yield &storage.provenance }
    }

    /// "Keep offline": never evicted from the cache, never collected.
    @inlinable public var pinned: Bool {
        _read { yield storage.pinned }
        _modify { unique(); yield &storage.pinned }
    }

    /// When the last workflow referring to it was deleted; collection counts retention from here
    /// (or from `createdAt` for an asset nothing ever referred to).
    @inlinable public var orphanedAt: Timestamp? {
        _read { yield storage.orphanedAt }
        _modify { unique(); yield &storage.orphanedAt }
    }

    public static func == (a: Asset, b: Asset) -> Bool {
        if a.storage === b.storage { return true }
        let (x, y) = (a.storage, b.storage)
        return x.assetId == y.assetId && x.type == y.type && x.uri == y.uri && x.bytes == y.bytes && x.hash == y.hash
            && x.meta == y.meta && x.createdAt == y.createdAt && x.provenance == y.provenance && x.pinned == y.pinned
            && x.orphanedAt == y.orphanedAt
    }

    /// The asset as hosts and effects see it.
    public var json: JSON {
        var o = JSONObject(minimumCapacity: 10)
        o.append(uniqueKey: "assetId", .string(assetId))
        o.append(uniqueKey: "type", .string(type))
        o.append(uniqueKey: "uri", .string(uri))
        if let bytes { o.append(uniqueKey: "bytes", .int(bytes)) }
        if let hash { o.append(uniqueKey: "hash", .string(hash)) }
        o.append(uniqueKey: "meta", .object(meta))
        o.append(uniqueKey: "createdAt", JSON(createdAt))
        o.append(uniqueKey: "provenance", provenance?.json ?? .null)
        o.append(uniqueKey: "pinned", .bool(pinned))
        return .object(o)
    }
}

/// An asset as a host reports it: `{type, uri, bytes?, hash?, meta?}`.
public struct AssetDraft: Sendable, Equatable {
    public var type: String?
    public var uri: String
    public var bytes: Int64?
    public var hash: String?
    public var meta: JSONObject

    public init(type: String?, uri: String, bytes: Int64? = nil, hash: String? = nil, meta: JSONObject = [:]) {
        self.type = type
        self.uri = uri
        self.bytes = bytes
        self.hash = hash
        self.meta = meta
    }

    /// Decodes `{type, uri, bytes?, hash?, meta?}`; `path` names the argument in errors (empty when
    /// the asset's fields are the op's own arguments, which the op checks). An asset as the engine
    /// writes it (effects carry them) may be given back as it is: the fields the engine assigns
    /// (`assetId`, `createdAt`, `provenance`, `pinned`) are ignored. Any other field is refused
    /// (a typo such as `byte` would lose the size) unless it starts with `x-`.
    public static func decode(_ json: JSON, path: String) throws(EngineError) -> AssetDraft {
        func p(_ field: String) -> String { path.isEmpty ? field : "\(path).\(field)" }
        guard case let .object(o) = json else {
            throw .invalid("invalidAsset", "\(path) must be an asset object {type, uri, bytes?, hash?, meta?}, not \(json.typeName)",
                           details: ["argument": .string(path)])
        }
        if !path.isEmpty, let unknown = o.members.first(where: { !isField($0.key) && !$0.key.hasPrefix("x-") })?.key {
            throw .invalid("invalidAsset", "\(p(unknown)) is not a field of an asset (type, uri, bytes, hash, meta); a host's own fields start with x-",
                           details: ["argument": .string(p(unknown))])
        }
        guard case let .string(uri)? = o["uri"], !uri.isEmpty else {
            throw .invalid("invalidAsset", "\(p("uri")) must be a non-empty string", details: ["argument": .string(p("uri"))])
        }
        var type: String?
        if let t = o["type"], !t.isNull {
            guard case let .string(s) = t, Identifiers.isValidTypeName(s) else {
                throw .invalid("invalidAsset", "\(p("type")) must be a type name like ImageRef",
                               details: ["argument": .string(p("type"))])
            }
            type = s
        }
        var bytes: Int64?
        if let b = o["bytes"], !b.isNull {
            guard let v = b.intValue, v >= 0 else {
                throw .invalid("invalidAsset", "\(p("bytes")) must be a non-negative integer",
                               details: ["argument": .string(p("bytes"))])
            }
            bytes = v
        }
        var hash: String?
        if let h = o["hash"], !h.isNull {
            guard case let .string(s) = h else {
                throw .invalid("invalidAsset", "\(p("hash")) must be a string", details: ["argument": .string(p("hash"))])
            }
            hash = s
        }
        var meta = JSONObject()
        if let m = o["meta"], !m.isNull {
            guard case let .object(mo) = m else {
                throw .invalid("invalidAsset", "\(p("meta")) must be an object", details: ["argument": .string(p("meta"))])
            }
            meta = mo
        }
        return AssetDraft(type: type, uri: uri, bytes: bytes, hash: hash, meta: meta)
    }

    /// Whether an asset object may hold `key`: what a host reports, and what the engine assigns.
    /// (Compared as a switch: the short keys compare in place, where a set would hash each one,
    /// and every completion reports an asset.)
    static func isField(_ key: String) -> Bool {
        switch key {
        case "type", "uri", "bytes", "hash", "meta", "assetId", "createdAt", "provenance", "pinned": true
        default: false
        }
    }

    /// Provider metadata is versioned: metadata without `providerSchema` (absent, or `null`) is
    /// stored as `"v1"`. Returns the completed metadata and whether the default was applied.
    public func versionedMeta() -> (meta: JSONObject, defaulted: Bool) {
        if let schema = meta["providerSchema"], !schema.isNull { return (meta, false) }
        var m = meta
        m["providerSchema"] = "v1"
        return (m, true)
    }
}
