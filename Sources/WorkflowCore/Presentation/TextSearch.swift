/// Substring search for the workflow list: both sides already lower-cased, matched on their
/// UTF-8 bytes. Faster than `String.contains`, which compares characters (and, with Foundation
/// imported, goes through `NSString`); the only difference is that a search may match inside a
/// run of combining marks.
public enum TextSearch {
    /// A title or a query as the list searches it: lower-cased, and Greek's final sigma (ς)
    /// written as σ, which is what `lowercased()` makes of Σ: so `ΟΔΟΣ` and `οδος` find each
    /// other (lower-casing alone is not case-insensitive there).
    public static func fold(_ text: String) -> String { foldingSigmas(text.lowercased()) }

    /// `text` with every final sigma (ς) written as σ (for text lower-cased by a library before
    /// ``fold(_:)``, kept in a store).
    public static func foldingSigmas(_ text: String) -> String {
        guard text.utf8.contains(0xCF) else { return text }  // both sigmas start with 0xCF
        var bytes = Array(text.utf8)
        foldSigmas(&bytes, from: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``foldingSigmas(_:)`` on UTF-8 bytes in place, from `start`: ς (CF 82) and σ (CF 83) have
    /// the same length.
    public static func foldSigmas(_ bytes: inout [UInt8], from start: Int) {
        var i = start
        while i + 1 < bytes.count {
            if bytes[i] == 0xCF && bytes[i + 1] == 0x82 { bytes[i + 1] = 0x83 }
            i += 1
        }
    }

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
