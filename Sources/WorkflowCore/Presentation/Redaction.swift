/// Keeps media, file contents and personal data out of log tails and log lines.
///
/// Log tails come from providers and tools, so they may quote what they were given. Before a
/// line is stored or shown:
///
/// - data URIs and long base64 runs become `[media]`;
/// - file names of media (`photo.jpg`, also `IMG_0042.HEIC`, a path or a URL ending in one, with
///   or without a query: `out/beach.png?sig=…`) become `[file]`;
/// - other URLs with a query, a fragment or user info (signed links, tokens) become `[url]` whole;
/// - e-mail addresses become `[email]`, also joined to other text (`a@x.com;b@x.com`,
///   `to=a@x.com` → `to=[email]`, `<a@x.com>`);
/// - phone numbers become `[phone]`: a word of 9–15 digits and `+-().` only, and numbers written
///   across words: `+1 415 555 0100`, `+44 20 7946 0958`, `(415) 555-0100`, `415 555 0100`;
/// - the user name of a home directory becomes `[user]`: `/Users/alice/…`, `/home/bob/…`,
///   `C:\Users\carol\…` (also inside `file://` URLs, and with repeated slashes: `//home/bob`).
///
/// Punctuation around a redacted word stays (`photo.jpg,` → `[file],`); lines are cut at 500
/// characters.
public enum Redaction {
    static let mediaExtensions: Set<String> = ["png", "jpg", "jpeg", "heic", "heif", "gif", "webp", "tif", "tiff", "bmp",
                                               "mp4", "mov", "m4v", "avi", "mkv", "webm", "mp3", "wav", "m4a", "aac",
                                               "raw", "dng", "psd", "svg", "pdf"]

    /// Characters that may open or close a word without being part of it.
    static let leadingPunctuation: Set<Character> = ["(", "[", "{", "<", "\"", "'", "`", "\t"]
    static let trailingPunctuation: Set<Character> = [".", ",", ";", ":", "!", "?", ")", "]", "}", ">", "\"", "'", "`",
                                                      "…", "\t"]

    /// Every string inside `value` redacted as a line is; keys, numbers and booleans as they are
    /// (the fields of a metric event, the details of a reported error).
    public static func redactStrings(_ value: JSON) -> JSON {
        switch value {
        case .string(let s): return .string(redact(s))
        case .array(let a): return .array(a.map(redactStrings))
        case .object(let o): return .object(redactStrings(o))
        default: return value
        }
    }

    public static func redactStrings(_ object: JSONObject) -> JSONObject {
        JSONObject(uniqueKeysWithValues: object.map { ($0.key, redactStrings($0.value)) })
    }

