/// Reads fields out of JSON objects, collecting a `malformedTemplate` issue with the JSON path
/// for every field of the wrong type, instead of stopping at the first.
public struct JSONFieldReader {
    /// Path of the object being read, like `$.nodes[2]`; built only when an issue needs it.
    public var path: String { index.map { "\(base)[\($0)]" } ?? base }
    private let base: String
    private let index: Int?
    public private(set) var issues: [TemplateIssue] = []

    public init(path: String) {
        base = path
        index = nil
    }

    /// A reader for element `index` of the array at `arrayPath`.
    public init(arrayPath: String, index: Int) {
        base = arrayPath
        self.index = index
    }

    public mutating func malformed(_ path: String, _ message: String, nodeId: String? = nil) {
        issues.append(TemplateIssue(code: TemplateErrorCode.malformedTemplate, message: "\(path): \(message)",
                                    nodeId: nodeId, path: path))
    }

    public mutating func append(_ issue: TemplateIssue) { issues.append(issue) }
    public mutating func append(contentsOf more: [TemplateIssue]) { issues.append(contentsOf: more) }

    public mutating func object(_ json: JSON, what: String) -> JSONObject? {
        guard case let .object(o) = json else {
            malformed(path, "\(what) must be an object, not \(json.typeName)")
            return nil
        }
        return o
    }

    /// Members other than `allowed` (and `x-` extensions, when permitted) are errors: the schema is
    /// strict so a typo never passes silently.
    public mutating func rejectUnknown(_ o: JSONObject, allowed: [String], extensions: Bool = true,
                                       nodeId: String? = nil) {
        // A scan: these lists are short, and small-string comparison is cheaper than hashing.
        for m in o.members where !allowed.contains(m.key) {
            let key = m.key
            if extensions && JSONFieldReader.isExtension(key) { continue }
            let hint = extensions ? " (use an x- prefix for comments and extensions)" : ""
            malformed(Self.member(path, key), "unknown field '\(key)'\(hint)", nodeId: nodeId)
        }
    }

