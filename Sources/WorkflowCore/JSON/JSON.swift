/// A JSON value, as it crosses every boundary of the engine.
///
/// Integers and reals are kept apart (`steps: 30` stays `30`, `cfg: 4.0` stays `4.0`), so what a
/// host sends is what it gets back, and parameter digests read the way they were written.
/// Objects keep their insertion order; ``JSONWriter`` can sort keys for canonical output.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.int(a), .double(b)): return Double(a) == b
        case let (.double(a), .int(b)): return a == Double(b)
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }
}

// MARK: - Accessors

extension JSON {
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var stringValue: String? { if case let .string(s) = self { return s } else { return nil } }

    public var boolValue: Bool? { if case let .bool(b) = self { return b } else { return nil } }

    /// The value as an integer: an integer, or a real with no fractional part.
    public var intValue: Int64? {
        switch self {
        case let .int(i): return i
        case let .double(d):
            guard d.isFinite, d.rounded() == d, abs(d) < 9.2e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The value as a real: a real or an integer.
    public var doubleValue: Double? {
        switch self {
        case let .int(i): return Double(i)
        case let .double(d): return d
        default: return nil
        }
    }

    public var arrayValue: [JSON]? { if case let .array(a) = self { return a } else { return nil } }

    public var objectValue: JSONObject? { if case let .object(o) = self { return o } else { return nil } }

    public var isNumber: Bool {
        switch self { case .int, .double: return true; default: return false }
    }

    /// Member of an object, or nil when this is not an object or has no such key.
    public subscript(key: String) -> JSON? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    /// Element of an array, or nil when out of range or not an array.
    public subscript(index: Int) -> JSON? {
        if case let .array(a) = self, index >= 0, index < a.count { return a[index] }
        return nil
    }

    /// The JSON type's name as used in error messages: "object", "string", "integer", ...
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

// MARK: - Literals

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var o = JSONObject(minimumCapacity: elements.count)
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension JSON {
    public init(_ value: Int) { self = .int(Int64(value)) }
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
    public init(_ value: [String]) { self = .array(value.map { .string($0) }) }
}

/// A JSON object: string keys to values, in insertion order.
///
/// Lookups scan the keys, which is fastest for the small objects that make up almost all
/// traffic; code that indexes a large object many times converts it to a dictionary first.
/// Members live in one array, so building an object costs one allocation.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Member: Sendable {
        public var key: String
        public var value: JSON

        @inlinable public init(key: String, value: JSON) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var members: [Member]

    public init() { members = [] }

    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
    }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(minimumCapacity: elements.count)
        for (k, v) in elements { self[k] = v }
    }

    /// Builds an object from members whose keys the caller guarantees to be unique.
    public init(uniqueMembers: [Member]) { members = uniqueMembers }

    /// Builds an object from pairs whose keys the caller guarantees to be unique.
    public init<S: Sequence>(uniqueKeysWithValues pairs: S) where S.Element == (String, JSON) {
        members = pairs.map { Member(key: $0.0, value: $0.1) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var values: [JSON] { members.map(\.value) }

    /// The position of the member whose key has exactly `key`'s bytes. Swift's `String ==` also
    /// calls canonically equivalent spellings equal (`café` precomposed and decomposed); JSON
    /// keys are the code points written, so two such keys are two members. Keys of another
    /// length in bytes are passed over before `==` (the common miss, and `==` on two strings
    /// that differ goes through Swift's comparison routine); the byte check runs only on a hit.
    public func index(of key: String) -> Int? {
        let length = key.utf8.count
        for i in members.indices where members[i].key.utf8.count == length && members[i].key == key
            && members[i].key.hasSameBytes(as: key)
        {
            return i
        }
        return nil
    }

    /// Reading returns the member or nil; writing nil removes the key; writing a value replaces it in
    /// place or appends it.
    public subscript(key: String) -> JSON? {
        get {
            guard let i = index(of: key) else { return nil }
            return members[i].value
        }
        set {
            if let i = index(of: key) {
                if let newValue {
                    members[i].value = newValue
                } else {
                    members.remove(at: i)
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Appends a member whose key the caller guarantees is not present yet.
    public mutating func append(uniqueKey key: String, _ value: JSON) {
        members.append(Member(key: key, value: value))
    }

    /// Puts a member first, whose key the caller guarantees is not present yet (in place when the
    /// object has room: the members after it move up).
    public mutating func prepend(uniqueKey key: String, _ value: JSON) {
        members.insert(Member(key: key, value: value), at: 0)
    }

    public func contains(_ key: String) -> Bool { index(of: key) != nil }

    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Member]>
        public mutating func next() -> (key: String, value: JSON)? {
            guard let m = base.next() else { return nil }
            return (m.key, m.value)
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }

    /// Members sorted by key (Unicode scalar order), as canonical output needs.
    public var sortedByKey: [(key: String, value: JSON)] {
        members.map { ($0.key, $0.value) }
            .sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
    }

    /// The members as a dictionary, for repeated lookups in large objects.
    public var dictionary: [String: JSON] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Equal members, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var sameOrder = true
        for i in lhs.members.indices where !(lhs.members[i].key == rhs.members[i].key
                                             && lhs.members[i].key.hasSameBytes(as: rhs.members[i].key)) {
            sameOrder = false
            break
        }
        if sameOrder {
            for i in lhs.members.indices where lhs.members[i].value != rhs.members[i].value { return false }
            return true
        }
        for m in lhs.members {
            guard let other = rhs[m.key], other == m.value else { return false }
        }
        return true
    }

    /// A copy with `other`'s members merged in: objects merge recursively, anything else replaces.
    public func merging(_ other: JSONObject) -> JSONObject {
        var result = self
        for (k, v) in other {
            if case let .object(mine)? = result[k], case let .object(theirs) = v {
                result[k] = .object(mine.merging(theirs))
            } else {
                result[k] = v
            }
        }
        return result
    }
}

/// UTF-8 text to `String`, validating. ASCII, the common case, takes a fast path.
public enum UTF8Text {
    public static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for b in bytes where b >= 0x80 {
            ascii = false
            break
        }
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension String {
    /// Whether the two strings are the same bytes (UTF-8), where `==` also calls another spelling
    /// of the same text equal (`é` precomposed and decomposed). Ids and keys compare so.
    @inlinable public func hasSameBytes(as other: String) -> Bool {
        let (a, b) = (utf8, other.utf8)
        guard a.count == b.count else { return false }
        // Over the bytes in place (native strings, small ones too): the generic elementsEqual
        // walks the views an index at a time, and this runs on every key and node id looked up.
        let inPlace = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in
                for i in 0..<x.count where x[i] != y[i] { return false }
                return true
            }
        }
        if let inPlace, let same = inPlace { return same }
        return a.elementsEqual(b)
    }
}