    public static func redact(_ line: String) -> String {
        let phoned = redactPhoneNumbers(line)
        var words: [String] = []
        for word in phoned.split(separator: " ", omittingEmptySubsequences: false) {
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
        // The word without the punctuation around it; the punctuation stays.
        var core = Substring(word)
        while let f = core.first, leadingPunctuation.contains(f) { core = core.dropFirst() }
        while let l = core.last, trailingPunctuation.contains(l) { core = core.dropLast() }
        if core.isEmpty { return word }
        let prefix = word[word.startIndex..<core.startIndex]
        let suffix = word[core.endIndex..<word.endIndex]
        func replaced(_ token: String) -> String { prefix + token + suffix }
        let c = String(core)
        let lowerCore = c.lowercased()
        if let token = urlToken(lowerCore) { return replaced(token) }
        if looksLikeBase64(c) { return replaced("[media]") }
        if looksLikeEmail(c) {
            // A key or bracket joined to one address (`to=a@x.com`, `to=<a@x.com>`) stays, as with
            // several addresses or a phone number: only the address goes.
            if let pieces = redactJoinedPieces(c) { return redactHomeDirectories(replaced(pieces)) }
            return replaced("[email]")
        }
        if looksLikePhone(c) { return replaced("[phone]") }
        // A media file name, also a relative path to one, with or without a query or fragment
        // (`beach.png?sig=…`, `out/beach.png#x`).
        let path = lowerCore.firstIndex { $0 == "?" || $0 == "#" }.map { String(lowerCore[..<$0]) } ?? lowerCore
        if let ext = fileExtension(path), mediaExtensions.contains(ext) { return replaced("[file]") }
        if let pieces = redactJoinedPieces(c) { return redactHomeDirectories(replaced(pieces)) }
        return redactHomeDirectories(word)
    }

    /// Characters that join pieces of text into one word: lists (`a@x.com;b@x.com`), pairs
    /// (`to=a@x.com`, `phone:+14155550100`), brackets (`Alice <alice@x.com>`).
    static let joiners: Set<Character> = [";", ",", "=", ":", "<", ">", "(", ")", "[", "]", "{", "}", "\"", "'", "|"]

    /// `word` with each e-mail address or phone number joined into it by ``joiners`` redacted;
    /// nil when it has none. Joined to other text, a run of digits is far more often an id, a
    /// size, a time or a version than a phone number: a piece counts as one only when written
    /// as one (a leading `+`, or the grouping of a national number: `415-555-0100`), or named so
    /// (`tel=…`, `phone:…`); an address needs a letter in its domain (`pkg@1.2.3` is a version).
    static func redactJoinedPieces(_ word: String) -> String? {
        guard word.contains(where: { joiners.contains($0) }) else { return nil }
        var out = ""
        var piece = ""
        var previous = ""  // the piece before the last joiner: a key such as `tel`
        var changed = false
        func flush() {
            if looksLikeEmail(piece), piece.split(separator: "@").last?.contains(where: \.isLetter) == true {
                out += "[email]"
                changed = true
            } else if looksLikePhone(piece), writtenAsPhone(piece) || namesPhone(previous) {
                out += "[phone]"
                changed = true
            } else {
                out += piece
            }
            previous = piece
            piece = ""
        }
        for ch in word {
            if joiners.contains(ch) {
                flush()
                out.append(ch)
            } else {
                piece.append(ch)
            }
        }
        flush()
        return changed ? out : nil
    }

    // MARK: URLs

    /// `[file]` for a URL (or a path) naming a media file, `[url]` for one that carries a query, a
    /// fragment or user info; nil for anything else (which still has its home directories
    /// redacted).
    static func urlToken(_ lower: String) -> String? {
        let schemeEnd = schemeSeparator(lower)
        let isURL: Bool
        if let schemeEnd {
            let scheme = lower[..<schemeEnd.lowerBound]
            isURL = !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
        } else {
            isURL = lower.hasPrefix("/") || lower.hasPrefix("~/") || lower.hasPrefix("./")
        }
        guard isURL else { return nil }
        let cut = lower.firstIndex { $0 == "?" || $0 == "#" }
        let path = cut.map { String(lower[..<$0]) } ?? lower
        if let ext = fileExtension(path), mediaExtensions.contains(ext) { return "[file]" }
        if cut != nil { return "[url]" }
        if let schemeEnd {
            // user:password@host
            let rest = lower[schemeEnd.upperBound...]
            let authority = rest.prefix { $0 != "/" }
            if authority.contains("@") { return "[url]" }
        }
        return nil
    }

    /// Where `://` is in `s`.
    static func schemeSeparator(_ s: String) -> Range<String.Index>? {
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == ":", s[i...].hasPrefix("://") { return i..<s.index(i, offsetBy: 3) }
            i = s.index(after: i)
        }
        return nil
    }

    // MARK: Words

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

    /// A number written as a phone number: `+` and digits, or digits grouped as a national
    /// number by `-`, spaces or parentheses (never dots alone: those are addresses and versions).
    static func writtenAsPhone(_ w: String) -> Bool {
        if w.hasPrefix("+") { return true }
        let groups = w.split(whereSeparator: { "-() ".contains($0) }).map { $0.filter(\.isNumber).count }
        guard groups.count >= 2, !w.contains(".") else { return false }
        return groups == [3, 3, 4] || groups == [1, 3, 3, 4] || groups == [3, 4, 4] || groups == [4, 3, 4]
    }

    /// A key naming a phone number: `tel`, `phone`, `mobile`, `cell`, `fax` (any case, also `phone_number`).
    static func namesPhone(_ key: String) -> Bool {
        let k = key.lowercased()
        return ["tel", "phone", "mobile", "cell", "fax"].contains { k == $0 || k.hasPrefix($0) }
    }

    /// One word of 9–15 digits written with `+-() .` only.
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

    // MARK: Home directories

