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
        ["workflowId": .string(workflowId), "nodeId": .string(nodeId), "runId": .string(runId), "port": .string(port)]
    }
}

/// A produced or imported file-like value: an image, a mask, a text. The engine assigns the id and
/// stamps the provenance; the host owns the bytes at `uri`.
public struct Asset: Sendable, Equatable {
    public var assetId: String
    public var type: String
    public var uri: String
    public var bytes: Int64?
    public var hash: String?
    public var meta: JSONObject
    public var createdAt: Timestamp
    /// nil for assets a host imported (bound at workflow creation, picked by a person).
    public var provenance: Provenance?
    /// "Keep offline": never evicted from the cache, never collected.
    public var pinned: Bool
    /// When the last workflow referring to it was deleted; collection counts retention from here
    /// (or from `createdAt` for an asset nothing ever referred to).
    public var orphanedAt: Timestamp?

    public init(assetId: String, type: String, uri: String, bytes: Int64? = nil, hash: String? = nil,
                meta: JSONObject = [:], createdAt: Timestamp, provenance: Provenance? = nil, pinned: Bool = false,
                orphanedAt: Timestamp? = nil) {
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
