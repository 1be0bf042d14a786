import CJansson
import WorkflowCore

import Glibc

/// A static empty C string, for empty buffers whose base address is nil.
nonisolated(unsafe) private let emptyCString: UnsafeMutablePointer<CChar> = strdup("")!

/// Conversion between Jansson values and the engine's ``JSON`` (public for the benchmark).
public enum JanssonBridge {
    static let maxDepth = 512

    /// Converts a borrowed `json_t`. Strings must be valid UTF-8; nesting is limited to
    /// ``maxDepth``. `name` is the argument's name for error messages.
    public static func toJSON(_ value: UnsafePointer<json_t>, name: String) throws(EngineError) -> JSON {
        // The cache is scratch space for this call only, on the stack where it fits.
        let result = withUnsafeTemporaryAllocation(of: ShortStrings.Slot.self, capacity: ShortStrings.slots) {
            slots -> Result<JSON, Failure> in
            let strings = ShortStrings(slots)
            defer { strings.release() }
            do throws(Failure) {
                return .success(try convert(value, depth: 0, strings: strings))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case let .success(json): return json
        case let .failure(failure): throw failure.engineError(root: name)
        }
    }

    /// Where conversion failed: what went wrong, and the path to it (innermost step first),
    /// collected while the error unwinds so that successful conversions never build paths.
    private struct Failure: Error {
        enum Problem { case tooDeep, keyNotUTF8, stringNotUTF8, notJSON, notFinite }
        enum Step {
            case key(String)
            case index(Int)
        }

        let problem: Problem
        var steps: [Step] = []

        func engineError(root: String) -> EngineError {
            var path = root
            for step in steps.reversed() {
                switch step {
                case let .key(key): path = "\(path).\(key)"
                case let .index(i): path = "\(path)[\(i)]"
                }
            }
            switch problem {
            case .tooDeep:
                return .invalid("tooDeep", "\(root) is nested deeper than \(maxDepth) levels",
                                details: ["argument": .string(root)])
            case .keyNotUTF8:
                return .invalid("invalidUTF8", "\(path) has a key that is not valid UTF-8", details: ["argument": .string(path)])
            case .stringNotUTF8:
                return .invalid("invalidUTF8", "\(path) is not valid UTF-8", details: ["argument": .string(path)])
            case .notJSON:
                return .invalid("invalidJSON", "\(path) is not a JSON value", details: ["argument": .string(path)])
            case .notFinite:
                // JSON has no NaN or infinity; Jansson's constructors refuse them, a json_t
                // written by hand may not.
                return .invalid("invalidJSON", "\(path) is a real that is not finite (NaN or infinity), which JSON cannot hold",
                                details: ["argument": .string(path)])
            }
        }
    }

    /// Short strings already decoded during one conversion, by their bytes. Keys and small values
    /// (`"id"`, `"ImageRef"`, node ids) repeat throughout a template; a hit skips UTF-8 validation
    /// and decoding. Only strings that decoded successfully are stored, so errors are unchanged.
    /// Lives for one ``toJSON`` call.
    struct ShortStrings {
        static let slots = 256
        struct Slot {
            /// The string's bytes, zero-padded, its length in the top byte; all zeros is "".
            var words: (UInt64, UInt64)
            var string: String
        }

        let slots: UnsafeMutableBufferPointer<Slot>

        init(_ slots: UnsafeMutableBufferPointer<Slot>) {
            slots.initialize(repeating: Slot(words: (0, 0), string: ""))
            self.slots = slots
        }

        func release() {
            _ = slots.deinitialize()
        }

        /// The string for `count` bytes at `bytes`, or nil when they are not valid UTF-8.
        @inline(__always)
        func string(_ bytes: UnsafeRawPointer, count: Int) -> String? {
            guard count <= 15 else {
                return UTF8Text.string(UnsafeRawBufferPointer(start: bytes, count: count).bindMemory(to: UInt8.self))
            }
            var packed: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &packed) { $0.baseAddress!.copyMemory(from: bytes, byteCount: count) }
            packed.1 |= UInt64(count) << 56
            let h = (packed.0 &* 0x9E37_79B9_7F4A_7C15) ^ (packed.1 &* 0xC2B2_AE3D_27D4_EB4F)
            let slot = Int(truncatingIfNeeded: (h ^ (h >> 29)) & UInt64(Self.slots - 1))
            if slots[slot].words == packed { return slots[slot].string }
            guard let s = UTF8Text.string(UnsafeRawBufferPointer(start: bytes, count: count).bindMemory(to: UInt8.self))
            else { return nil }
            slots[slot] = Slot(words: packed, string: s)
            return s
        }
    }

