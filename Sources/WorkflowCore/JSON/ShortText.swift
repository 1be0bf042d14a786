/// Short texts the engine makes on every call (ids such as `run-12`, answer keys such as
/// `local:run-12`, idempotency keys), written straight into the string's bytes: string
/// interpolation, which builds them piece by piece, costs about three times as much. Each gives
/// exactly what the interpolation it replaces would.
public enum ShortText {
    /// `"\(prefix)-\(number)"`.
    public static func id(_ prefix: String, _ number: Int64) -> String {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: 19 digits and a sign fit
        return withUnsafeMutableBytes(of: &digits) { d -> String in
            var at = d.count
            var m = number.magnitude
            repeat {
                at -= 1
                d[at] = 0x30 + UInt8(m % 10)
                m /= 10
            } while m > 0
            if number < 0 {
                at -= 1
                d[at] = 0x2D
            }
            let tail = UnsafeRawBufferPointer(rebasing: d[at...])
            let count = prefix.utf8.count + 1 + tail.count
            return String(unsafeUninitializedCapacity: count) { out in
                var i = copy(prefix, into: out, at: 0)
                out[i] = 0x2D
                i += 1
                for b in tail {
                    out[i] = b
                    i += 1
                }
                return count
            }
        }
    }

    /// `"\(a)\(b)"`.
    public static func concat(_ a: String, _ b: String) -> String {
        let count = a.utf8.count + b.utf8.count
        return String(unsafeUninitializedCapacity: count) { out in
            copy(b, into: out, at: copy(a, into: out, at: 0))
        }
    }

    /// `"\(a)/\(b)/\(c)"`, with `separator` for the slashes.
    public static func join(_ a: String, _ b: String, _ c: String, separator: UInt8) -> String {
        let count = a.utf8.count + b.utf8.count + c.utf8.count + 2
        return String(unsafeUninitializedCapacity: count) { out in
            var i = copy(a, into: out, at: 0)
            out[i] = separator
            i = copy(b, into: out, at: i + 1)
            out[i] = separator
            return copy(c, into: out, at: i + 1)
        }
    }

    /// Copies `s`'s UTF-8 into `out` from `at`; returns the position after it.
    @inline(__always)
    private static func copy(_ s: String, into out: UnsafeMutableBufferPointer<UInt8>, at: Int) -> Int {
        let copied: Int? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            if let base = utf8.baseAddress, utf8.count > 0 { (out.baseAddress! + at).update(from: base, count: utf8.count) }
            return at + utf8.count
        }
        if let copied { return copied }
        var i = at
        for b in s.utf8 {
            out[i] = b
            i += 1
        }
        return i
    }
}
