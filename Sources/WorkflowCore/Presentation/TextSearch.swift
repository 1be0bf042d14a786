/// Substring search for the workflow list: both sides already lower-cased, matched on their
/// UTF-8 bytes. Faster than `String.contains`, which compares characters (and, with Foundation
/// imported, goes through `NSString`); the only difference is that a search may match inside a
/// run of combining marks.
public enum TextSearch {
    /// Whether `needle`'s bytes occur in `haystack`'s. An empty needle matches everything.
    public static func contains(_ haystack: String, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        var text = haystack
        return text.withUTF8 { h in needle.withUnsafeBufferPointer { contains(h, $0) } }
    }

    /// Whether `needle`'s bytes occur in `haystack`'s (both borrowed for the call). An empty
    /// needle matches everything.
    public static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        let n = needle.count
        guard haystack.count >= n else { return false }
        var i = 0
        let last = haystack.count - n
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < n && haystack[i + j] == needle[j] { j += 1 }
                if j == n { return true }
            }
            i += 1
        }
        return false
    }
}
