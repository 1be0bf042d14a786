/// An array of records that shares unchanged records between copies and remembers which
/// positions were written since it was last marked clean.
///
/// A call changes a copy of a committed workflow; a `job.update` in a 200-node workflow changes
/// one run. With a plain array, that copy duplicates every record (and the old one frees them
/// all), and finding what to store compares every record. Here each record lives in its own
/// box: a copy of the array copies pointers, a write copies only the record it writes, and the
/// store and the engine's indexes look only at the touched positions, skipping records still
/// shared with the committed copy.
///
/// Value semantics are kept: a box is written only when uniquely referenced, otherwise it is
/// replaced. Equality compares the records. Every write through the subscript (including a
/// member write such as `runs[i].status = …`) and every `append` records its position. A new
/// array counts as wholly changed until ``markClean()``.
/// A record a ``ChangeTrackedArray`` holds. `differsCheaply` may say that two records differ by
/// a field or two read in place (a state, a time) before the full comparison, which copies both
/// records and compares every field (dictionaries by hashing their keys); it must never say so
/// of equal records. It is given the records where they are (reading a field through the pointer
/// copies that field only). The default finds no difference, so the full comparison decides.
public protocol ChangeTrackedRecord: Equatable, Sendable {
    static func differsCheaply(_ a: UnsafePointer<Self>, _ b: UnsafePointer<Self>) -> Bool
}

extension ChangeTrackedRecord {
    @inlinable public static func differsCheaply(_ a: UnsafePointer<Self>, _ b: UnsafePointer<Self>) -> Bool { false }
}