    private static func convert(_ p: UnsafePointer<json_t>, depth: Int, strings: ShortStrings) throws(Failure) -> JSON {
        // Containers count, from 1 at the top, as in JSONParser: the 513th nested one is too
        // deep, whatever it holds (an empty one too). A scalar adds no level.
        switch p.pointee.type {
        case JSON_OBJECT:
            guard depth < maxDepth else { throw Failure(problem: .tooDeep) }
            let mutable = UnsafeMutablePointer(mutating: p)
            var members: [JSONObject.Member] = []
            members.reserveCapacity(json_object_size(p))
            var iter = json_object_iter(mutable)
            while let it = iter {
                guard let keyPtr = json_object_iter_key(it), let child = json_object_iter_value(it) else { break }
                guard let key = strings.string(keyPtr, count: json_object_iter_key_len(it)) else {
                    throw Failure(problem: .keyNotUTF8)
                }
                let value: JSON
                do {
                    value = try convert(child, depth: depth + 1, strings: strings)
                } catch {
                    var failure = error
                    failure.steps.append(.key(key))
                    throw failure
                }
                members.append(JSONObject.Member(key: key, value: value))
                iter = json_object_iter_next(mutable, it)
            }
            return .object(JSONObject(uniqueMembers: members))
        case JSON_ARRAY:
            guard depth < maxDepth else { throw Failure(problem: .tooDeep) }
            let count = json_array_size(p)
            var array: [JSON] = []
            array.reserveCapacity(count)
            for i in 0..<count {
                guard let child = json_array_get(p, i) else { continue }
                do {
                    array.append(try convert(child, depth: depth + 1, strings: strings))
                } catch {
                    var failure = error
                    failure.steps.append(.index(i))
                    throw failure
                }
            }
            return .array(array)
        case JSON_STRING:
            guard let chars = json_string_value(p) else { return .string("") }
            guard let s = strings.string(chars, count: json_string_length(p)) else {
                throw Failure(problem: .stringNotUTF8)
            }
            return .string(s)
        case JSON_INTEGER:
            return .int(Int64(json_integer_value(p)))
        case JSON_REAL:
            let d = json_real_value(p)
            guard d.isFinite else { throw Failure(problem: .notFinite) }
            return .double(d)
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        case JSON_NULL:
            return .null
        default:
            throw Failure(problem: .notJSON)
        }
    }

    /// A new `json_t` (new reference) for `value`; nil only when Jansson cannot allocate.
    public static func toJansson(_ value: JSON) -> UnsafeMutablePointer<json_t>? {
        switch value {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .int(let i): return json_integer(json_int_t(i))
        case .double(let d): return d.isFinite ? json_real(d) : json_null()
        case .string(let s):
            var copy = s
            return copy.withUTF8 { buf in
                buf.withMemoryRebound(to: CChar.self) { json_stringn_nocheck($0.baseAddress ?? UnsafePointer(emptyCString), buf.count) }
            }
        case .array(let a):
            guard let array = json_array() else { return nil }
            for element in a {
                guard let child = toJansson(element), json_array_append_new(array, child) == 0 else {
                    json_decref(array)
                    return nil
                }
            }
            return array
        case .object(let o):
            guard let object = json_object() else { return nil }
            for (key, element) in o {
                guard let child = toJansson(element) else {
                    json_decref(object)
                    return nil
                }
                var k = key
                let status = k.withUTF8 { buf in
                    buf.withMemoryRebound(to: CChar.self) {
                        json_object_setn_new_nocheck(object, $0.baseAddress ?? UnsafePointer(emptyCString), buf.count, child)
                    }
                }
                guard status == 0 else {
                    json_decref(object)
                    return nil
                }
            }
            return object
        }
    }
}
