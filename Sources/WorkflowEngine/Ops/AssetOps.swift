import WorkflowCore
import WorkflowStore

extension Engine {
    static let assetOps: [String: OpHandler] = [
        // asset.get {assetId} → the asset.
        "asset.get": OpHandler(mutates: false, args: ["assetId"]) { (_, uow, args) throws(EngineError) -> JSON in
            try requireAsset(uow, args).json
        },

        // asset.import {type, uri, bytes?, hash?, meta?} → the asset (no provenance): a file the
        // host brings, to bind or pick later.
        "asset.import": OpHandler(mutates: true, args: ["type", "uri", "bytes", "hash", "meta"]) { (_, uow, args) throws(EngineError) -> JSON in
            try resolveAsset(uow, .object(args.object), path: "", expectedType: nil).json
        },

        // asset.delete {assetId} → {assetId, deleted, evicted}: its cached files are evicted; every
        // workflow that refers to it is re-gated; a retry that needs it never starts (inputAssetGone).
        "asset.delete": OpHandler(mutates: true, args: ["assetId"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let asset = try requireAsset(uow, args)
            let evicted = engine.evictAll(uow, assetId: asset.assetId, reason: "assetDeleted")
            let referring = try workflowsReferring(engine, uow, asset)
            uow.deleteAsset(asset.assetId)
            for var wf in referring {
                try uow.executor(for: wf).reconcile(&wf)
                uow.putWorkflow(wf)
            }
            uow.log(.info, "asset deleted", ["assetId": "\(asset.assetId)", "workflows": "\(referring.count)"])
            return ["assetId": .string(asset.assetId), "deleted": true, "evicted": JSON(evicted)]
        },

        // asset.pin {assetId, pinned} → {assetId, pinned}: "Keep offline"; pinned assets are never
        // evicted nor collected, and stay pinned across relaunches.
        "asset.pin": OpHandler(mutates: true, args: ["assetId", "pinned"]) { (engine, uow, args) throws(EngineError) -> JSON in
            var asset = try requireAsset(uow, args)
            let pinned = try args.bool("pinned")
            if asset.pinned != pinned {
                asset.pinned = pinned
                uow.putAsset(asset)
                for variant in CacheVariant.allCases {
                    guard var e = uow.cacheEntry(asset.assetId, variant.rawValue) else { continue }
                    e.pinned = pinned
                    uow.putCacheEntry(e)
                    engine.schedulePurge(uow, e)  // unused for longer than its lifetime while pinned: now
                }
                if !pinned { engine.enforceThumbnailCap(uow) }
                uow.metric("asset.pinned", ["assetId": .string(asset.assetId), "pinned": .bool(pinned)])
            }
            return ["assetId": .string(asset.assetId), "pinned": .bool(pinned)]
        },

        // assets.gc → {removed, count}: assets no run, node or binding refers to, unpinned, and
        // orphaned longer than the retention period (config assets.retentionDays, default 7).
        "assets.gc": OpHandler(mutates: true, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            let cutoff = uow.now.adding(seconds: -engine.config.assetRetentionDays * 86_400)
            let stored: [String]
            do {
                stored = try engine.store.unreferencedAssets(createdBefore: cutoff)
            } catch {
                throw EngineError.storeRead(error, "cannot scan assets")
            }
            // The store knows what is committed; in a batch, earlier calls may have bound, pinned
            // or re-used an asset since: those are kept.
            var referencedNow = Set<String>()
            for s in uow.touched { if let wf = s.working { referencedNow.formUnion(wf.referencedAssetIds) } }
            var ids: [String] = []
            for id in stored where !referencedNow.contains(id) {
                guard let asset = try uow.asset(id), !asset.pinned, (asset.orphanedAt ?? asset.createdAt) < cutoff else { continue }
                ids.append(id)
            }
            for id in ids {
                _ = engine.evictAll(uow, assetId: id, reason: "collected")
                uow.deleteAsset(id)
            }
            if !ids.isEmpty { uow.log(.info, "assets collected", ["count": "\(ids.count)"]) }
            return ["removed": JSON(ids), "count": JSON(ids.count)]
        },

        // cache.record {assetId, variant: thumbnail|preview, bytes} → {entry, evicted}: the host
        // cached a file; thumbnails over the cap evict the least recently used.
        "cache.record": OpHandler(mutates: true, args: ["assetId", "variant", "bytes"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let asset = try requireAsset(uow, args)
            let variant = try cacheVariant(args)
            guard let bytes = try args.optionalInt("bytes", min: 0, max: CachePolicy.maxEntryBytes) else { throw Args.missing("bytes") }
            // The use order makes it the most recently used, also among entries used at the same instant.
            let entry = CacheEntry(assetId: asset.assetId, variant: variant, bytes: bytes, lastUsedAt: uow.now,
                                   pinned: asset.pinned, useOrder: uow.nextNumber("cacheUse"))
            // The file is cached again: an evict of it not yet taken would delete it.
            uow.settle(answerKey: AnswerKey.evict(asset.assetId, variant.rawValue))
            uow.putCacheEntry(entry)
            uow.cacheTimers.set(entry.key, at: engine.cachePolicy.purgeTime(entry), order: 0)
            let evicted = engine.enforceThumbnailCap(uow)
            return ["entry": entry.json, "evicted": .array(evicted.map(\.json))]
        },

        // cache.touch {assetId, variant} → {entry}: the file was used; its LRU and purge clocks restart.
        "cache.touch": OpHandler(mutates: true, args: ["assetId", "variant"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let assetId = try args.string("assetId")
            let variant = try cacheVariant(args)
            guard var entry = uow.cacheEntry(assetId, variant.rawValue) else {
                throw .notFound("notCached", "asset \(assetId) has no cached \(variant.rawValue)",
                                details: ["assetId": .string(assetId), "variant": .string(variant.rawValue)])
            }
            entry.lastUsedAt = uow.now
            entry.useOrder = uow.nextNumber("cacheUse")
            uow.putCacheEntry(entry)
            uow.cacheTimers.set(entry.key, at: engine.cachePolicy.purgeTime(entry), order: 0)
            return ["entry": entry.json]
        },

        // cache.usage → {thumbnails, previews, pinned, total, entries, pinnedAssets} in bytes.
        "cache.usage": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in
            CachePolicy.usage(uow.allCacheEntries())
        },

        // cache.entries → {entries}: every cached file, by key.
        "cache.entries": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in
            ["entries": .array(uow.allCacheEntries().sorted { $0.key < $1.key }.map(\.json))]
        },

        // cache.freeUpSpace → {evicted, freedBytes}: purges every unpinned preview.
        "cache.freeUpSpace": OpHandler(mutates: true, args: []) { (engine, uow, _) throws(EngineError) -> JSON in
            let victims = engine.cachePolicy.freeUpSpace(uow.allCacheEntries())
            for e in victims { engine.evict(uow, e, reason: "freeUpSpace") }
            return ["evicted": JSON(victims.count), "freedBytes": .int(CachePolicy.totalBytes(victims))]
        },

        // provider.setDefaults {kind, params} → {kind, params}: provider/model settings for a kind;
        // runs created from now on use them (tool defaults ⊕ provider defaults ⊕ node params).
        "provider.setDefaults": OpHandler(mutates: true, args: ["kind", "params"]) { (_, uow, args) throws(EngineError) -> JSON in
            let kind = try args.string("kind")
            let params = try args.optionalObject("params") ?? [:]
            uow.setProviderDefaults(kind, params.isEmpty ? nil : params)
            return ["kind": .string(kind), "params": .object(params)]
        },

        // provider.getDefaults {kind} → {kind, params}
        "provider.getDefaults": OpHandler(mutates: false, args: ["kind"]) { (_, uow, args) throws(EngineError) -> JSON in
            let kind = try args.string("kind")
            return ["kind": .string(kind), "params": .object(uow.providerDefaults(kind) ?? [:])]
        },

        // metrics.record {event, fields?} → {recorded}: events a shell records (card taps, …). The
        // event name and every string in the fields go through the log redaction first.
        "metrics.record": OpHandler(mutates: true, args: ["event", "fields"]) { (_, uow, args) throws(EngineError) -> JSON in
            let event = Redaction.redact(try args.string("event"))
            var fields = Redaction.redactStrings(try args.optionalObject("fields") ?? [:])
            fields["source"] = "shell"
            uow.metric(event, fields)
            return ["recorded": true]
        },

        // metrics.take {max?} → {events}: telemetry in order (claims, completions, retries, cancels,
        // snoozes, skips, expiries, shell events), removed once taken.
        "metrics.take": OpHandler(mutates: true, args: ["max"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let max = Int(try args.optionalInt("max", min: 1, max: 1_000_000) ?? 10_000)
            // After those an earlier take of the same batch took, and with the events earlier calls
            // of the batch recorded (not committed yet).
            let after = uow.metricsDeletedThrough ?? 0
            var events: [MetricEvent]
            do {
                events = try engine.store.metrics(after: after, limit: max)
            } catch {
                throw EngineError.storeRead(error, "cannot read metrics")
            }
            for e in uow.metrics where e.seq > after && events.count < max { events.append(e) }
            if let last = events.last { uow.metricsDeletedThrough = last.seq }
            return ["events": .array(events.map { .object($0.body) })]
        },
    ]

    static func requireAsset(_ uow: UnitOfWork, _ args: Args) throws(EngineError) -> Asset {
        let id = try args.string("assetId")
        guard let a = try uow.asset(id) else {
            throw .notFound("unknownAsset", "no asset '\(id)'", details: ["assetId": .string(id)])
        }
        return a
    }

    /// Every workflow that refers to `asset`, in creation order: the one that produced it, the
    /// committed ones the store finds (runs' inputs and outputs, nodes' bindings, outputs and
    /// input selections), and those this call changed (a `batch` may have just bound it).
    static func workflowsReferring(_ engine: Engine, _ uow: UnitOfWork, _ asset: Asset) throws(EngineError) -> [Workflow] {
        var ids = Set<String>()
        if let id = asset.provenance?.workflowId { ids.insert(id) }
        do {
            ids.formUnion(try engine.store.workflowIds(referencingAsset: asset.assetId))
        } catch {
            throw EngineError.storeRead(error, "cannot find the workflows using \(asset.assetId)")
        }
        for id in uow.touchedWorkflowIds where !ids.contains(id) {
            if let wf = try uow.workflow(id), wf.refers(to: asset.assetId) { ids.insert(id) }
        }
        var found: [Workflow] = []
        for id in ids {
            if let wf = try uow.workflow(id) { found.append(wf) }
        }
        return found.sorted { $0.seq < $1.seq }
    }

    static func cacheVariant(_ args: Args) throws(EngineError) -> CacheVariant {
        let v = try args.optionalChoice("variant", CacheVariant.allCases.map(\.rawValue))
        guard let v, let variant = CacheVariant(rawValue: v) else { throw Args.missing("variant") }
        return variant
    }

    var cachePolicy: CachePolicy {
        CachePolicy(thumbnailCapBytes: config.thumbnailBytes, previewDays: config.previewDays)
    }

    /// Removes a cache entry and tells the host to delete the file (`cache.evict`).
    func evict(_ uow: UnitOfWork, _ e: CacheEntry, reason: String) {
        uow.deleteCacheEntry(e.assetId, e.variant.rawValue)
        uow.cacheTimers.set(e.key, at: nil, order: 0)
        uow.emit(EffectType.cacheEvict, ["assetId": .string(e.assetId), "variant": .string(e.variant.rawValue),
                                         "bytes": .int(e.bytes), "reason": .string(reason)],
                 answerKey: AnswerKey.evict(e.assetId, e.variant.rawValue))
    }

    /// Evicts every cached file of an asset; returns the variants evicted.
    func evictAll(_ uow: UnitOfWork, assetId: String, reason: String) -> [String] {
        var evicted: [String] = []
        for variant in CacheVariant.allCases {
            guard let e = uow.cacheEntry(assetId, variant.rawValue) else { continue }
            evict(uow, e, reason: reason)
            evicted.append(variant.rawValue)
        }
        return evicted
    }

    /// Evicts the unpinned previews unused for longer than their lifetime (`cache.previewDays`
    /// lowered since the last open, or time gone by on the system clock while the store was
    /// closed): at open, as their purge timers would have when they fell due.
    func purgeExpiredPreviews(_ uow: UnitOfWork) {
        for e in uow.allCacheEntries().sorted(by: { $0.key < $1.key }) where cachePolicy.isExpired(e, at: uow.now) {
            evict(uow, e, reason: "previewExpired")
        }
    }

    /// Sets `e`'s purge timer, or purges it now if its time has already come: a deadline is never
    /// left behind the clock.
    func schedulePurge(_ uow: UnitOfWork, _ e: CacheEntry) {
        if cachePolicy.isExpired(e, at: uow.now) {
            evict(uow, e, reason: "previewExpired")
        } else {
            uow.cacheTimers.set(e.key, at: cachePolicy.purgeTime(e), order: 0)
        }
    }

    /// Evicts least recently used unpinned thumbnails until all fit the cap.
    @discardableResult
    func enforceThumbnailCap(_ uow: UnitOfWork) -> [CacheEntry] {
        let victims = cachePolicy.thumbnailEvictions(uow.allCacheEntries())
        for e in victims { evict(uow, e, reason: "lru") }
        return victims
    }

    /// A preview's purge time came: it goes if it is still unused and unpinned.
    func fireCacheTimer(_ uow: UnitOfWork, _ key: String) throws(EngineError) {
        guard let colon = key.firstIndex(of: ":") else {
            uow.cacheTimers.set(key, at: nil, order: 0)
            return
        }
        let variant = String(key[..<colon])
        let assetId = String(key[key.index(after: colon)...])
        guard let entry = uow.cacheEntry(assetId, variant) else {
            uow.cacheTimers.set(key, at: nil, order: 0)
            return
        }
        schedulePurge(uow, entry)
    }
}
