import WorkflowCore

/// The encoding of one journal entry: the row images of one commit, in order (``RowImage``),
/// after the number of commits written straight to the store's tables before it (see
/// ``JournalFile``: an entry is replayed only over a store that kept those). Version 1,
/// without that number, is what earlier versions kept in the store's own `journal` table.
/// docs/ARCHITECTURE.md ("The store's journal") gives the reasons and the figures.
enum JournalCoding {
    /// The format of an entry; an entry of another version is refused, not guessed at.
    static let version: UInt8 = 2
    /// Entries of earlier versions' journals, in the store's own `journal` table.
    static let legacyVersion: UInt8 = 1

    /// A decoded entry.
    struct Entry: Equatable {
        /// How many commits were written straight to the tables before this entry was appended.
        var directCommits: Int64
        var images: [RowImage]
    }

    fileprivate enum Tag: UInt8 {
        case meta = 1, asset, workflow, node, run, await, effect, effectTaken, effectDelete
    }

    /// One journal entry: the images of one commit, in order, appended after `directCommits`
    /// commits written straight to the tables.
    static func encode(_ images: [RowImage], directCommits: Int64 = 0) -> [UInt8] {
        let w = ByteWriter(capacity: images.count * 256 + 16)
        w.byte(version)
        w.int(directCommits)
        for image in images {
            switch image {
            case .meta(let key, let value):
                w.byte(Tag.meta.rawValue)
                w.string(key)
                w.blob(value)
            case .asset(let a):
                w.byte(Tag.asset.rawValue)
                w.string(a.assetId)
                w.string(a.type)
                w.int(a.createdAt)
                w.bool(a.pinned)
                w.int(a.orphanedAt)
                w.blob(a.data)
            case .workflow(let r):
                w.byte(Tag.workflow.rawValue)
                w.string(r.workflowId)
                w.int(r.seq)
                w.string(r.templateId)
                w.string(r.title)
                w.string(r.status)
                w.bool(r.archived)
                w.int(r.createdAt)
                w.int(r.updatedAt)
                w.int(r.stepsDone)
                w.int(r.stepsTotal)
                w.int(r.awaitCount)
                w.bool(r.hasBlockingAwait)
                w.string(r.searchText)
                w.int(r.nextDeadline)
                w.int(r.queuedRemote)
                w.int(r.queuedLocal)
                w.int(r.runningRemote)
                w.int(r.runningLocal)
                w.int(r.inboxCount)
                w.blob(r.data)
                w.bool(r.existed)
            case .node(let n):
                w.byte(Tag.node.rawValue)
                w.string(n.workflowId)
                w.string(n.nodeId)
                w.int(n.position)
                w.string(n.state)
                w.blob(n.data)
                w.bool(n.existed)
            case .run(let r):
                w.byte(Tag.run.rawValue)
                w.string(r.runId)
                w.string(r.workflowId)
                w.string(r.nodeId)
                w.int(r.seq)
                w.string(r.status)
                w.string(r.jobId)
                w.blob(r.data)
                w.bool(r.existed)
                w.bool(r.columnsKept)
            case .await(let a):
                w.byte(Tag.await.rawValue)
                w.string(a.awaitId)
                w.string(a.workflowId)
                w.string(a.nodeId)
                w.string(a.runId)
                w.int(a.seq)
                w.string(a.status)
                w.blob(a.data)
            case .effect(let e):
                w.byte(Tag.effect.rawValue)
                w.int(e.seq)
                w.string(e.effectId)
                w.string(e.type)
                w.string(e.answerKey)
                w.bool(e.taken)
                w.blob(e.data)
            case .effectTaken(let seq):
                w.byte(Tag.effectTaken.rawValue)
                w.int(seq)
            case .effectDelete(let seq):
                w.byte(Tag.effectDelete.rawValue)
                w.int(seq)
            }
        }
        return w.bytes
    }

