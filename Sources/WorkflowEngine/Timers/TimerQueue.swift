import HeapModule
import WorkflowCore

/// Deadlines by key (a workflow id, a cache entry), earliest first, with ties broken by an
/// order number so firing is deterministic.
///
/// Each key has at most one live deadline; older heap entries for a key are skipped lazily.
/// Changes made during a call are staged (``Staged``) and applied only when the call commits.
struct TimerQueue {
    struct Entry: Comparable {
        var at: Timestamp
        var order: Int64
        var key: String
        static func < (a: Entry, b: Entry) -> Bool { (a.at, a.order, a.key) < (b.at, b.order, b.key) }
    }

    private(set) var heap = Heap<Entry>()
    private(set) var deadlines: [String: (at: Timestamp, order: Int64)] = [:]

    mutating func set(_ key: String, at: Timestamp?, order: Int64) {
        if let at {
            if let current = deadlines[key], current.at == at { return }
            deadlines[key] = (at, order)
            heap.insert(Entry(at: at, order: order, key: key))
        } else {
            deadlines[key] = nil
        }
        compactIfNeeded()
    }

    func deadline(_ key: String) -> Timestamp? { deadlines[key]?.at }

    /// The earliest live entry whose key is not in `excluded`. Entries of excluded keys (keys a
    /// call has changed) are moved to `setAside`; a call puts them back with ``restore(_:)``
    /// whether it rolls back or commits (then ``apply(_:)`` sets its staged deadlines: an entry
    /// whose deadline changed is stale from then on and dropped when reached).
    mutating func earliest(excluding excluded: Set<String>, setAside: inout [Entry]) -> Entry? {
        while let top = heap.min {
            guard let live = deadlines[top.key], live.at == top.at else {
                _ = heap.popMin()  // stale for good
                continue
            }
            if excluded.contains(top.key) {
                setAside.append(heap.popMin()!)
                continue
            }
            return top
        }
        return nil
    }

    mutating func restore(_ setAside: [Entry]) {
        for e in setAside { heap.insert(e) }
    }

    private mutating func compactIfNeeded() {
        guard heap.count > 64, heap.count > deadlines.count * 4 else { return }
        heap = Heap(deadlines.map { Entry(at: $0.value.at, order: $0.value.order, key: $0.key) })
    }

    /// Deadlines changed during one call.
    struct Staged {
        var deadlines: [String: (at: Timestamp?, order: Int64)] = [:]
        var heap = Heap<Entry>()
        var keys: Set<String> = []

        mutating func set(_ key: String, at: Timestamp?, order: Int64) {
            deadlines[key] = (at, order)
            keys.insert(key)
            if let at { heap.insert(Entry(at: at, order: order, key: key)) }
        }

        mutating func earliest() -> Entry? {
            while let top = heap.min {
                if let live = deadlines[top.key], live.at == top.at { return top }
                _ = heap.popMin()
            }
            return nil
        }
    }

    /// The earliest deadline considering a call's staged changes.
    mutating func earliest(with staged: inout Staged, setAside: inout [Entry]) -> Entry? {
        let committed = earliest(excluding: staged.keys, setAside: &setAside)
        let fresh = staged.earliest()
        switch (committed, fresh) {
        case let (c?, f?): return f < c ? f : c
        case let (c?, nil): return c
        case let (nil, f?): return f
        default: return nil
        }
    }

    mutating func apply(_ staged: Staged) {
        for (key, value) in staged.deadlines { set(key, at: value.at, order: value.order) }
    }
}
