import WorkflowCore

/// An op's arguments, read with errors that name the argument: a missing required argument is
/// `WF_EINVALID missingArgument`, a wrongly typed one `WF_EINVALID invalidArgument`.
public struct Args: Sendable {
    public let object: JSONObject

    public init(_ object: JSONObject) { self.object = object }

    public subscript(key: String) -> JSON? {
        guard let v = object[key], !v.isNull else { return nil }
        return v
    }

    static func missing(_ key: String) -> EngineError {
        .invalid("missingArgument", "\(key) is required", details: ["argument": .string(key)])
    }

    static func wrong(_ key: String, _ expected: String, _ got: JSON) -> EngineError {
        .invalid("invalidArgument", "\(key) must be \(expected), not \(got.typeName)",
                 details: ["argument": .string(key), "expected": .string(expected)])
    }

    public func string(_ key: String) throws(EngineError) -> String {
        guard let s = try optionalNonEmptyString(key) else { throw Args.missing(key) }
        return s
    }

    /// An optional string argument that, when given, is not empty (an id).
    public func optionalNonEmptyString(_ key: String) throws(EngineError) -> String? {
        guard let s = try optionalString(key) else { return nil }
        guard !s.isEmpty else {
            throw .invalid("invalidArgument", "\(key) must not be empty",
                           details: ["argument": .string(key), "expected": "a non-empty string"])
        }
        return s
    }

    /// A string argument. None may contain U+0000 (as Jansson refuses by default): ids, titles
    /// and kinds are kept in plain text columns, which end at the first NUL.
    public func optionalString(_ key: String) throws(EngineError) -> String? {
        guard let v = self[key] else { return nil }
        guard case let .string(s) = v else { throw Args.wrong(key, "a string", v) }
        guard !s.utf8.contains(0) else { throw Args.containsNUL(key) }
        return s
    }

    static func containsNUL(_ key: String) -> EngineError {
        .invalid("invalidArgument", "\(key) must not contain U+0000",
                 details: ["argument": .string(key), "expected": "a string without U+0000"])
    }

    public func optionalBool(_ key: String) throws(EngineError) -> Bool? {
        guard let v = self[key] else { return nil }
        guard case let .bool(b) = v else { throw Args.wrong(key, "true or false", v) }
        return b
    }

    public func bool(_ key: String) throws(EngineError) -> Bool {
        guard let b = try optionalBool(key) else { throw Args.missing(key) }
        return b
    }

    public func optionalInt(_ key: String, min: Int64 = .min, max: Int64 = .max) throws(EngineError) -> Int64? {
        guard let v = self[key] else { return nil }
        guard let i = v.intValue else {
            // A whole real past 64 bits (1e23) is an integer out of range, not a wrong type.
            if case let .double(d) = v, d.isFinite, d.rounded() == d { throw Args.outOfRange(key, min, max) }
            throw Args.wrong(key, "an integer", v)
        }
        guard i >= min, i <= max else { throw Args.outOfRange(key, min, max) }
        return i
    }

    static func outOfRange(_ key: String, _ min: Int64, _ max: Int64) -> EngineError {
        .invalid("invalidArgument", "\(key) must be between \(min) and \(max)",
                 details: ["argument": .string(key), "expected": .string("an integer from \(min) to \(max)")])
    }

    /// A number of seconds (durations in op arguments are seconds).
    public func optionalSeconds(_ key: String, min: Double = 0, max: Double = 1e10) throws(EngineError) -> Double? {
        guard let v = self[key] else { return nil }
        guard let d = v.doubleValue, d.isFinite else { throw Args.wrong(key, "a number of seconds", v) }
        guard d >= min, d <= max else {
            throw .invalid("invalidArgument", "\(key) must be between \(min) and \(max) seconds",
                           details: ["argument": .string(key), "expected": .string("from \(min) to \(max) seconds")])
        }
        return d
    }

    public func seconds(_ key: String, min: Double = 0, max: Double = 1e10) throws(EngineError) -> Double {
        guard let d = try optionalSeconds(key, min: min, max: max) else { throw Args.missing(key) }
        return d
    }

    public func optionalObject(_ key: String) throws(EngineError) -> JSONObject? {
        guard let v = self[key] else { return nil }
        guard case let .object(o) = v else { throw Args.wrong(key, "an object", v) }
        return o
    }

    public func object(_ key: String) throws(EngineError) -> JSONObject {
        guard let o = try optionalObject(key) else { throw Args.missing(key) }
        return o
    }

    public func value(_ key: String) throws(EngineError) -> JSON {
        guard let v = self[key] else { throw Args.missing(key) }
        return v
    }

    /// A string that must be one of `allowed`.
    public func optionalChoice(_ key: String, _ allowed: [String]) throws(EngineError) -> String? {
        guard let s = try optionalString(key) else { return nil }
        guard allowed.contains(s) else {
            throw .invalid("invalidArgument", "\(key) must be one of \(allowed.joined(separator: ", ")), not '\(s)'",
                           details: ["argument": .string(key), "allowed": JSON(allowed)])
        }
        return s
    }
}
