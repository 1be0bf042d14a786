/// Parses JSON text (RFC 8259) into ``JSON``.
///
/// Strict: invalid UTF-8, trailing commas, comments, leading zeros, lone surrogates and
/// nesting deeper than ``maxDepth`` are errors. Integers that fit in 64 bits stay integers;
/// other numbers become reals. A duplicated key keeps its last value.
public struct JSONParser {
    public static let maxDepth = 512

    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// What kind of problem: hosts report each under its own code (`malformedJSON`,
        /// `tooDeep`, `invalidUTF8`), as they do for a `json_t` argument.
        public enum Kind: Sendable, Equatable {
            /// Not JSON: a syntax error, a bad number or escape, text after the value.
            case syntax
            /// Nesting deeper than ``JSONParser/maxDepth``.
            case tooDeep
            /// A string that is not Unicode text: invalid UTF-8 bytes, or an escaped lone surrogate.
            case invalidUnicode
        }
        public let message: String
        /// Byte offset of the problem in the input.
        public let offset: Int
        public let kind: Kind
        public var description: String { "\(message) at byte \(offset)" }

        public init(message: String, offset: Int, kind: Kind = .syntax) {
            self.message = message
            self.offset = offset
            self.kind = kind
        }
    }

    public static func parse(_ text: String) throws(Failure) -> JSON {
        var copy = text
        let result: Result<JSON, Failure> = copy.withUTF8 { buffer in
            do throws(Failure) { return .success(try parse(bytes: buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func parse(bytes: [UInt8]) throws(Failure) -> JSON {
        let result: Result<JSON, Failure> = bytes.withUnsafeBufferPointer { buffer in
            do throws(Failure) { return .success(try parse(bytes: buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSON {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else {
            throw Failure(message: "unexpected text after the JSON value", offset: parser.position)
        }
        return value
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private func fail(_ message: String, _ kind: Failure.Kind = .syntax) -> Failure {
        Failure(message: message, offset: position, kind: kind)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSON {
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw fail("unexpected end of input") }
        let start = literal.utf8Start
        for i in 0..<count where bytes[position + i] != start[i] {
            throw fail("invalid literal")
        }
        position += count
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSON {
        guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth)", .tooDeep) }
        position += 1  // {
        var object = JSONObject()
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw fail("expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            object[key] = value
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end of input in object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(object)
            }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSON {
        guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth)", .tooDeep) }
        position += 1  // [
        var array: [JSON] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end of input in array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(array)
            }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes.
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                guard let s = UTF8Text.string(slice) else {
                    throw Failure(message: "invalid UTF-8 in string", offset: start, kind: .invalidUnicode)
                }
                position += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw fail("control character in string") }
            position += 1
        }
        // Slow path: unescape into a byte buffer.
        var out: [UInt8] = Array(bytes[start..<position])
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                guard let s = String(validating: out, as: UTF8.self) else {
                    throw Failure(message: "invalid UTF-8 in string", offset: start, kind: .invalidUnicode)
                }
                position += 1
                return s
            }
            if b < 0x20 { throw fail("control character in string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                position += 1
                continue
            }
            position += 1
            guard position < bytes.count else { throw fail("unexpected end of input in escape") }
            let e = bytes[position]
            position += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw fail("lone surrogate in string", .invalidUnicode) }
                    position += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair", .invalidUnicode) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("lone surrogate in string", .invalidUnicode)
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid unicode escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("truncated unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid unicode escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(Failure) -> JSON {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw fail("truncated number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw fail("leading zero in number") }
        } else if isDigit(bytes[position]) {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        } else {
            throw fail("invalid number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid fraction") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid exponent") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else {
            throw Failure(message: "number out of range", offset: start)
        }
        return .double(d)
    }

    @inline(__always) private func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
}

extension JSON {
    /// Parses JSON text; see ``JSONParser``.
    public init(parsing text: String) throws(JSONParser.Failure) {
        self = try JSONParser.parse(text)
    }
}
