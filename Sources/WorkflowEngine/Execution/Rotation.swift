/// What the scheduler keeps about one workflow: per queue, when it was last served and its
/// current place in that queue's line. Held in the workflow's own entry (``WorkflowEntry`` is
/// one), so that taking turns reads fields instead of looking the workflow's id up in tables of
/// every workflow (a call's turns and their bookkeeping did a dozen such lookups per start).
class LinePlace {
    let id: String
    /// When it was last served in each queue (a counter; 0: never).
    @exclusivity(unchecked) final var lastServed: (remote: Int64, local: Int64) = (0, 0)
    /// Its key in each queue's line (``Rotation``); nil while it is not in that line.
    @exclusivity(unchecked) final var key: (remote: Rotation.Key?, local: Rotation.Key?) = (nil, nil)

    init(id: String) { self.id = id }
}

/// The workflows waiting for a turn in one queue, in turn order: by when each was last served
/// (never served first), ties in the order they arrived.
///
/// Sending a workflow to the back of the line happens after every call that started a run; with
/// an ordered set that is a removal near the front, which shifts every member behind it and
/// re-indexes them all (O(workflows waiting), most of the scheduler's cost with 1,000 of them).
/// Here a workflow's place is an entry in an array kept sorted by turn key: moving to the back
/// appends a new entry and leaves the old one to be skipped (a member's current key is in its
/// ``LinePlace``), so moves are O(1); an arrival lands at its key, near the end in practice.
/// Entries no longer current are dropped from the front as they are passed, and all at once
/// when they outnumber the members.
///
/// A line and its members' places change together: it is a reference, and a line read while it
/// changes is not a snapshot of what it was (the scheduler changes its lines only after a call
/// commits, never while it takes turns).
final class Rotation: Sequence {
    struct Key: Comparable {
        /// When the workflow was last served before it (re)joined the line (0: never).
        var lastServed: Int64
        /// Arrival order, also making every key unique.
        var arrival: Int64

        static func < (a: Key, b: Key) -> Bool { (a.lastServed, a.arrival) < (b.lastServed, b.arrival) }
    }

    /// Whether this is the remote queue's line (its members' keys are ``LinePlace/key``'s `remote`).
    let remote: Bool
    /// Sorted by key; an entry whose key is not its member's current one is stale.
    // No dynamic exclusivity checks (as on the scheduler): a line is read and changed only by
    // its scheduler, under the engine's lock, and never while an access to it is open.
    @exclusivity(unchecked) private var entries: [(key: Key, place: LinePlace)] = []
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var arrivals: Int64 = 0
    /// How many workflows are in line.
    @exclusivity(unchecked) private(set) var count = 0

    init(remote: Bool) { self.remote = remote }

    /// `place`'s current key in this line.
    @inline(__always) func key(of place: LinePlace) -> Key? { remote ? place.key.remote : place.key.local }

    @inline(__always) private func setKey(_ key: Key?, of place: LinePlace) {
        if remote { place.key.remote = key } else { place.key.local = key }
    }

    func contains(_ place: LinePlace) -> Bool { key(of: place) != nil }

    /// Puts `place` in line by `lastServed` (moving it if it was in line already).
    func insert(_ place: LinePlace, lastServed: Int64) {
        arrivals += 1
        let key = Key(lastServed: lastServed, arrival: arrivals)
        if self.key(of: place) == nil { count += 1 }
        setKey(key, of: place)
        var i = entries.count
        while i > head, key < entries[i - 1].key { i -= 1 }
        entries.insert((key, place), at: i)
        compactIfNeeded()
    }

    func remove(_ place: LinePlace) {
        guard key(of: place) != nil else { return }
        setKey(nil, of: place)
        count -= 1
        compactIfNeeded()
    }

    private func isCurrent(_ i: Int) -> Bool { key(of: entries[i].place) == entries[i].key }

    private func compactIfNeeded() {
        while head < entries.count, !isCurrent(head) { head += 1 }
        if entries.count - head > 2 * count + 64 {
            entries = entries[head...].filter { key(of: $0.place) == $0.key }
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

        mutating func next() -> LinePlace? {
            while position < rotation.entries.count {
                defer { position += 1 }
                if rotation.isCurrent(position) { return rotation.entries[position].place }
            }
            return nil
        }
    }
}