public struct ChangeTrackedArray<Element: ChangeTrackedRecord>: Sendable, Equatable, RandomAccessCollection,
    MutableCollection, ExpressibleByArrayLiteral
{
    // Inlinable throughout, so callers in other modules get code specialised for their records.
    @usableFromInline
    final class Box: @unchecked Sendable {  // written only while uniquely referenced
        // No dynamic exclusivity check: every read of a record goes through here, and a box is
        // written only through this array's `_modify` once it is uniquely referenced, so no
        // access can overlap a write (the check cost about 5 % of a node completion).
        @usableFromInline @exclusivity(unchecked) var value: Element
        @inlinable init(_ value: consuming Element) { self.value = value }
    }

    @usableFromInline var boxes: [Box]
    /// Positions written or appended since ``markClean()``, each once, ascending. (Each once: a
    /// call that writes one record thousands of times, a clock advanced over weeks of polls, must
    /// not make every later look at the touched positions longer.)
    public var touched: TouchedPositions { TouchedPositions(low: _touchedLow, high: _touchedHigh) }
    /// One bit per touched position: positions 0–63 inline (no allocation for the usual
    /// workflow: a list of the positions cost an array for every record array a call wrote), the
    /// others in `_touchedHigh` (word `w` holds positions `64 * (w + 1)` and up).
    @usableFromInline var _touchedLow: UInt64 = 0
    @usableFromInline var _touchedHigh: [UInt64]? = nil  // nil, not empty: a copy retains nothing
    /// Set by the initialisers, cleared by ``markClean()``: every position counts as touched.
    public private(set) var wholesale: Bool

    public init(_ elements: [Element] = []) {
        self.boxes = elements.map { Box($0) }
        self.wholesale = !elements.isEmpty
    }

    public init(arrayLiteral elements: Element...) { self.init(elements) }

    /// The records, as a plain array.
    public var elements: [Element] { boxes.map(\.value) }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { boxes.count }
    @inlinable public func index(after i: Int) -> Int { i + 1 }
    @inlinable public func index(before i: Int) -> Int { i - 1 }

    @inlinable public subscript(position: Int) -> Element {
        // `_read`, not `get`: `runs[i].status` reads in place instead of copying the record.
        _read { yield boxes[position].value }
        set {
            touch(position)
            boxes[position] = Box(newValue)
        }
        _modify {
            touch(position)
            if !isKnownUniquelyReferenced(&boxes[position]) { boxes[position] = Box(boxes[position].value) }
            yield &boxes[position].value
        }
    }

    /// Calls `body` with the record at `position` where it is: passing `self[position]` to a
    /// function copies the record (every string, array and dictionary in it retained, then
    /// released), since a box is a class whose record could change during the call; reading
    /// through the pointer copies only the fields read. The pointer is valid only inside `body`,
    /// which must not write to this array.
    @inlinable public func withRecord<R>(at position: Int, _ body: (UnsafePointer<Element>) throws -> R) rethrows -> R {
        let box = boxes[position]
        return try withUnsafeMutablePointer(to: &box.value) { try body($0) }
    }

    /// Whether some record passes `test`, read where it is (``withRecord(at:_:)``). With
    /// `onlyTouched`, only the positions written since ``markClean()`` are read (every one when
    /// the array is ``wholesale``): for a caller that knows no record passed it when the array was
    /// marked clean, so that only what was written since can.
    @inlinable public func containsRecord(onlyTouched: Bool, _ test: (UnsafePointer<Element>) -> Bool) -> Bool {
        if onlyTouched, !wholesale {
            for i in touched where i < count && withRecord(at: i, test) { return true }
            return false
        }
        return indices.contains { withRecord(at: $0, test) }
    }

    /// Appends a record (`consuming`: a caller that is done with its record hands it over
    /// instead of the box copying it).
    @inlinable public mutating func append(_ element: consuming Element) {
        touch(boxes.count)
        boxes.append(Box(element))
    }

    /// Records `position` as touched, once.
    @inlinable mutating func touch(_ position: Int) {
        let bit = UInt64(1) << UInt64(position & 63)
        if position < 64 {
            _touchedLow |= bit
        } else {
            let word = (position >> 6) - 1
            var high = _touchedHigh ?? []
            _touchedHigh = nil  // `high` the only reference
            if word >= high.count { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
            high[word] |= bit
            _touchedHigh = high
        }
    }

    /// Forgets what was touched: the array now counts as unchanged.
    public mutating func markClean() {
        _touchedLow = 0
        _touchedHigh = nil
        wholesale = false
    }

    /// The positions, ascending and each once, whose record differs from `old`'s (positions past
    /// `old`'s end always count). Unless the array is ``wholesale``, only touched positions are
    /// compared: `self` must then be `old` plus writes.
    public func changedPositions(since old: ChangeTrackedArray) -> TouchedPositions {
        var out = TouchedPositions.Builder()
        if wholesale {
            for i in boxes.indices where !old.same(i, as: self) { out.insert(i) }
            return out.positions
        }
        for i in touched where i < boxes.count && !old.same(i, as: self) { out.insert(i) }
        return out.positions
    }

    /// Whether position `i` holds the same record in both (shared, or equal). A record written
    /// since usually differs in a field the cheap check reads in place; only otherwise are the
    /// two compared whole.
    private func same(_ i: Int, as other: ChangeTrackedArray) -> Bool {
        guard i < boxes.count, i < other.boxes.count else { return false }
        let (a, b) = (boxes[i], other.boxes[i])
        if a === b { return true }
        // Both read where they are: `a.value == b.value` copied the two records out of their
        // boxes (every string and table in them retained, then released) for the comparison.
        return withUnsafeMutablePointer(to: &a.value) { x in
            withUnsafeMutablePointer(to: &b.value) { y in
                if Element.differsCheaply(x, y) {
                    assert(x.pointee != y.pointee, "differsCheaply said that two equal \(Element.self) records differ")
                    return false
                }
                return x.pointee == y.pointee
            }
        }
    }

    public static func == (a: ChangeTrackedArray, b: ChangeTrackedArray) -> Bool {
        a.boxes.count == b.boxes.count && a.boxes.indices.allSatisfy { a.same($0, as: b) }
    }
}

/// The positions a ``ChangeTrackedArray`` wrote or appended since it was marked clean, ascending,
/// read from its bits.
public struct TouchedPositions: Sequence, Equatable, Sendable {
    @usableFromInline let low: UInt64
    /// The words from position 64 up; nil when there is none (the usual case: a copy of the
    /// positions, or of the changes holding them, then retains nothing).
    @usableFromInline let high: [UInt64]?

    @inlinable init(low: UInt64, high: [UInt64]?) {
        self.low = low
        self.high = high
    }

    public var isEmpty: Bool { low == 0 && (high?.allSatisfy { $0 == 0 } ?? true) }

    /// How many positions.
    public var count: Int { (high ?? []).reduce(low.nonzeroBitCount) { $0 + $1.nonzeroBitCount } }

    /// Every position below `n`.
    public init(below n: Int) {
        var b = Builder()
        for i in 0..<n { b.insert(i) }
        self = b.positions
    }

    /// Positions inserted in any order, each kept once.
    public struct Builder {
        @usableFromInline var low: UInt64 = 0
        @usableFromInline var high: [UInt64] = []

        public init() {}

        @inlinable public mutating func insert(_ p: Int) {
            if p < 64 {
                low |= UInt64(1) << UInt64(p)
            } else {
                let w = (p >> 6) - 1
                if w >= high.count { high.append(contentsOf: repeatElement(0, count: w - high.count + 1)) }
                high[w] |= UInt64(1) << UInt64(p & 63)
            }
        }

        public var positions: TouchedPositions { TouchedPositions(low: low, high: high.isEmpty ? nil : high) }
    }

    public static func == (a: TouchedPositions, b: TouchedPositions) -> Bool { a.elementsEqual(b) }

    @inlinable public func makeIterator() -> Iterator { Iterator(word: low, high: high) }

    public struct Iterator: IteratorProtocol {
        @usableFromInline var word: UInt64
        /// The word being read: -1 for `low`, else an index of `high`.
        @usableFromInline var index = -1
        @usableFromInline let high: [UInt64]?

        @inlinable init(word: UInt64, high: [UInt64]?) {
            self.word = word
            self.high = high
        }

        @inlinable public mutating func next() -> Int? {
            while word == 0 {
                index += 1
                guard let high, index < high.count else { return nil }
                word = high[index]
            }
            let bit = word.trailingZeroBitCount
            word &= word &- 1
            return (index + 1) * 64 + bit
        }
    }
}

extension TouchedPositions: ExpressibleByArrayLiteral {
    /// Positions as a literal, for comparisons (`array.touched == [1, 64]`).
    public init(arrayLiteral positions: Int...) {
        var b = Builder()
        for p in positions { b.insert(p) }
        self = b.positions
    }
}