    /// The path of member `key` of the value at `path`: `path.key` for a plain key (letters,
    /// digits, `_` and `-`), else `path["key"]` with the key JSON-quoted, so that a key such as
    /// `nodes[0]` or `x.y` never reads as another place.
    public static func member(_ path: String, _ key: String) -> String {
        let plain = !key.isEmpty && key.utf8.allSatisfy { b in
            Identifiers.isAlnum(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
        return plain ? "\(path).\(key)" : "\(path)[\(JSONWriter.string(.string(key)))]"
    }

    public static func extensions(of o: JSONObject) -> JSONObject {
        var x = JSONObject()
        for m in o.members where isExtension(m.key) { x.append(uniqueKey: m.key, m.value) }
        return x
    }

    /// `x-…`, checked on the bytes.
    @inline(__always) static func isExtension(_ key: String) -> Bool {
        var utf8 = key.utf8.makeIterator()
        return utf8.next() == UInt8(ascii: "x") && utf8.next() == UInt8(ascii: "-")
    }

    public mutating func requiredString(_ o: JSONObject, _ key: String, nodeId: String? = nil) -> String? {
        requiredString(o[key], field: key, nodeId: nodeId)
    }

    // Value-based readers, for decoders that pick fields up in one pass over an object.

    public mutating func requiredString(_ value: JSON?, field key: String, nodeId: String? = nil) -> String? {
        guard let v = value else {
            malformed("\(path).\(key)", "missing required field '\(key)'", nodeId: nodeId)
            return nil
        }
        guard case let .string(s) = v else {
            malformed("\(path).\(key)", "'\(key)' must be a string, not \(v.typeName)", nodeId: nodeId)
            return nil
        }
        return s
    }

    public mutating func optionalString(_ o: JSONObject, _ key: String, nodeId: String? = nil) -> String? {
        optionalString(o[key], field: key, nodeId: nodeId)
    }

    public mutating func optionalString(_ value: JSON?, field key: String, nodeId: String? = nil) -> String? {
        guard let v = value, !v.isNull else { return nil }
        guard case let .string(s) = v else {
            malformed("\(path).\(key)", "'\(key)' must be a string, not \(v.typeName)", nodeId: nodeId)
            return nil
        }
        return s
    }

    public mutating func optionalBool(_ o: JSONObject, _ key: String, nodeId: String? = nil) -> Bool? {
        guard let v = o[key], !v.isNull else { return nil }
        guard case let .bool(b) = v else {
            malformed("\(path).\(key)", "'\(key)' must be true or false, not \(v.typeName)", nodeId: nodeId)
            return nil
        }
        return b
    }

    public mutating func optionalObject(_ o: JSONObject, _ key: String, nodeId: String? = nil) -> JSONObject? {
        optionalObject(o[key], field: key, nodeId: nodeId)
    }

    public mutating func optionalObject(_ value: JSON?, field key: String, nodeId: String? = nil) -> JSONObject? {
        guard let v = value, !v.isNull else { return nil }
        guard case let .object(obj) = v else {
            malformed("\(path).\(key)", "'\(key)' must be an object, not \(v.typeName)", nodeId: nodeId)
            return nil
        }
        return obj
    }

    public mutating func optionalStringArray(_ o: JSONObject, _ key: String, nodeId: String? = nil) -> [String]? {
        optionalStringArray(o[key], field: key, nodeId: nodeId)
    }

    public mutating func optionalStringArray(_ value: JSON?, field key: String, nodeId: String? = nil) -> [String]? {
        guard let v = value, !v.isNull else { return nil }
        guard case let .array(items) = v else {
            malformed("\(path).\(key)", "'\(key)' must be an array of strings, not \(v.typeName)", nodeId: nodeId)
            return nil
        }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard case let .string(s) = item else {
                malformed("\(path).\(key)[\(i)]", "must be a string, not \(item.typeName)", nodeId: nodeId)
                continue
            }
            out.append(s)
        }
        return out
    }

    public mutating func optionalPositiveInt(_ o: JSONObject, _ key: String, path p: String) -> Int? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let i = v.intValue, i >= 1, i <= 1_000_000 else {
            malformed("\(p).\(key)", "'\(key)' must be a positive integer", nodeId: nil)
            return nil
        }
        return Int(i)
    }

    /// A port map: `{"image": "ImageRef", "mask": {"type": "MaskRef", "optional": true}}`.
    /// Returns nil when absent; malformed entries are reported and left out.
    public mutating func ports(_ json: JSON?, path makePath: @autoclosure () -> String, inputs: Bool,
                               nodeId: String? = nil) -> [PortSpec]? {
        var ports: [PortSpec] = []
        guard readPorts(json, path: makePath(), inputs: inputs, nodeId: nodeId, into: &ports) else { return nil }
        return ports
    }

    /// ``ports(_:path:inputs:nodeId:)``, reading into `shared`'s scratch space and returning an array
    /// equal to one returned recently when there is one, so nodes declaring the same ports share it.
    mutating func ports(_ json: JSON?, path makePath: @autoclosure () -> String, inputs: Bool,
                        nodeId: String? = nil, shared: inout SharedPorts) -> [PortSpec]? {
        shared.scratch.removeAll(keepingCapacity: true)
        guard readPorts(json, path: makePath(), inputs: inputs, nodeId: nodeId, into: &shared.scratch) else {
            return nil
        }
        return shared.intern()
    }

