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
        try convert(value, path: name, depth: 0, root: name)
    }

    /// `path` names where a problem is; it is built only as deep as errors need it.
    private static func convert(_ p: UnsafePointer<json_t>, path: @autoclosure () -> String, depth: Int,
                                root: String) throws(EngineError) -> JSON {
        guard depth <= maxDepth else {
            throw .invalid("tooDeep", "\(root) is nested deeper than \(maxDepth) levels", details: ["argument": .string(root)])
        }
        switch p.pointee.type {
        case JSON_OBJECT:
            let mutable = UnsafeMutablePointer(mutating: p)
            var object = JSONObject(minimumCapacity: json_object_size(p))
            var iter = json_object_iter(mutable)
            while let it = iter {
                guard let keyPtr = json_object_iter_key(it), let child = json_object_iter_value(it) else { break }
                let keyLength = json_object_iter_key_len(it)
                let keyBytes = UnsafeRawBufferPointer(start: keyPtr, count: keyLength).bindMemory(to: UInt8.self)
                guard let key = UTF8Text.string(keyBytes) else {
                    throw .invalid("invalidUTF8", "\(path()) has a key that is not valid UTF-8", details: ["argument": .string(path())])
                }
                let value = try convert(child, path: "\(path()).\(key)", depth: depth + 1, root: root)
                object.append(uniqueKey: key, value)
                iter = json_object_iter_next(mutable, it)
            }
            return .object(object)
        case JSON_ARRAY:
            let count = json_array_size(p)
            var array: [JSON] = []
            array.reserveCapacity(count)
            for i in 0..<count {
                guard let child = json_array_get(p, i) else { continue }
                array.append(try convert(child, path: "\(path())[\(i)]", depth: depth + 1, root: root))
            }
            return .array(array)
        case JSON_STRING:
            let length = json_string_length(p)
            guard let chars = json_string_value(p) else { return .string("") }
            let bytes = UnsafeRawBufferPointer(start: chars, count: length).bindMemory(to: UInt8.self)
            guard let s = UTF8Text.string(bytes) else {
                throw .invalid("invalidUTF8", "\(path()) is not valid UTF-8", details: ["argument": .string(path())])
            }
            return .string(s)
        case JSON_INTEGER:
            return .int(Int64(json_integer_value(p)))
        case JSON_REAL:
            return .double(json_real_value(p))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        case JSON_NULL:
            return .null
        default:
            throw .invalid("invalidJSON", "\(path()) is not a JSON value", details: ["argument": .string(path())])
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
