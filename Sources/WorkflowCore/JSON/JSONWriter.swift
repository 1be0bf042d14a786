/// Where a writer appends JSON text: an array of bytes, or a buffer of a writer's own whose
/// appends cost less than `Array`'s (the store writes a record's text for every row it commits).
public protocol JSONByteSink {
    mutating func appendByte(_ byte: UInt8)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer)
    /// `bytes` between double quotes (a string that needs no escape).
    mutating func appendQuoted(_ bytes: UnsafeRawBufferPointer)
}

extension JSONByteSink {
    @inlinable public mutating func appendQuoted(_ bytes: UnsafeRawBufferPointer) {
        appendByte(0x22)
        appendBytes(bytes)
        appendByte(0x22)
    }
}

extension Array: JSONByteSink where Element == UInt8 {
    @inlinable public mutating func appendByte(_ byte: UInt8) { append(byte) }
    @inlinable public mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }
}

/// Serialises ``JSON`` to text.
///
/// `compact` output is what crosses the C boundary and goes into the store; `pretty` with
/// `sortKeys` is the canonical, diff-friendly form (two-space indent, one member per line,
/// keys in Unicode scalar order, a final newline).
public struct JSONWriter {
    public struct Options: Sendable {
        public var pretty: Bool
        public var sortKeys: Bool
        public init(pretty: Bool = false, sortKeys: Bool = false) {
            self.pretty = pretty
            self.sortKeys = sortKeys
        }
        public static let compact = Options()
        public static let canonical = Options(pretty: true, sortKeys: true)
    }

