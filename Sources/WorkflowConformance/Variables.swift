import Foundation
import WorkflowCore

/// Values saved by earlier steps (`save`), and their substitution into later steps.
///
/// In every string value (never in keys) of `args` and `expect`: a string that is exactly
/// `"${name}"` becomes the saved value with its type; a `${name}` inside a longer string is spliced
/// in as text (a string verbatim, anything else as compact JSON). A name nothing saved is an error;
/// `${}` and a `${` with no `}` after it are plain text.
///
/// Names are told apart by their code points, as the C and Python runners tell them apart:
/// `café` written precomposed and decomposed are two names (Swift's `String` would call them one).
public struct Variables: Sendable {
    /// A name by its exact code points.
    struct Name: Hashable, Sendable {
        let scalars: [UInt32]
        init(_ name: String) { scalars = name.unicodeScalars.map(\.value) }
    }

    private var values: [Name: JSON] = [:]

    public init(_ values: [String: JSON] = [:]) {
        for (name, value) in values { self.values[Name(name)] = value }
    }

    public subscript(name: String) -> JSON? {
        get { values[Name(name)] }
        set { values[Name(name)] = newValue }
    }

    /// The unknown name that stopped a substitution.
    public struct UnknownName: Error, Sendable, Equatable {
        public var name: String
        public init(name: String) { self.name = name }
    }

    public func substitute(_ value: JSON) throws(UnknownName) -> JSON {
        switch value {
        case let .string(s): return try substitute(string: s)
        case let .array(items):
            var out: [JSON] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try substitute(item)) }
            return .array(out)
        case let .object(o): return .object(try substitute(o))
        default: return value
        }
    }

    public func substitute(_ object: JSONObject) throws(UnknownName) -> JSONObject {
        var out = JSONObject(minimumCapacity: object.count)
        for (k, v) in object { out.append(uniqueKey: k, try substitute(v)) }
        return out
    }

    func substitute(string s: String) throws(UnknownName) -> JSON {
        let references = Variables.references(in: s)
        guard !references.isEmpty else { return .string(s) }
        if references.count == 1, let only = references.first, only.range == s.startIndex..<s.endIndex {
            guard let v = self[only.name] else { throw UnknownName(name: only.name) }
            return v
        }
        var text = ""
        var cursor = s.startIndex
        for ref in references {
            guard let v = self[ref.name] else { throw UnknownName(name: ref.name) }
            text += s[cursor..<ref.range.lowerBound]
            if case let .string(inner) = v { text += inner } else { text += ReportJSON.text(v) }
            cursor = ref.range.upperBound
        }
        text += s[cursor...]
        return .string(text)
    }

    /// Every `${name}` in `s` (a name is one or more characters other than `}`), in order.
    static func references(in s: String) -> [(name: String, range: Range<String.Index>)] {
        var found: [(String, Range<String.Index>)] = []
        var i = s.startIndex
        while let open = s[i...].range(of: "${") {
            guard let close = s[open.upperBound...].firstIndex(of: "}") else { break }
            let name = String(s[open.upperBound..<close])
            if name.isEmpty {
                i = s.index(after: close)
                continue
            }
            let end = s.index(after: close)
            found.append((name, open.lowerBound..<end))
            i = end
        }
        return found
    }
}