    /// An entry; throws `storeCorrupt` for bytes ``encode(_:directCommits:)`` (or an earlier
    /// version) did not write.
    static func decode(_ bytes: [UInt8]) throws -> Entry {
        var r = ByteReader(bytes)
        let v = try r.byte()
        guard v == version || v == legacyVersion else {
            throw ByteReader.corrupt("journal entry version \(v), expected \(version)")
        }
        let directCommits = v == legacyVersion ? 0 : try r.int()
        var images: [RowImage] = []
        while !r.atEnd {
            let t = try r.byte()
            guard let tag = Tag(rawValue: t) else { throw ByteReader.corrupt("unknown row tag \(t)") }
            switch tag {
            case .meta:
                images.append(.meta(key: try r.string(), value: try r.blob()))
            case .asset:
                images.append(.asset(AssetRow(assetId: try r.string(), type: try r.string(), createdAt: try r.int(),
                                              pinned: try r.bool(), orphanedAt: try r.optionalInt(), data: try r.blob())))
            case .workflow:
                images.append(.workflow(WorkflowRow(
                    workflowId: try r.string(), seq: try r.int(), templateId: try r.string(), title: try r.string(),
                    status: try r.string(), archived: try r.bool(), createdAt: try r.int(), updatedAt: try r.int(),
                    stepsDone: try r.int(), stepsTotal: try r.int(), awaitCount: try r.int(),
                    hasBlockingAwait: try r.bool(), searchText: try r.string(), nextDeadline: try r.optionalInt(),
                    queuedRemote: try r.int(), queuedLocal: try r.int(), runningRemote: try r.int(),
                    runningLocal: try r.int(), inboxCount: try r.int(), data: try r.blob(), existed: try r.bool())))
            case .node:
                images.append(.node(NodeRow(workflowId: try r.string(), nodeId: try r.string(), position: try r.int(),
                                            state: try r.string(), data: try r.blob(), existed: try r.bool())))
            case .run:
                images.append(.run(RunRow(runId: try r.string(), workflowId: try r.string(), nodeId: try r.string(),
                                          seq: try r.int(), status: try r.string(), jobId: try r.optionalString(),
                                          data: try r.blob(), existed: try r.bool(), columnsKept: try r.bool())))
            case .await:
                images.append(.await(AwaitRow(awaitId: try r.string(), workflowId: try r.string(), nodeId: try r.string(),
                                              runId: try r.string(), seq: try r.int(), status: try r.string(),
                                              data: try r.blob())))
            case .effect:
                images.append(.effect(EffectRow(seq: try r.int(), effectId: try r.string(), type: try r.string(),
                                                answerKey: try r.optionalString(), taken: try r.bool(), data: try r.blob())))
            case .effectTaken:
                images.append(.effectTaken(seq: try r.int()))
            case .effectDelete:
                images.append(.effectDelete(seq: try r.int()))
            }
        }
        return Entry(directCommits: directCommits, images: images)
    }
}

extension JournalCoding {
    /// What the journal takes of a change set: its rows (meta, assets, and of its workflows the
    /// rows that differ), none of which can conflict (``RowImage/isJournalable``), and what
    /// differs in each workflow; nil when it takes none of it.
    struct Plan {
        var rows: Int
        var changes: [WorkflowChanges?]
        /// The workflows whose rows it writes, each once.
        var workflowIds: [String]
    }

    static func plan(_ c: ChangeSet) -> Plan? {
        guard c.isOnlyRows, c.effectInserts.isEmpty else { return nil }
        var rows = c.meta.count + c.effectsTaken.count + c.effectDeletes.count
        for asset in c.assets.values where asset != nil { rows += 1 }
        var changes: [WorkflowChanges?] = []
        changes.reserveCapacity(c.workflows.count)
        var ids: [String] = []
        for change in c.workflows {
            guard let new = change.new else { return nil }
            // A new workflow's row (its `seq` is unique) and awaits (unique per node and run) go
            // to their tables, where a conflict fails the commit.
            if change.summary != nil, change.old == nil { return nil }
            let d = change.changes ?? new.changes(since: change.old)
            guard d.awaits.isEmpty else { return nil }
            rows += (change.summary == nil ? 0 : 1) + d.nodes.count + d.runs.count
            changes.append(d)
            if ids.last != new.workflowId { ids.append(new.workflowId) }
        }
        return Plan(rows: rows, changes: changes, workflowIds: ids)
    }

