/// A deep link into a workflow: `{scheme}://workflow/{workflowId}/node/{nodeId}?await={awaitId}`
/// (Appendix A). Building and parsing are exact inverses; anything else is `badDeepLink`.
public struct DeepLink: Sendable, Equatable {
    public var workflowId: String
    public var nodeId: String?
    public var awaitId: String?

    public init(workflowId: String, nodeId: String? = nil, awaitId: String? = nil) {
        self.workflowId = workflowId
        self.nodeId = nodeId
        self.awaitId = awaitId
    }

    public func url(scheme: String) -> String {
        var s = "\(scheme)://workflow/\(Self.escape(workflowId))"
        if let nodeId { s += "/node/\(Self.escape(nodeId))" }
        if let awaitId { s += "?await=\(Self.escape(awaitId))" }
        return s
    }

    public var json: JSON {
        var o: JSONObject = ["workflowId": .string(workflowId)]
        if let nodeId { o["nodeId"] = .string(nodeId) }
        if let awaitId { o["awaitId"] = .string(awaitId) }
        return .object(o)
    }

    /// Why a link is bad, in `details.reason`.
    public static func bad(_ url: String, _ reason: String, _ message: String) -> EngineError {
        .invalid("badDeepLink", "bad deep link: \(message)", details: ["url": .string(url), "reason": .string(reason)])
    }

    /// Parses a link of `scheme` (case-insensitive). Checks shape only; whether the workflow,
    /// node and await exist is the caller's question.
    public static func parse(_ url: String, scheme: String) throws(EngineError) -> DeepLink {
        guard let sep = url.firstRange(of: "://") else { throw bad(url, "malformed", "no scheme") }
        let givenScheme = String(url[..<sep.lowerBound])
        guard givenScheme.lowercased() == scheme.lowercased() else {
            throw bad(url, "wrongScheme", "expected \(scheme)://, not \(givenScheme)://")
        }
        var rest = String(url[sep.upperBound...])
        // The fragment ends a URL, after the query (RFC 3986 §3.5): it is cut first, so that
        // `?await=aw-1#top` reads await `aw-1`.
        if let hash = rest.firstIndex(of: "#") { rest = String(rest[..<hash]) }
        var query: String?
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = String(rest[..<q])
        }
        // One trailing slash is the same link (`workflow/wf-1/`).
        if rest.hasSuffix("/") { rest.removeLast() }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 4, parts[0] == "workflow", !parts[1].isEmpty else {
            throw bad(url, "malformed", "expected workflow/{id}[/node/{id}]")
        }
        guard let workflowId = unescape(parts[1]) else { throw bad(url, "malformed", "bad percent-encoding") }
        var link = DeepLink(workflowId: workflowId)
        if parts.count == 4 {
            guard parts[2] == "node", !parts[3].isEmpty, let nodeId = unescape(parts[3]) else {
                throw bad(url, "malformed", "expected /node/{id} after the workflow")
            }
            link.nodeId = nodeId
        }
        if let query, !query.isEmpty {
            for pair in query.split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2, let value = unescape(kv[1]), !value.isEmpty else {
                    throw bad(url, "malformed", "bad query '\(pair)'")
                }
                if kv[0] == "await" {
                    guard link.nodeId != nil else { throw bad(url, "malformed", "an await link must name its node") }
                    link.awaitId = value
                }
            }
        }
        return link
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%\(hex[Int(b >> 4)])\(hex[Int(b & 0xF)])"
            }
        }
        return out
    }

    /// Decodes percent-encoding: `%` and exactly two hex digits (RFC 3986; not `%+1`, which
    /// `UInt8(_:radix:)` would read as a signed number); nil when it is bad or the bytes are not
    /// UTF-8.
    static func unescape(_ s: String) -> String? {
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        var it = Array(s.utf8).makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { return nil }
                bytes.append(h << 4 | l)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
