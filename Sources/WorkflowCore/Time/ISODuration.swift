/// ISO 8601 durations as templates write them (`PT24H`, `P1D`, `PT1H30M`, `PT0.5S`, `P2W`).
///
/// Years and months have no fixed length, so they are refused rather than guessed.
public enum ISODuration {
    /// Milliseconds in `text`, or nil when it is not a supported ISO 8601 duration.
    public static func milliseconds(_ text: String) -> Int64? {
        var chars = Array(text.uppercased().unicodeScalars)
        guard chars.first == "P", chars.count >= 3 else { return nil }
        chars.removeFirst()
        var total = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        var lastRank = -1  // enforce W,D then H,M,S order
        for c in chars {
            if c == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            if ("0"..."9").contains(c) || c == "." || c == "," {
                number.unicodeScalars.append(c == "," ? "." : c)
                continue
            }
            guard !number.isEmpty, let value = Double(number), value.isFinite, value >= 0 else { return nil }
            let unit: Double
            let rank: Int
            switch (c, inTime) {
            case ("W", false): unit = 7 * 86_400; rank = 0
            case ("D", false): unit = 86_400; rank = 1
            case ("H", true): unit = 3600; rank = 2
            case ("M", true): unit = 60; rank = 3
            case ("S", true): unit = 1; rank = 4
            default: return nil  // years, months, or a unit on the wrong side of T
            }
            guard rank > lastRank else { return nil }
            lastRank = rank
            total += value * unit
            number = ""
            sawComponent = true
        }
        guard number.isEmpty, sawComponent, total < 1e13 else { return nil }
        if inTime && lastRank < 2 { return nil }  // "P1DT" with nothing after T
        return Int64((total * 1000).rounded())
    }
}
