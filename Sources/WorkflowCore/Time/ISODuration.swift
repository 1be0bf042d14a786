/// ISO 8601 durations as templates write them (`PT24H`, `P1D`, `PT1H30M`, `PT0.5S`, `P2W`).
///
/// Strict to the standard's form: upper-case designators, weeks and days before `T`, hours,
/// minutes and seconds after it, each once and in that order; a number is digits, with a decimal
/// fraction (`.` or `,`, digits on both sides) only on the last component written. Years and
/// months have no fixed length, so they are refused rather than guessed.
public enum ISODuration {
    /// Milliseconds in `text`, or nil when it is not a supported ISO 8601 duration. Zero
    /// (`PT0S`) is a duration: whether it is allowed is the caller's rule.
    ///
    /// `lenient` reads durations as versions before 2026-11-25 did, for templates a store kept
    /// from them: designators in any case, and a number of digits, `.` and `,` in any order
    /// (`PT.5S`, `PT1.5H30M`).
    public static func milliseconds(_ text: String, lenient: Bool = false) -> Int64? {
        var chars = Array((lenient ? text.uppercased() : text).unicodeScalars)
        guard chars.first == "P", chars.count >= 3 else { return nil }
        chars.removeFirst()
        var total = 0.0
        var inTime = false
        var number = ""
        var fractional = false  // the number being read has a fraction
        var sawFraction = false  // a component with a fraction was written: it must be the last
        var sawComponent = false
        var lastRank = -1  // enforce W,D then H,M,S order
        for c in chars {
            if c == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            if ("0"..."9").contains(c) {
                number.unicodeScalars.append(c)
                continue
            }
            if c == "." || c == "," {
                // Strict: digits before the separator, and one separator.
                guard lenient || (!number.isEmpty && !fractional) else { return nil }
                fractional = true
                number.unicodeScalars.append(".")
                continue
            }
            // Strict: digits after the separator, and no component after a fraction.
            guard !number.isEmpty, lenient || (number.last != "." && !sawFraction),
                  let value = Double(number), value.isFinite
            else { return nil }
            let unit: Double
            let rank: Int
            switch (c, inTime) {
            case ("W", false): unit = 7 * 86_400; rank = 0
            case ("D", false): unit = 86_400; rank = 1
            case ("H", true): unit = 3600; rank = 2
            case ("M", true): unit = 60; rank = 3
            case ("S", true): unit = 1; rank = 4
            default: return nil  // years, months, lower case, or a unit on the wrong side of T
            }
            guard rank > lastRank else { return nil }
            lastRank = rank
            total += value * unit
            sawFraction = fractional
            fractional = false
            number = ""
            sawComponent = true
        }
        guard number.isEmpty, sawComponent, total < 1e13 else { return nil }
        if inTime && lastRank < 2 { return nil }  // "P1DT" with nothing after T
        return Int64((total * 1000).rounded())
    }
}