    /// The entry of a change set the journal takes (``plan(_:)``): exactly
    /// `encode(SQLiteStore.images(of: c), directCommits:)`, written straight from the records,
    /// with no row image made on the way (a commit of a batch writes hundreds).
    static func encode(_ c: ChangeSet, _ plan: Plan, directCommits: Int64) -> [UInt8] {
        let w = ByteWriter(capacity: plan.rows * 320 + 16)
        w.byte(version)
        w.int(directCommits)
        var text = RecordText()
        for (k, v) in c.meta {
            w.byte(Tag.meta.rawValue)
            w.string(k)
            w.blob(JSONWriter.bytes(v))
        }
        for (id, asset) in c.assets {
            guard let a = asset else { continue }
            w.byte(Tag.asset.rawValue)
            w.string(id)
            w.string(a.type)
            w.int(a.createdAt.milliseconds)
            w.bool(a.pinned)
            w.int(a.orphanedAt?.milliseconds)
            text.reset()
            RecordCoding.writeAsset(a, &text)
            text.withFinished { w.blob($0) }
        }
        for (change, d) in zip(c.workflows, plan.changes) {
            guard let new = change.new, let d else { continue }
            let old = change.old
            let id = new.workflowId
            if let s = change.summary {
                w.byte(Tag.workflow.rawValue)
                w.string(id)
                w.int(new.seq)
                w.string(new.templateId)
                w.string(new.title)
                w.string(new.status.rawValue)
                w.bool(new.archived)
                w.int(new.createdAt.milliseconds)
                w.int(new.updatedAt.milliseconds)
                w.int(Int64(s.stepsDone))
                w.int(Int64(s.stepsTotal))
                w.int(Int64(s.awaitCount))
                w.bool(s.hasBlockingAwait)
                w.string(s.searchText)
                w.int(s.nextDeadline?.milliseconds)
                w.int(Int64(s.queuedRemote))
                w.int(Int64(s.queuedLocal))
                w.int(Int64(s.runningRemote))
                w.int(Int64(s.runningLocal))
                w.int(Int64(s.inboxCount))
                w.blob(RecordCoding.workflowDataBytes(new))
                w.bool(old != nil)
            }
            let oldNodeCount = old?.nodes.count ?? 0
            let oldRunCount = old?.runs.count ?? 0
            for i in d.nodes {
                w.byte(Tag.node.rawValue)
                w.string(id)
                w.string(new.nodes[i].nodeId)
                w.int(Int64(i))
                w.string(new.nodes[i].state.rawValue)
                text.reset()
                RecordCoding.writeNode(new.nodes[i], &text)
                text.withFinished { w.blob($0) }
                w.bool(i < oldNodeCount && old?.nodes[i].nodeId == new.nodes[i].nodeId)
            }
            for i in d.runs {
                let existed = i < oldRunCount && old?.runs[i].runId == new.runs[i].runId
                w.byte(Tag.run.rawValue)
                w.string(new.runs[i].runId)
                w.string(id)
                w.string(new.runs[i].nodeId)
                w.int(Int64(i))
                w.string(new.runs[i].status.rawValue)
                w.string(new.runs[i].jobId)
                text.reset()
                RecordCoding.writeRun(new.runs[i], &text)
                text.withFinished { w.blob($0) }
                w.bool(existed)
                w.bool(existed && old?.runs[i].status == new.runs[i].status && old?.runs[i].jobId == new.runs[i].jobId)
            }
        }
        for seq in c.effectsTaken {
            w.byte(Tag.effectTaken.rawValue)
            w.int(seq)
        }
        for seq in c.effectDeletes {
            w.byte(Tag.effectDelete.rawValue)
            w.int(seq)
        }
        return w.bytes
    }
}

/// Row images of journal entries to fold into their tables together: the last image of each
/// row, merged so that writing them once leaves the tables as writing every image in order
/// would have.
struct PendingRows {
    private(set) var rows: [RowKey: RowImage] = [:]

    var count: Int { rows.count }
    var isEmpty: Bool { rows.isEmpty }

