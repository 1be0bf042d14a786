import Foundation

// libFuzzer's custom mutator: most mutations bend an input as a session of calls (a value of a
// call's args replaced by an edge case or by a value from elsewhere in the input, a member
// dropped, a call repeated, dropped or moved), the rest are libFuzzer's own byte mutations. Byte
// mutations alone mostly break the JSON, and the engine refuses it before reading it.

@_silgen_name("LLVMFuzzerMutate")
private func byteMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int) -> Int

/// A deterministic generator (SplitMix64) seeded by libFuzzer, so a run replays.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// Read only; libFuzzer calls the mutator on one thread.
nonisolated(unsafe) private let edgeValues: [Any] = [
    0, -1, 1, 65_536, Int64.min, Int64.max, Int64(Int32.min), 9_007_199_254_740_992, 1e308, -1e308, 0.5, -0.5, 1e-300,
    3.999999, 315_360_000_000, 9.3e18, 1e30, "", " ", String(repeating: "x", count: 5_000), "\u{0}", "é", "😀",
    "../../etc/passwd", "wf-1", "run-1", "as-1", "aw-1", "job-1", "2026-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
    "0000-01-01T00:00:00.000Z", "P99999999999999D", "app://workflow/wf-1/node/n?await=x", "%zz", "null", true, false,
    NSNull(), [String: Any](), [Any](),
]

/// One line of an input: an op with its args parsed, or text kept as it is.
private enum Line {
    case call(op: String, args: Any?)
    case text(String)

    init(_ text: String) {
        guard let space = text.firstIndex(of: " ") else {
            self = .call(op: text, args: nil)
            return
        }
        let op = String(text[..<space]), rest = String(text[text.index(after: space)...])
        if op != "config", let args = try? JSONSerialization.jsonObject(with: Data(rest.utf8), options: [.fragmentsAllowed]) {
            self = .call(op: op, args: args)
        } else {
            self = .text(text)
        }
    }

    var text: String {
        switch self {
        case .text(let t): return t
        case .call(let op, nil): return op
        case .call(let op, let args?):
            // Checked first: an object JSON cannot hold would be a Foundation error, not a throw.
            guard JSONSerialization.isValidJSONObject([args]),
                  let data = try? JSONSerialization.data(withJSONObject: args, options: [.fragmentsAllowed, .sortedKeys])
            else { return op }
            return op + " " + String(decoding: data, as: UTF8.self)
        }
    }
}

/// Every scalar, array and object under `value`, for splicing one call's values into another.
private func values(in value: Any, into out: inout [Any]) {
    out.append(value)
    if let o = value as? [String: Any] {
        for k in o.keys.sorted() { values(in: o[k]!, into: &out) }  // in a fixed order, so a seed replays
    } else if let a = value as? [Any] {
        for v in a { values(in: v, into: &out) }
    }
}

/// `value` with one place in it changed, at a depth picked at random: a member or element
/// replaced by `replacement`, removed, or added (a member with a new name, an element repeated).
private func bend(_ value: Any, _ g: inout SplitMix, replacement: (inout SplitMix) -> Any) -> Any {
    if var o = value as? [String: Any], !o.isEmpty, Int.random(in: 0..<4, using: &g) != 0 {
        let key = o.keys.sorted()[Int.random(in: 0..<o.count, using: &g)]
        switch Int.random(in: 0..<6, using: &g) {
        case 0: o[key] = nil
        case 1: o[key + "x"] = replacement(&g)
        default: o[key] = bend(o[key]!, &g, replacement: replacement)
        }
        return o
    }
    if var a = value as? [Any], !a.isEmpty, Int.random(in: 0..<4, using: &g) != 0 {
        let i = Int.random(in: 0..<a.count, using: &g)
        switch Int.random(in: 0..<6, using: &g) {
        case 0: a.remove(at: i)
        case 1: a.append(a[i])
        default: a[i] = bend(a[i], &g, replacement: replacement)
        }
        return a
    }
    return replacement(&g)
}

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    var g = SplitMix(state: UInt64(seed))
    if Int.random(in: 0..<4, using: &g) == 0 { return byteMutate(data, size, maxSize) }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map { Line(String($0)) }
    if lines.isEmpty { return byteMutate(data, size, maxSize) }
    var pool: [Any] = []
    for case .call(_, let args?) in lines { values(in: args, into: &pool) }
    let i = Int.random(in: 0..<lines.count, using: &g)
    switch Int.random(in: 0..<10, using: &g) {
    case 0: lines.remove(at: i)
    case 1: lines.insert(lines[i], at: Int.random(in: 0...lines.count, using: &g))
    case 2:
        let moved = lines.remove(at: i)
        lines.insert(moved, at: Int.random(in: 0...lines.count, using: &g))
    default:
        guard case .call(let op, let args) = lines[i] else { return byteMutate(data, size, maxSize) }
        let fromPool = !pool.isEmpty && Int.random(in: 0..<2, using: &g) == 0
        let replacement: (inout SplitMix) -> Any = { g in
            fromPool ? pool[Int.random(in: 0..<pool.count, using: &g)] : edgeValues[Int.random(in: 0..<edgeValues.count, using: &g)]
        }
        lines[i] = .call(op: op, args: bend(args ?? [String: Any](), &g, replacement: replacement))
    }
    let out = Array(lines.map(\.text).joined(separator: "\n").utf8)
    guard out.count <= maxSize else { return byteMutate(data, size, maxSize) }
    for (k, byte) in out.enumerated() { data[k] = byte }
    return out.count
}
