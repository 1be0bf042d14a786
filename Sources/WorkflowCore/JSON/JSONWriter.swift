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
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case let .bool(b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case let .int(i): out.append(contentsOf: String(i).utf8)
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

    /// Appends `s` as a JSON string, escaped as this writer escapes.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0x08: out.append(contentsOf: [0x5C, 0x62])
            case 0x0C: out.append(contentsOf: [0x5C, 0x66])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
        out.append(0x22)
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
