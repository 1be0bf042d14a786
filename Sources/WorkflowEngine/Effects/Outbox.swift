import WorkflowCore

/// The effect outbox in memory, mirroring the `effects` table.
///
/// An effect is *pending* until `effects.take` hands it out. A taken effect whose work is
/// answered by an event (it has an answer key) stays on record until the answer arrives; when the
/// engine is reopened before that, it becomes pending again and is delivered with the same id.
/// A taken effect nothing answers (`cache.evict`, `notify.withdraw`) stays on record until the
/// host's next `effects.take`, which acknowledges it (``takenUnanswerable``).
struct Outbox {
    private(set) var bySeq: [Int64: Effect] = [:]
    /// Pending seqs in ascending order; entries no longer pending are skipped lazily.
    private var pendingOrder: [Int64] = []
    private var pendingHead = 0
    /// The effects on record for each answer key: nearly always one (an array allocated per
    /// effect would cost more than the rest of recording it).
    private(set) var byAnswerKey: [String: Seqs] = [:]

    enum Seqs: Equatable {
        case one(Int64)
        case many([Int64])

        var all: [Int64] {
            switch self {
            case let .one(seq): [seq]
            case let .many(seqs): seqs
            }
        }
    }
    private(set) var pendingCount = 0
    /// Taken effects nothing answers, waiting for the host's next take to acknowledge them.
    private(set) var takenUnanswerable: Set<Int64> = []

    init(effects: [Effect] = []) {
        for e in effects.sorted(by: { $0.seq < $1.seq }) { insert(e) }
    }

    mutating func insert(_ e: Effect) {
        bySeq[e.seq] = e
        if let key = e.answerKey, let earlier = byAnswerKey.updateValue(.one(e.seq), forKey: key) {
            // Nearly always the only one on record for its key: stored with one lookup, and
            // joined to the earlier ones when there are some.
            byAnswerKey[key] = .many(earlier.all + [e.seq])
        }
        if e.taken, AnswerKey.answeredByTaking(e.answerKey) { takenUnanswerable.insert(e.seq) }
        if !e.taken {
            if let last = pendingOrder.last, last > e.seq {
                pendingOrder.append(e.seq)
                pendingOrder.sort()
                pendingHead = 0
            } else {
                pendingOrder.append(e.seq)
            }
            pendingCount += 1
        }
    }

    mutating func markTaken(_ seq: Int64) {
        guard let i = bySeq.index(forKey: seq) else { return }
        // Read and written in place, through one access: reading a field of `values[i]` copies
        // the whole effect (its body and strings retained, then released).
        guard let unanswerable = Self.take(&bySeq.values[i]) else { return }
        pendingCount -= 1
        if unanswerable { takenUnanswerable.insert(seq) }
    }

    /// Marks `e` taken; nil if it was already, else whether taking it answers it.
    private static func take(_ e: inout Effect) -> Bool? {
        guard !e.taken else { return nil }
        e.taken = true
        return AnswerKey.answeredByTaking(e.answerKey)
    }

    mutating func remove(_ seq: Int64) {
        guard let e = bySeq.removeValue(forKey: seq) else { return }
        if !e.taken { pendingCount -= 1 }
        if e.taken, !takenUnanswerable.isEmpty { takenUnanswerable.remove(seq) }
        if let key = e.answerKey, let i = byAnswerKey.index(forKey: key) {
            switch byAnswerKey.values[i] {
            case .one:
                byAnswerKey.remove(at: i)
            case let .many(seqs):
                let rest = seqs.filter { $0 != seq }
                if rest.isEmpty { byAnswerKey.remove(at: i) } else { byAnswerKey.values[i] = rest.count == 1 ? .one(rest[0]) : .many(rest) }
            }
        }
    }

    /// Pending effects in order, skipping those `excluded` (already taken or removed in this call)
    /// and, when `holdingRemote`, those that need the network (``Effect/needsNetwork``).
    func pending(limit: Int, excluded: Set<Int64>, holdingRemote: Bool = false) -> [Effect] {
        var out: [Effect] = []
        // Room made once for what can come (the pending effects, up to 4,096, beyond which growing
        // costs little): grown from empty, each growth copied every effect so far. Not the
        // entries of `pendingOrder`: taken ones stay there until it is compacted.
        out.reserveCapacity(Swift.max(0, Swift.min(limit, pendingCount, 4096)))
        var i = pendingHead
        while i < pendingOrder.count, out.count < limit {
            let seq = pendingOrder[i]
            i += 1
            guard let e = bySeq[seq], !e.taken, !excluded.contains(seq), !(holdingRemote && e.needsNetwork) else { continue }
            out.append(e)
        }
        return out
    }

    /// How many pending effects need the network (held while offline).
    var pendingNeedingNetwork: Int {
        var n = 0
        for i in pendingHead..<pendingOrder.count {
            if let e = bySeq[pendingOrder[i]], !e.taken, e.needsNetwork { n += 1 }
        }
        return n
    }

    /// Drops leading entries that are no longer pending, so taking stays cheap.
    mutating func compact() {
        while pendingHead < pendingOrder.count {
            let seq = pendingOrder[pendingHead]
            if let e = bySeq[seq], !e.taken { break }
            pendingHead += 1
        }
        if pendingHead > 1024, pendingHead * 2 > pendingOrder.count {
            pendingOrder.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    /// After a restart, effects taken but never answered are delivered again, same ids.
    mutating func redeliverTaken() {
        let taken = bySeq.values.filter(\.taken).map(\.seq)
        for seq in taken { bySeq[seq]?.taken = false }
        takenUnanswerable = []
        pendingOrder = bySeq.values.filter { !$0.taken }.map(\.seq).sorted()
        pendingHead = 0
        pendingCount = pendingOrder.count
    }

    /// Whether the effect numbered `seq` is one the store keeps (``Effect/isDurable``); true for
    /// one not on record (a store's row may hold it).
    func isDurable(_ seq: Int64) -> Bool {
        guard let i = bySeq.index(forKey: seq) else { return true }
        return bySeq.values[i].isDurable
    }

    /// The seqs of the effects on record for `answerKey`.
    func seqs(answerKey: String) -> [Int64] { byAnswerKey[answerKey]?.all ?? [] }

    func effects(answerKey: String) -> [Effect] {
        switch byAnswerKey[answerKey] {
        case nil: []
        case let .one(seq): bySeq[seq].map { [$0] } ?? []
        case let .many(seqs): seqs.compactMap { bySeq[$0] }
        }
    }

    var all: [Effect] { bySeq.values.sorted { $0.seq < $1.seq } }
}