    /// Reads a port map into `ports` (sorted by name); false when absent.
    private mutating func readPorts(_ json: JSON?, path makePath: @autoclosure () -> String, inputs: Bool,
                                    nodeId: String?, into ports: inout [PortSpec]) -> Bool {
        guard let json, !json.isNull else { return false }
        var built: String?
        var p: String {
            if let built { return built }
            built = makePath()
            return built!
        }
        guard case let .object(o) = json else {
            malformed(p, "must be an object of port names to types, not \(json.typeName)", nodeId: nodeId)
            return false
        }
        ports.reserveCapacity(o.count)
        for (name, decl) in o {
            var portPath: String { Self.member(p, name) }
            guard Identifiers.isValidPortName(name) else {
                malformed(portPath, "port name '\(name)' must start with a letter or _ and use letters, digits or _",
                          nodeId: nodeId)
                continue
            }
            switch decl {
            case let .string(type):
                guard Identifiers.isValidTypeName(type) else {
                    malformed(portPath, "port type '\(type)' must be a type name like ImageRef", nodeId: nodeId)
                    continue
                }
                ports.append(PortSpec(name: name, type: type))
            case let .object(d):
                var sub = JSONFieldReader(path: portPath)
                sub.rejectUnknown(d, allowed: inputs ? ["type", "optional"] : ["type"], nodeId: nodeId)
                let type = sub.requiredString(d, "type", nodeId: nodeId)
                let optional = inputs ? (sub.optionalBool(d, "optional", nodeId: nodeId) ?? false) : false
                issues.append(contentsOf: sub.issues)
                if let type {
                    guard Identifiers.isValidTypeName(type) else {
                        malformed("\(portPath).type", "port type '\(type)' must be a type name like ImageRef",
                                  nodeId: nodeId)
                        continue
                    }
                    ports.append(PortSpec(name: name, type: type, optional: optional))
                }
            default:
                malformed(portPath, "a port is a type name or {\"type\": ...}, not \(decl.typeName)", nodeId: nodeId)
            }
        }
        ports.sort { $0.name < $1.name }
        return true
    }
}

/// Port lists recently read during one compilation: most nodes declare the same few, and sharing
/// one array saves allocating (and later freeing) a copy per node.
struct SharedPorts {
    var scratch: [PortSpec] = []
    private var recent: [[PortSpec]] = []
    private var next = 0

    mutating func intern() -> [PortSpec] {
        for r in recent where r == scratch { return r }
        let ports = Array(scratch)
        if recent.count < 8 {
            recent.append(ports)
        } else {
            recent[next] = ports
            next = (next + 1) % 8
        }
        return ports
    }
}

/// Rules for the identifiers that appear in deep links, paths and messages.
public enum Identifiers {
    /// Node ids appear in deep links (`app://workflow/W/node/N`), so they are URL-safe:
    /// letters, digits, `_`, `-` and `.`, 1 to 128 characters.
    public static func isValidNodeId(_ s: String) -> Bool {
        if let fast = s.utf8.withContiguousStorageIfAvailable({ isValidNodeId(bytes: $0) }) { return fast }
        return isValidNodeId(bytes: Array(s.utf8)[...])
    }

    public static func isValidPortName(_ s: String) -> Bool {
        if let fast = s.utf8.withContiguousStorageIfAvailable({ isValidPortName(bytes: $0) }) { return fast }
        return isValidPortName(bytes: Array(s.utf8)[...])
    }

    public static func isValidTypeName(_ s: String) -> Bool {
        if let fast = s.utf8.withContiguousStorageIfAvailable({ isValidTypeName(bytes: $0) }) { return fast }
        return isValidTypeName(bytes: Array(s.utf8)[...])
    }

    @inline(__always)
    static func isValidNodeId<C: Collection<UInt8>>(bytes: C) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 128 else { return false }
        return bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    @inline(__always)
    static func isValidPortName<C: Collection<UInt8>>(bytes: C) -> Bool {
        guard let first = bytes.first, isAlpha(first) || first == UInt8(ascii: "_"), bytes.count <= 64 else {
            return false
        }
        return bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "_") }
    }

    @inline(__always)
    static func isValidTypeName<C: Collection<UInt8>>(bytes: C) -> Bool {
        guard let first = bytes.first, isAlpha(first), bytes.count <= 64 else { return false }
        return bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "_") }
    }

    @inline(__always) static func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
    @inline(__always) static func isAlnum(_ b: UInt8) -> Bool { isAlpha(b) || (b >= 0x30 && b <= 0x39) }
}