    /// `/Users/alice/x` → `/Users/[user]/x`, `/home/bob` → `/home/[user]`,
    /// `C:\Users\carol\x` → `C:\Users\[user]\x`; a marker inside a longer path
    /// (`/srv/home/x`) is not a home directory.
    static func redactHomeDirectories(_ word: String) -> String {
        let bytes = Array(word.utf8)
        guard bytes.count > 6 else { return word }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        var changed = false
        while i < bytes.count {
            if let nameStart = homeMarkerEnd(bytes, i) {
                var end = nameStart
                while end < bytes.count, !endsUserName(bytes[end]) { end += 1 }
                if end > nameStart {
                    out.append(contentsOf: bytes[i..<nameStart])
                    out.append(contentsOf: Array("[user]".utf8))
                    i = end
                    changed = true
                    continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return changed ? String(decoding: out, as: UTF8.self) : word
    }

    static let homeMarkers: [[UInt8]] = ["/users/", "/home/", "\\users\\"].map { Array($0.utf8) }

    /// Where the user name starts when a home-directory marker begins at `i`. Repeated slashes
    /// name the same folder as one (`//home/bob`, `/home//bob`), so they hide no name.
    static func homeMarkerEnd(_ b: [UInt8], _ i: Int) -> Int? {
        let slash = UInt8(ascii: "/")
        guard b[i] == slash || b[i] == UInt8(ascii: "\\") else { return nil }
        if i > 0 {
            // The run of slashes the marker's first one ends, and what comes before it.
            var j = i
            if b[i] == slash { while j > 0, b[j - 1] == slash { j -= 1 } }
            if j > 0 {
                let prev = b[j - 1]
                let isPathChar = isAlnum(prev) || prev == UInt8(ascii: ".") || prev == UInt8(ascii: "-")
                    || prev == UInt8(ascii: "_") || prev == UInt8(ascii: "\\") || prev == slash
                if isPathChar { return nil }  // the marker is deeper in a path
                // After a scheme, two slashes open a host (`https://home/x`); three, a path
                // (`file:///Users/…`); one, a drive's root (`C:/Users/…`).
                if prev == UInt8(ascii: ":"), i - j + 1 == 2 { return nil }
            }
        }
        for m in homeMarkers where i + m.count < b.count {
            var match = true
            for k in 0..<m.count where lowerASCII(b[i + k]) != m[k] {
                match = false
                break
            }
            if match {
                var nameStart = i + m.count
                while nameStart < b.count, b[nameStart] == m[m.count - 1] { nameStart += 1 }
                return nameStart
            }
        }
        return nil
    }

    static func endsUserName(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"),
             UInt8(ascii: ">"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\""), UInt8(ascii: "'"),
             UInt8(ascii: "`"), UInt8(ascii: "\t"):
            return true
        default:
            return false
        }
    }

    // MARK: Phone numbers across words

    /// Replaces phone numbers written in groups (`+1 415 555 0100`, `(415) 555-0100`,
    /// `415 555 0100`) with `[phone]`. A word that is a phone number on its own is left to
    /// ``redactWord(_:)``.
    static func redactPhoneNumbers(_ line: String) -> String {
        let b = Array(line.utf8)
        // Fast path: fewer than 9 digits cannot hold a phone number.
        var digitCount = 0
        for c in b where isDigit(c) { digitCount += 1 }
        guard digitCount >= 9 else { return line }
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        var changed = false
        while i < b.count {
            if startsPhone(b, i), let end = phoneEnd(b, i) {
                out.append(contentsOf: Array("[phone]".utf8))
                i = end
                changed = true
                continue
            }
            out.append(b[i])
            i += 1
        }
        return changed ? String(decoding: out, as: UTF8.self) : line
    }

    static func startsPhone(_ b: [UInt8], _ i: Int) -> Bool {
        let c = b[i]
        guard isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "(") else { return false }
        guard i > 0 else { return true }
        let prev = b[i - 1]
        return !(isAlnum(prev) || prev == UInt8(ascii: ".") || prev == UInt8(ascii: "-") || prev == UInt8(ascii: "_")
            || prev == UInt8(ascii: "/") || prev == UInt8(ascii: "+") || prev == UInt8(ascii: "("))
    }

    /// A digit group of a phone number as written.
    struct Group {
        var digits: Int
        var parenthesized: Bool
        /// The separator before the group (nil for the first).
        var separator: UInt8?
        /// Index just past the group (and its closing parenthesis).
        var end: Int
    }

    /// The end of the longest phone number written across words that starts at `start`, if any.
    static func phoneEnd(_ b: [UInt8], _ start: Int) -> Int? {
        var i = start
        let plus = b[i] == UInt8(ascii: "+")
        if plus { i += 1 }
        var groups: [Group] = []
        var separator: UInt8? = nil
        while true {
            var parenthesized = false
            var j = i
            if j < b.count, b[j] == UInt8(ascii: "(") {
                parenthesized = true
                j += 1
            }
            let digitsStart = j
            while j < b.count, isDigit(b[j]) { j += 1 }
            let digits = j - digitsStart
            guard digits > 0 else { break }
            if parenthesized {
                guard j < b.count, b[j] == UInt8(ascii: ")") else { break }
                j += 1
            }
            groups.append(Group(digits: digits, parenthesized: parenthesized, separator: separator, end: j))
            // A separator counts only when a digit (or an opening parenthesis) follows.
            var k = j
            var sep: UInt8? = nil
            if k < b.count, b[k] == UInt8(ascii: " ") || b[k] == UInt8(ascii: "-") || b[k] == UInt8(ascii: ".") {
                sep = b[k]
                k += 1
            } else if parenthesized {
                sep = UInt8(ascii: ")")  // `(415)555-0100`
            }
            guard let s = sep, k < b.count, isDigit(b[k]) || (b[k] == UInt8(ascii: "(") && s == UInt8(ascii: " ")) else {
                break
            }
            separator = s
            i = k
        }
        // The longest prefix of the groups that reads as a phone number, written across words or
        // with parentheses (a plain word is ``looksLikePhone``'s).
        var n = groups.count
        while n >= 2 {
            let g = Array(groups[0..<n])
            let end = g[n - 1].end
            let spans = g.contains { $0.separator == UInt8(ascii: " ") } || g.contains(where: \.parenthesized)
            if spans, boundaryAfter(b, end), isPhoneShape(g, plus: plus) { return end }
            n -= 1
        }
        return nil
    }

    static func boundaryAfter(_ b: [UInt8], _ end: Int) -> Bool {
        guard end < b.count else { return true }
        let c = b[end]
        if isAlnum(c) || c == UInt8(ascii: "_") { return false }
        // `12:30` or `1.5`: the number goes on.
        if (c == UInt8(ascii: ":") || c == UInt8(ascii: ".") || c == UInt8(ascii: ",")) && end + 1 < b.count
            && isDigit(b[end + 1])
        {
            return false
        }
        return true
    }

    static func isPhoneShape(_ g: [Group], plus: Bool) -> Bool {
        let total = g.reduce(0) { $0 + $1.digits }
        guard total >= 9, total <= 15 else { return false }
        if plus {
            // +<country code> and groups: +1 415 555 0100, +44 20 7946 0958, +33 1 23 45 67 89.
            return g[0].digits <= 3 && !g[0].parenthesized && g.count <= 7 && g.dropFirst().allSatisfy { $0.digits <= 8 }
        }
        if g[0].parenthesized {
            // (415) 555-0100, (0151) 496 0000
            return g[0].digits >= 2 && g[0].digits <= 5 && g.count <= 4
                && g.dropFirst().allSatisfy { !$0.parenthesized && $0.digits >= 2 && $0.digits <= 8 }
        }
        let d = g.map(\.digits)
        if g.contains(where: \.parenthesized) {
            // 1 (415) 555-0100
            return d.count >= 2 && d.count <= 4 && d.allSatisfy { $0 >= 1 && $0 <= 5 }
        }
        // No country code, no parentheses: only the shapes of a national number, 415 555 0100,
        // 415 555-0100, 1 415 555 0100, 020 7946 0958, 0161 496 0000.
        return d == [3, 3, 4] || d == [1, 3, 3, 4] || d == [3, 4, 4] || d == [4, 3, 4]
    }

    // MARK: Bytes

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    @inline(__always) static func isAlnum(_ c: UInt8) -> Bool {
        isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 0x80
    }

    @inline(__always) static func lowerASCII(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
