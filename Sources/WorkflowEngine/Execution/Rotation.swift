/// The workflows waiting for a turn in one queue, in turn order: by when each was last served
/// (never served first), ties in the order they arrived.
///
/// Sending a workflow to the back of the line happens after every call that started a run; with
/// an ordered set that is a removal near the front, which shifts every member behind it and
/// re-indexes them all (O(workflows waiting), most of the scheduler's cost with 1,000 of them).
/// Here a workflow's place is an entry in an array kept sorted by turn key: moving to the back
/// appends a new entry and leaves the old one to be skipped (a member's current key is in a
/// table), so moves are O(1); an arrival lands at its key, near the end in practice. Entries no
/// longer current are dropped from the front as they are passed, and all at once when they
/// outnumber the members.
struct Rotation: Sequence {
    struct Key: Comparable {
        /// When the workflow was last served before it (re)joined the line (0: never).
        var lastServed: Int64
        /// Arrival order, also making every key unique.
        var arrival: Int64

        static func < (a: Key, b: Key) -> Bool { (a.lastServed, a.arrival) < (b.lastServed, b.arrival) }
    }

    /// Sorted by key; an entry whose key is not its workflow's current one is stale.
    private var entries: [(key: Key, id: String)] = []
    private var head = 0
    private var current: [String: Key] = [:]
    private var arrivals: Int64 = 0

    var count: Int { current.count }

    func contains(_ id: String) -> Bool { current[id] != nil }

    /// Puts `id` in line by `lastServed` (moving it if it was in line already).
    mutating func insert(_ id: String, lastServed: Int64) {
        arrivals += 1
        let key = Key(lastServed: lastServed, arrival: arrivals)
        current[id] = key
        var i = entries.count
        while i > head, key < entries[i - 1].key { i -= 1 }
        entries.insert((key, id), at: i)
        compactIfNeeded()
    }

    mutating func remove(_ id: String) {
        guard current.removeValue(forKey: id) != nil else { return }
        compactIfNeeded()
    }

    private func isCurrent(_ i: Int) -> Bool { current[entries[i].id] == entries[i].key }

    private mutating func compactIfNeeded() {
        while head < entries.count, !isCurrent(head) { head += 1 }
        if entries.count - head > 2 * current.count + 64 {
            entries = entries[head...].filter { current[$0.id] == $0.key }
            head = 0
        } else if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The workflows in turn order.
    func makeIterator() -> Iterator { Iterator(rotation: self, position: head) }

    struct Iterator: IteratorProtocol {
        let rotation: Rotation
        var position: Int

        mutating func next() -> String? {
            while position < rotation.entries.count {
                defer { position += 1 }
                if rotation.isCurrent(position) { return rotation.entries[position].id }
            }
            return nil
        }
    }
}