    /// Keeps `image` as its row's last image: one lookup, the earlier image (if any) merged in
    /// place.
    mutating func merge(_ image: RowImage) {
        let key = image.key
        guard let i = rows.index(forKey: key) else {
            rows[key] = image
            return
        }
        let first = rows.values[i]
        switch image {
        case .effectTaken:
            switch first {
            case .effect(var e):
                e.taken = true
                rows.values[i] = .effect(e)
            case .effectDelete:
                break
            default:
                rows.values[i] = image
            }
        case .effectDelete:
            // Inserted since the last fold: the table never held it, and never needs to.
            if case .effect = first { rows.remove(at: i) } else { rows.values[i] = image }
        case .workflow(var w):
            // Whether the table holds the row is as it was before the first pending image.
            if case .workflow(let f) = first { w.existed = f.existed }
            rows.values[i] = .workflow(w)
        case .node(var n):
            if case .node(let f) = first { n.existed = f.existed }
            rows.values[i] = .node(n)
        case .run(var r):
            if case .run(let f) = first {
                r.existed = f.existed
                r.columnsKept = f.columnsKept && f.status == r.status && f.jobId == r.jobId
            }
            rows.values[i] = .run(r)
        case .meta, .asset, .await, .effect:
            rows.values[i] = image
        }
    }
}

/// Appends a journal entry's fields: LEB128 lengths and zigzag integers.
struct ByteWriter {
    let out: ByteBuffer

    init(capacity: Int = 512) { out = ByteBuffer(capacity: capacity) }

    /// The entry's bytes.
    var bytes: [UInt8] { out.bytes }

    func byte(_ b: UInt8) { out.appendByte(b) }

    func bool(_ b: Bool) { out.appendByte(b ? 1 : 0) }

    func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            out.appendByte(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.appendByte(UInt8(v))
    }

    func int(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    func int(_ v: Int64?) {
        if let v {
            out.appendByte(1)
            int(v)
        } else {
            out.appendByte(0)
        }
    }

    func blob(_ b: [UInt8]) {
        varint(UInt64(b.count))
        out.appendBytes(b)
    }

    func blob(_ b: UnsafeRawBufferPointer) {
        varint(UInt64(b.count))
        out.appendBytes(b)
    }

    func string(_ s: String) { string(s, lengthPlus: 0) }

    /// Absent is length 0; present is its length plus one.
    func string(_ s: String?) {
        guard let s else { return varint(0) }
        string(s, lengthPlus: 1)
    }

    /// The length (plus `extra`) and the bytes; in place where the string's bytes are contiguous
    /// (always, for native strings: no copy of the string is made to reach them).
    private func string(_ s: String, lengthPlus extra: UInt64) {
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            varint(UInt64(utf8.count) + extra)
            out.appendBytes(UnsafeRawBufferPointer(utf8))
        }
        if done == nil {
            var copy = s
            copy.withUTF8 { utf8 in
                varint(UInt64(utf8.count) + extra)
                out.appendBytes(UnsafeRawBufferPointer(utf8))
            }
        }
    }
}

/// Reads what ``ByteWriter`` wrote; every read is bounds-checked.
struct ByteReader {
    private let bytes: [UInt8]
    private var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { at == bytes.count }

    static func corrupt(_ what: String) -> StoreError {
        StoreError(code: "storeCorrupt", message: "the store's journal is damaged: \(what)")
    }

    mutating func byte() throws -> UInt8 {
        guard at < bytes.count else { throw Self.corrupt("an entry ends early") }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let b: throw Self.corrupt("\(b) is not a boolean")
        }
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Self.corrupt("a number is too long") }
            value |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    mutating func int() throws -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    mutating func optionalInt() throws -> Int64? { try bool() ? try int() : nil }

    private mutating func length(_ n: UInt64) throws -> Int {
        guard n <= UInt64(bytes.count - at) else { throw Self.corrupt("a field runs past the end of its entry") }
        return Int(n)
    }

    mutating func blob() throws -> [UInt8] {
        let n = try length(try varint())
        defer { at += n }
        return Array(bytes[at..<at + n])
    }

    mutating func string() throws -> String {
        let n = try length(try varint())
        defer { at += n }
        return String(decoding: bytes[at..<at + n], as: UTF8.self)
    }

    mutating func optionalString() throws -> String? {
        let n = try varint()
        guard n > 0 else { return nil }
        let count = try length(n - 1)
        defer { at += count }
        return String(decoding: bytes[at..<at + count], as: UTF8.self)
    }
}
