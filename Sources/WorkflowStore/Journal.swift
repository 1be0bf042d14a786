import Foundation
import GRDB
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

    enum Tag: UInt8 {
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
        let directCommits = try readHeader(&r)
        var images: [RowImage] = []
        while !r.atEnd { images.append(try readImage(&r)) }
        return Entry(directCommits: directCommits, images: images)
    }

    /// How many commits were written straight to the tables before the entry `bytes` was
    /// appended (its header alone is read).
    static func directCommits(of bytes: [UInt8]) throws -> Int64 {
        var r = ByteReader(bytes)
        return try readHeader(&r)
    }

    /// An entry's version and count of direct commits (0 in a version 1 entry).
    static func readHeader(_ r: inout ByteReader) throws -> Int64 {
        let v = try r.byte()
        guard v == version || v == legacyVersion else {
            throw ByteReader.corrupt("journal entry version \(v), expected \(version)")
        }
        return v == legacyVersion ? 0 : try r.int()
    }

    /// The image that starts at the reader's position (its tag, then its fields).
    static func readImage(_ r: inout ByteReader) throws -> RowImage {
        let t = try r.byte()
        guard let tag = Tag(rawValue: t) else { throw ByteReader.corrupt("unknown row tag \(t)") }
        switch tag {
        case .meta:
            return .meta(key: try r.string(), value: try r.blob())
        case .asset:
            return .asset(AssetRow(assetId: try r.string(), type: try r.string(), createdAt: try r.int(),
                                   pinned: try r.bool(), orphanedAt: try r.optionalInt(), data: try r.blob()))
        case .workflow:
            return .workflow(WorkflowRow(
                workflowId: try r.string(), seq: try r.int(), templateId: try r.string(), title: try r.string(),
                status: try r.string(), archived: try r.bool(), createdAt: try r.int(), updatedAt: try r.int(),
                stepsDone: try r.int(), stepsTotal: try r.int(), awaitCount: try r.int(),
                hasBlockingAwait: try r.bool(), searchText: try r.string(), nextDeadline: try r.optionalInt(),
                queuedRemote: try r.int(), queuedLocal: try r.int(), runningRemote: try r.int(),
                runningLocal: try r.int(), inboxCount: try r.int(), data: try r.blob(), existed: try r.bool()))
        case .node:
            return .node(NodeRow(workflowId: try r.string(), nodeId: try r.string(), position: try r.int(),
                                 state: try r.string(), data: try r.blob(), existed: try r.bool()))
        case .run:
            return .run(RunRow(runId: try r.string(), workflowId: try r.string(), nodeId: try r.string(),
                               seq: try r.int(), status: try r.string(), jobId: try r.optionalString(),
                               data: try r.blob(), existed: try r.bool(), columnsKept: try r.bool()))
        case .await:
            return .await(AwaitRow(awaitId: try r.string(), workflowId: try r.string(), nodeId: try r.string(),
                                   runId: try r.string(), seq: try r.int(), status: try r.string(),
                                   data: try r.blob()))
        case .effect:
            return .effect(EffectRow(seq: try r.int(), effectId: try r.string(), type: try r.string(),
                                     answerKey: try r.optionalString(), taken: try r.bool(), data: try r.blob()))
        case .effectTaken:
            return .effectTaken(seq: try r.int())
        case .effectDelete:
            return .effectDelete(seq: try r.int())
        }
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
                new.nodes.withRecord(at: i) { RecordCoding.writeNode($0, &text) }
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
                new.runs.withRecord(at: i) { RecordCoding.writeRun($0, &text) }
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
///
/// An entry is merged from its bytes without decoding it: each image's fields are stepped over
/// (and checked, as decoding checks them), its row is found by the bytes of its key, and only
/// where the row's last image starts is kept, with what the earlier images say of the table
/// (whether it holds the row; for a run, whether its status and job id columns hold the last
/// image's). Only the last image of each row is decoded, when it is written: under load a fold
/// takes the entries of thousands of calls, and most of their images are rewritten by a later
/// one (docs/BENCHMARKS.md). Effects (marked taken, deleted) are merged as decoded images.
struct PendingRows {
    /// The row an image writes (an effect's excepted), as its key's bytes in the entry that
    /// holds the row's first pending image.
    struct Key: Hashable {
        let kind: UInt8
        /// The entry holding `first` and `second`.
        let body: [UInt8]
        let first: Range<Int>
        /// A node's id (its workflow's is `first`); empty otherwise.
        let second: Range<Int>
        /// Of the kind and the key's bytes, made once: ``hash(into:)`` feeds the hasher this
        /// word alone, and ``==`` compares the bytes only when it is equal.
        let hash: UInt64

        init(kind: UInt8, body: [UInt8], first: Range<Int>, second: Range<Int> = 0..<0) {
            self.kind = kind
            self.body = body
            self.first = first
            self.second = second
            hash = body.withUnsafeBytes { raw in
                Self.mix(Self.mix(UInt64(kind), raw, first), raw, second)
            }
        }

        /// FNV-1a over the bytes of `range`, after `seed` and the range's length.
        private static func mix(_ seed: UInt64, _ raw: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64 {
            var h = (seed ^ UInt64(range.count)) &* 0x100_0000_01B3
            for i in range { h = (h ^ UInt64(raw[i])) &* 0x100_0000_01B3 }
            return h
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        static func == (a: Key, b: Key) -> Bool {
            guard a.hash == b.hash, a.kind == b.kind else { return false }
            return bytesEqual(a.body, a.first, b.body, b.first) && bytesEqual(a.body, a.second, b.body, b.second)
        }
    }

    /// Where a row's last image is, and what the earlier ones say of the table (plain values, so
    /// that the table's slots are copied as bytes).
    struct Slot {
        /// The entry (an index into `bodies`) and the offset of the last image's tag.
        var body: Int32
        var at: Int32
        /// Whether the table held the row before the first pending image.
        var existed: Bool
        /// A run: whether the table's status and job id columns hold the last image's values, and
        /// whether they held the first's.
        var columnsKept: Bool
        var firstColumnsKept: Bool
        /// A run: the first image's entry, and its status and job id (nil: none) there.
        var firstBody: Int32
        var firstStatus: Range<Int>
        var firstJob: Range<Int>?
    }

    private var bodies: [[UInt8]] = []
    private var slots: [Key: Slot]
    /// Effects marked taken or deleted, by number, merged as decoded images.
    private var effects: [Int64: RowImage] = [:]

    /// Room for `rows` rows (the images to merge, at most one row each), so that the merge does
    /// not grow its table as it goes.
    init(capacity rows: Int = 0) {
        slots = Dictionary(minimumCapacity: rows)
    }

    var count: Int { slots.count + effects.count }
    var isEmpty: Bool { slots.isEmpty && effects.isEmpty }

    static func bytesEqual(_ a: [UInt8], _ ra: Range<Int>, _ b: [UInt8], _ rb: Range<Int>) -> Bool {
        guard ra.count == rb.count else { return false }
        guard !ra.isEmpty else { return true }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in memcmp(x.baseAddress! + ra.lowerBound, y.baseAddress! + rb.lowerBound, ra.count) == 0 }
        }
    }

    /// Merges the images of the entry `body` (``JournalCoding``), in order, after those merged
    /// before. Throws `storeCorrupt` for bytes the encoder did not write: what was merged is
    /// then not to be written.
    mutating func merge(entry body: [UInt8]) throws {
        typealias Tag = JournalCoding.Tag
        var r = ByteReader(body)
        _ = try JournalCoding.readHeader(&r)
        let index = Int32(bodies.count)
        bodies.append(body)
        while !r.atEnd {
            let at = r.position
            let t = try r.byte()
            guard let tag = Tag(rawValue: t) else { throw ByteReader.corrupt("unknown row tag \(t)") }
            switch tag {
            case .meta, .asset, .await:
                let key = Key(kind: tag.rawValue, body: body, first: try r.stringRange())
                try Self.skipFields(of: tag, &r)
                keep(key, index, at, existed: false, columnsKept: false)
            case .workflow:
                let key = Key(kind: tag.rawValue, body: body, first: try r.stringRange())
                try Self.skipFields(of: tag, &r)
                keep(key, index, at, existed: try r.bool(), columnsKept: false)
            case .node:
                let key = Key(kind: tag.rawValue, body: body, first: try r.stringRange(), second: try r.stringRange())
                _ = try r.int()
                _ = try r.stringRange()
                _ = try r.stringRange()
                keep(key, index, at, existed: try r.bool(), columnsKept: false)
            case .run:
                let key = Key(kind: tag.rawValue, body: body, first: try r.stringRange())
                _ = try r.stringRange()
                _ = try r.stringRange()
                _ = try r.int()
                let status = try r.stringRange()
                let job = try r.optionalStringRange()
                _ = try r.stringRange()
                let existed = try r.bool()
                let kept = try r.bool()
                if let i = slots.index(forKey: key) {
                    let first = slots.values[i]
                    let firstBody = bodies[Int(first.firstBody)]
                    // The table holds the first image's status and job id if that image says so.
                    let columnsKept = first.firstColumnsKept && Self.bytesEqual(firstBody, first.firstStatus, body, status)
                        && Self.optionalBytesEqual(firstBody, first.firstJob, body, job)
                    slots.values[i].body = index
                    slots.values[i].at = Int32(at)
                    slots.values[i].columnsKept = columnsKept
                } else {
                    slots[key] = Slot(body: index, at: Int32(at), existed: existed, columnsKept: kept,
                                      firstColumnsKept: kept, firstBody: index, firstStatus: status, firstJob: job)
                }
            case .effect, .effectTaken, .effectDelete:
                var e = ByteReader(body, at: at)
                let image = try JournalCoding.readImage(&e)
                r = e
                mergeEffect(image)
            }
        }
    }

    static func optionalBytesEqual(_ a: [UInt8], _ ra: Range<Int>?, _ b: [UInt8], _ rb: Range<Int>?) -> Bool {
        switch (ra, rb) {
        case (nil, nil): true
        case (let x?, let y?): bytesEqual(a, x, b, y)
        default: false
        }
    }

    /// The image at `at` of entry `body` is its row's last; `existed` is kept from the first.
    private mutating func keep(_ key: Key, _ body: Int32, _ at: Int, existed: Bool, columnsKept: Bool) {
        if let i = slots.index(forKey: key) {
            slots.values[i].body = body
            slots.values[i].at = Int32(at)
        } else {
            slots[key] = Slot(body: body, at: Int32(at), existed: existed, columnsKept: columnsKept,
                              firstColumnsKept: columnsKept, firstBody: body, firstStatus: 0..<0, firstJob: nil)
        }
    }

    /// An effect marked taken or deleted (or, in no journal the engine writes, inserted): merged
    /// with the earlier image of its row.
    private mutating func mergeEffect(_ image: RowImage) {
        guard case .effect(let seq) = image.key else { return }
        guard let first = effects[seq] else {
            effects[seq] = image
            return
        }
        switch image {
        case .effectTaken:
            switch first {
            case .effect(var e):
                e.taken = true
                effects[seq] = .effect(e)
            case .effectDelete:
                break
            default:
                effects[seq] = image
            }
        case .effectDelete:
            // Inserted since the last fold: the table never held it, and never needs to.
            if case .effect = first { effects[seq] = nil } else { effects[seq] = image }
        default:
            effects[seq] = image
        }
    }

    /// The last image of a row as it is to be written: decoded, with what the earlier images
    /// said of the table.
    private func image(_ slot: Slot) throws -> RowImage {
        var r = ByteReader(bodies[Int(slot.body)], at: Int(slot.at))
        switch try JournalCoding.readImage(&r) {
        case .workflow(var w):
            w.existed = slot.existed
            return .workflow(w)
        case .node(var n):
            n.existed = slot.existed
            return .node(n)
        case .run(var run):
            run.existed = slot.existed
            run.columnsKept = slot.columnsKept
            return .run(run)
        case let other:
            return other
        }
    }

    /// Writes every row's last image to the tables (in no particular order), inside the caller's
    /// transaction, its texts read where they are in its entry (effects excepted, as decoded):
    /// rows the table did not hold (a new asset, run, node or workflow) by inserts of
    /// ``PreparedStatements/Key/foldRows`` rows at once, the others one by one.
    func write(_ statements: PreparedStatements, _ db: Database) throws {
        typealias Tag = JournalCoding.Tag
        var groups: [UInt8: [(body: [UInt8], at: Int)]] = [:]
        for image in effects.values { try TableWriter.write(image, statements, db) }
        for slot in slots.values {
            let body = bodies[Int(slot.body)], at = Int(slot.at)
            let tag = body[at]
            if !slot.existed, tag != Tag.meta.rawValue, tag != Tag.await.rawValue {
                groups[tag, default: []].append((body, at))
                if groups[tag]!.count == PreparedStatements.Key.foldRows {
                    try TableWriter.write(newRows: groups[tag]!, tag: tag, statements, db)
                    groups[tag]!.removeAll(keepingCapacity: true)
                }
                continue
            }
            try body.withUnsafeBytes { raw in
                try TableWriter.write(imageAt: at, in: raw, existed: slot.existed, columnsKept: slot.columnsKept,
                                      statements, db)
            }
        }
        for (_, rows) in groups {
            for (body, at) in rows {
                try body.withUnsafeBytes { raw in
                    try TableWriter.write(imageAt: at, in: raw, existed: false, columnsKept: false, statements, db)
                }
            }
        }
    }

    /// The last image of the row `key`, for tests.
    func image(of key: RowKey) throws -> RowImage? {
        let probe: Key
        let w = ByteWriter()
        switch key {
        case .effect(let seq):
            return effects[seq]
        case .node(let workflowId, let nodeId):
            w.string(workflowId)
            let a = w.bytes.count
            w.string(nodeId)
            let bytes = w.bytes
            var r = ByteReader(bytes)
            let first = try r.stringRange()
            let second = try r.stringRange()
            precondition(first.upperBound == a)
            probe = Key(kind: JournalCoding.Tag.node.rawValue, body: bytes, first: first, second: second)
        case .meta(let id), .asset(let id), .workflow(let id), .run(let id), .await(let id):
            w.string(id)
            let bytes = w.bytes
            var r = ByteReader(bytes)
            let tag: JournalCoding.Tag = switch key {
            case .meta: .meta
            case .asset: .asset
            case .workflow: .workflow
            case .run: .run
            default: .await
            }
            probe = Key(kind: tag.rawValue, body: bytes, first: try r.stringRange())
        }
        return try slots[probe].map { try image($0) }
    }

    /// Steps over the fields after the key of a meta, asset, await or workflow image (a
    /// workflow's but its last, `existed`).
    fileprivate static func skipFields(of tag: JournalCoding.Tag, _ r: inout ByteReader) throws {
        switch tag {
        case .meta:
            _ = try r.stringRange()
        case .asset:
            _ = try r.stringRange()
            _ = try r.int()
            _ = try r.bool()
            _ = try r.optionalInt()
            _ = try r.stringRange()
        case .await:
            for _ in 0..<3 { _ = try r.stringRange() }
            _ = try r.int()
            for _ in 0..<2 { _ = try r.stringRange() }
        case .workflow:
            _ = try r.int()
            for _ in 0..<3 { _ = try r.stringRange() }
            _ = try r.bool()
            for _ in 0..<5 { _ = try r.int() }
            _ = try r.bool()
            _ = try r.stringRange()
            _ = try r.optionalInt()
            for _ in 0..<5 { _ = try r.int() }
            _ = try r.stringRange()
        default:
            preconditionFailure("no fields to skip for \(tag)")
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

/// The fields ``ByteWriter`` writes, read the same way by the two readers of its bytes
/// (``ByteReader`` over an array, `RawReader` in place), each giving only `byte()`.
protocol JournalFieldReader {
    mutating func byte() throws -> UInt8
}

extension JournalFieldReader {
    @inline(__always)
    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let b: throw ByteReader.corrupt("\(b) is not a boolean")
        }
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw ByteReader.corrupt("a number is too long") }
            value |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    @inline(__always)
    mutating func int() throws -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    @inline(__always)
    mutating func optionalInt() throws -> Int64? { try bool() ? try int() : nil }
}

/// Reads what ``ByteWriter`` wrote; every read is bounds-checked.
struct ByteReader: JournalFieldReader {
    private let bytes: [UInt8]
    private var at = 0

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        at = position
    }

    var atEnd: Bool { at == bytes.count }

    /// Where the next field starts.
    var position: Int { at }

    static func corrupt(_ what: String) -> StoreError {
        StoreError(code: "storeCorrupt", message: "the store's journal is damaged: \(what)")
    }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard at < bytes.count else { throw Self.corrupt("an entry ends early") }
        defer { at += 1 }
        return bytes[at]
    }

    @inline(__always)
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

    /// A string's or a blob's bytes, stepped over: where they are in the entry.
    @inline(__always)
    mutating func stringRange() throws -> Range<Int> {
        let n = try length(try varint())
        defer { at += n }
        return at..<at + n
    }

    @inline(__always)
    mutating func optionalStringRange() throws -> Range<Int>? {
        let n = try varint()
        guard n > 0 else { return nil }
        let count = try length(n - 1)
        defer { at += count }
        return at..<at + count
    }

    mutating func optionalString() throws -> String? {
        let n = try varint()
        guard n > 0 else { return nil }
        let count = try length(n - 1)
        defer { at += count }
        return String(decoding: bytes[at..<at + count], as: UTF8.self)
    }
}