    public static func string(_ value: JSON, options: Options = .compact) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, options: options, indent: 0)
        if options.pretty { out.append(0x0A) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func bytes(_ value: JSON, options: Options = .compact) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, options: options, indent: 0)
        if options.pretty { out.append(0x0A) }
        return out
    }

    /// Appends `value` as compact JSON, for writers that build a larger text around it: the
    /// same bytes as ``bytes(_:options:)`` with `.compact`.
    @inlinable
    public static func write<Sink: JSONByteSink>(_ value: JSON, into out: inout Sink) {
        switch value {
        case .null: appendLiteral("null", into: &out)
        case let .bool(b): appendLiteral(b ? "true" : "false", into: &out)
        case let .int(i): writeInt(i, into: &out)
        case let .double(d): writeDouble(d, into: &out)
        case let .string(s): writeString(s, into: &out)
        case let .array(a):
            out.appendByte(0x5B)
            for (i, element) in a.enumerated() {
                if i > 0 { out.appendByte(0x2C) }
                write(element, into: &out)
            }
            out.appendByte(0x5D)
        case let .object(o):
            out.appendByte(0x7B)
            var first = true
            for (k, v) in o {
                if !first { out.appendByte(0x2C) }
                first = false
                writeString(k, into: &out)
                out.appendByte(0x3A)
                write(v, into: &out)
            }
            out.appendByte(0x7D)
        }
    }

    static func write(_ value: JSON, into out: inout [UInt8], options: Options, indent: Int) {
        switch value {
        case .null: appendLiteral("null", into: &out)
        case let .bool(b): appendLiteral(b ? "true" : "false", into: &out)
        case let .int(i): writeInt(i, into: &out)
        case let .double(d): writeDouble(d, into: &out)
        case let .string(s): writeString(s, into: &out)
        case let .array(a):
            if a.isEmpty {
                out.append(contentsOf: [0x5B, 0x5D])
                return
            }
            out.append(0x5B)
            for (i, element) in a.enumerated() {
                if i > 0 { out.append(0x2C) }
                newline(&out, options: options, indent: indent + 1)
                write(element, into: &out, options: options, indent: indent + 1)
            }
            newline(&out, options: options, indent: indent)
            out.append(0x5D)
        case let .object(o):
            if o.isEmpty {
                out.append(contentsOf: [0x7B, 0x7D])
                return
            }
            out.append(0x7B)
            var first = true
            func member(_ key: String, _ v: JSON) {
                if !first { out.append(0x2C) }
                first = false
                newline(&out, options: options, indent: indent + 1)
                writeString(key, into: &out)
                out.append(0x3A)
                if options.pretty { out.append(0x20) }
                write(v, into: &out, options: options, indent: indent + 1)
            }
            if options.sortKeys {
                for (k, v) in o.sortedByKey { member(k, v) }
            } else {
                for (k, v) in o { member(k, v) }
            }
            newline(&out, options: options, indent: indent)
            out.append(0x7D)
        }
    }

    @inline(__always) private static func newline(_ out: inout [UInt8], options: Options, indent: Int) {
        guard options.pretty else { return }
        out.append(0x0A)
        for _ in 0..<(indent * 2) { out.append(0x20) }
    }

    /// Appends `d` as JSON (`null` when not finite). For writers of records that build their
    /// text member by member and must match this writer byte for byte.
    @inlinable
    public static func writeDouble<Sink: JSONByteSink>(_ d: Double, into out: inout Sink) {
        guard d.isFinite else {
            appendLiteral("null", into: &out)
            return
        }
        // A whole number below 10^15 is its digits and ".0", as `description` writes it (which
        // switches to an exponent only from 10^16), without making a string: a run's progress
        // is 1 when it ends. Negative zero keeps its sign through `description`.
        if d == d.rounded(.towardZero), d.magnitude < 1e15, !(d == 0 && d.sign == .minus) {
            writeInt(Int64(d), into: &out)
            appendLiteral(".0", into: &out)
            return
        }
        // Swift's description is the shortest text that round-trips, and always shows a
        // fraction or an exponent ("4.0", "1e-05"), so a real stays a real.
        var text = d.description
        text.withUTF8 { out.appendBytes(UnsafeRawBufferPointer($0)) }
    }

    @usableFromInline static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// "00" through "99", for ``writeInt(_:into:)``.
    @usableFromInline static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    @inlinable @inline(__always)
    static func appendLiteral<Sink: JSONByteSink>(_ s: StaticString, into out: inout Sink) {
        // A literal has its text as UTF-8 in place (`withUTF8Buffer` costs more than the copy).
        out.appendBytes(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// Appends `i` in decimal, as `String(i)` spells it, without making a string.
    @inlinable
    public static func writeInt<Sink: JSONByteSink>(_ i: Int64, into out: inout Sink) {
        if i >= 0 && i < 10 {
            out.appendByte(0x30 + UInt8(i))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: 19 digits and a sign fit
        var magnitude = i.magnitude
        withUnsafeMutableBytes(of: &digits) { buf in
            var at = buf.count
            // Two digits at a time (a timestamp in milliseconds has 13), from a table of pairs.
            let pairs = digitPairs.utf8Start
            while magnitude >= 100 {
                let pair = Int(magnitude % 100) &* 2
                magnitude /= 100
                at -= 2
                buf[at] = pairs[pair]
                buf[at + 1] = pairs[pair + 1]
            }
            if magnitude >= 10 {
                let pair = Int(magnitude) &* 2
                at -= 2
                buf[at] = pairs[pair]
                buf[at + 1] = pairs[pair + 1]
            } else if magnitude > 0 {
                at -= 1
                buf[at] = 0x30 + UInt8(magnitude)
            }
            if i < 0 {
                at -= 1
                buf[at] = 0x2D
            }
            out.appendBytes(UnsafeRawBufferPointer(rebasing: buf[at...]))
        }
    }

    /// Appends `s` as a JSON string, escaped as this writer escapes. A string with nothing to
    /// escape (ids, names, states: nearly every string a record holds) is copied whole, after a
    /// scan of eight bytes at a time; otherwise runs of bytes that need no escape are copied whole.
    @inlinable
    public static func writeString<Sink: JSONByteSink>(_ s: String, into out: inout Sink) {
        let copied: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            guard !needsEscape(utf8) else { return false }
            out.appendQuoted(UnsafeRawBufferPointer(utf8))
            return true
        }
        if copied != true { writeEscaped(s, into: &out) }
    }

    /// Whether any byte of `utf8` needs an escape (a control character, a quote, a backslash):
    /// eight bytes at a time, then the rest one by one.
    @inlinable
    static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = utf8.baseAddress else { return false }
        let n = utf8.count
        var i = 0
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= n {
            let x = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            // A byte below 0x20, or equal to a quote or a backslash, sets its high bit here
            // (exact: a byte of 0x80 or more never does).
            let control = (x &- ones &* 0x20) & ~x & highs
            let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
            let equal = ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)
            if control | equal != 0 { return true }
            i += 8
        }
        while i < n {
            let b = p[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return true }
            i += 1
        }
        return false
    }

    /// ``writeString(_:into:)`` for a string that has something to escape.
    @inlinable
    static func writeEscaped<Sink: JSONByteSink>(_ s: String, into out: inout Sink) {
        out.appendByte(0x22)
        var s = s
        s.withUTF8 { buf in
            let raw = UnsafeRawBufferPointer(buf)
            var start = 0
            var i = 0
            while i < raw.count {
                let b = raw[i]
                if b < 0x20 || b == 0x22 || b == 0x5C {
                    if start < i { out.appendBytes(UnsafeRawBufferPointer(rebasing: raw[start..<i])) }
                    escape(b, into: &out)
                    start = i + 1
                }
                i += 1
            }
            if start < raw.count { out.appendBytes(UnsafeRawBufferPointer(rebasing: raw[start...])) }
        }
        out.appendByte(0x22)
    }

    /// The escape of one byte that needs one (a quote, a backslash, a control character).
    @inlinable
    static func escape<Sink: JSONByteSink>(_ b: UInt8, into out: inout Sink) {
        out.appendByte(0x5C)
        switch b {
        case 0x22: out.appendByte(0x22)
        case 0x5C: out.appendByte(0x5C)
        case 0x0A: out.appendByte(0x6E)
        case 0x0D: out.appendByte(0x72)
        case 0x09: out.appendByte(0x74)
        case 0x08: out.appendByte(0x62)
        case 0x0C: out.appendByte(0x66)
        default:
            for c in [0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]] as [UInt8] { out.appendByte(c) }
        }
    }
}

extension JSON {
    /// Compact JSON text.
    public var compactText: String { JSONWriter.string(self) }
    /// Canonical JSON text: pretty, sorted keys, final newline.
    public var canonicalText: String { JSONWriter.string(self, options: .canonical) }
}

extension JSON: CustomStringConvertible {
    public var description: String { compactText }
}
