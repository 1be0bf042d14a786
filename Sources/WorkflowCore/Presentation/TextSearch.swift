/// Substring search for the workflow list: both sides already lower-cased, matched on their
/// UTF-8 bytes. Faster than `String.contains`, which compares characters (and, with Foundation
/// imported, goes through `NSString`); the only difference is that a search may match inside a
/// run of combining marks.
public enum TextSearch {
    /// Whether `needle`'s bytes occur in `haystack`'s. An empty needle matches everything.
    public static func contains(_ haystack: String, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        var text = haystack
        return text.withUTF8 { h in
            let n = needle.count
            guard h.count >= n else { return false }
            return needle.withUnsafeBufferPointer { p in
                var i = 0
                let last = h.count - n
                while i <= last {
                    if h[i] == first {
                        var j = 1
                        while j < n && h[i + j] == p[j] { j += 1 }
                        if j == n { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }
}
