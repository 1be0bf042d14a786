/// Keeps media, file contents and personal data out of log tails and log lines.
///
/// Log tails come from providers and tools, so they may quote what they were given. Before a
/// line is stored or shown: data URIs and long base64 runs become `[media]`, e-mail addresses
/// `[email]`, phone numbers `[phone]`, and file names of media (`photo.jpg`) `[file]`.
public enum Redaction {
    static let mediaExtensions: Set<String> = ["png", "jpg", "jpeg", "heic", "heif", "gif", "webp", "tif", "tiff", "bmp",
                                               "mp4", "mov", "m4v", "avi", "mkv", "webm", "mp3", "wav", "m4a", "aac",
                                               "raw", "dng", "psd", "svg", "pdf"]

    public static func redact(_ line: String) -> String {
        var words: [String] = []
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            words.append(redactWord(String(word)))
        }
        var out = words.joined(separator: " ")
        if out.count > 500 { out = String(out.prefix(500)) + "…" }
        return out
    }

    static func redactWord(_ word: String) -> String {
        if word.isEmpty { return word }
        let lower = word.lowercased()
        if lower.contains("data:") && lower.contains(";base64") || lower.hasPrefix("data:") { return "[media]" }
        if looksLikeBase64(word) { return "[media]" }
        if looksLikeEmail(word) { return "[email]" }
        if looksLikePhone(word) { return "[phone]" }
        if let ext = fileExtension(lower), mediaExtensions.contains(ext) { return "[file]" }
        return word
    }

    static func looksLikeBase64(_ w: String) -> Bool {
        guard w.utf8.count >= 40 else { return false }
        var letters = 0
        var digits = 0
        for b in w.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): letters += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "_"): break
            default: return false
            }
        }
        return letters > 0 && digits > 0
    }

    static func looksLikeEmail(_ w: String) -> Bool {
        let parts = w.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains(".") else { return false }
        return !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
    }

    static func looksLikePhone(_ w: String) -> Bool {
        let digits = w.filter(\.isNumber).count
        guard digits >= 9, digits <= 15 else { return false }
        return w.allSatisfy { $0.isNumber || "+-() .".contains($0) }
    }

    static func fileExtension(_ w: String) -> String? {
        let trimmed = w.trimmingCharacters(in: ",;:)\"'")
        guard let dot = trimmed.lastIndex(of: "."), dot != trimmed.startIndex else { return nil }
        let ext = trimmed[trimmed.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 5, ext.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        return String(ext)
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
