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

    /// Appends `value` as compact JSON, for writers that build a larger text around it.
    public static func write(_ value: JSON, into out: inout [UInt8]) {
        write(value, into: &out, options: .compact, indent: 0)
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
    public static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else {
            out.append(contentsOf: Array("null".utf8))
            return
        }
        // Swift's description is the shortest text that round-trips, and always shows a
        // fraction or an exponent ("4.0", "1e-05"), so a real stays a real.
        out.append(contentsOf: d.description.utf8)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    @inline(__always) private static func appendLiteral(_ s: StaticString, into out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Appends `i` in decimal, as `String(i)` spells it, without making a string.
    public static func writeInt(_ i: Int64, into out: inout [UInt8]) {
        if i >= 0 && i < 10 {
            out.append(0x30 + UInt8(i))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: 19 digits and a sign fit
        var magnitude = i.magnitude
        withUnsafeMutableBytes(of: &digits) { buf in
            var at = buf.count
            while magnitude > 0 {
                at -= 1
                buf[at] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if i < 0 {
                at -= 1
                buf[at] = 0x2D
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[at...]))
        }
    }

    /// Appends `s` as a JSON string, escaped as this writer escapes. Runs of bytes that need no
    /// escape are copied whole.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { buf in
            var start = 0
            for i in buf.indices where buf[i] < 0x20 || buf[i] == 0x22 || buf[i] == 0x5C {
                if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start..<i])) }
                escape(buf[i], into: &out)
                start = i + 1
            }
            if start < buf.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[start...])) }
        }
        out.append(0x22)
    }

    /// The escape of one byte that needs one (a quote, a backslash, a control character).
    private static func escape(_ b: UInt8, into out: inout [UInt8]) {
        switch b {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
        case 0x0D: out.append(contentsOf: [0x5C, 0x72])
        case 0x09: out.append(contentsOf: [0x5C, 0x74])
        case 0x08: out.append(contentsOf: [0x5C, 0x62])
        case 0x0C: out.append(contentsOf: [0x5C, 0x66])
        default: out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
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
