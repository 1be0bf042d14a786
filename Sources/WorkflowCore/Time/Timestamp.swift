/// A point in time: milliseconds since 1970-01-01T00:00:00Z.
///
/// The core never reads a clock; every rule receives the time it runs at. Text form is
/// RFC 3339 UTC with milliseconds, `2026-01-01T00:00:30.000Z`.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    /// The latest time the engine records: timestamps are RFC 3339 with a four-digit year.
    public static let latest = Timestamp(milliseconds: 253_402_300_799_999)  // 9999-12-31T23:59:59.999Z
    /// The earliest time the engine records.
    public static let earliest = Timestamp(milliseconds: -62_167_219_200_000)  // 0000-01-01T00:00:00.000Z

    /// Whether the time has a four-digit year, so it is written and read back as RFC 3339.
    public var isRecordable: Bool { self >= Self.earliest && self <= Self.latest }

    /// `self` moved by `ms`, kept within ``earliest`` … ``latest``: a deadline that would fall
    /// after the year 9999 (a snooze, an expiry, a retry wait) is ``latest``, the last moment a
    /// clock can reach (`clock.advance` stops there); a cutoff before year 0 is ``earliest``.
    public func adding(milliseconds ms: Int64) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(ms)
        if overflow { return ms > 0 ? Self.latest : Self.earliest }
        return Timestamp(milliseconds: Swift.min(Swift.max(sum, Self.earliest.milliseconds), Self.latest.milliseconds))
    }

    /// `self` moved by `s` seconds (rounded to the millisecond), kept within ``earliest`` …
    /// ``latest`` like ``adding(milliseconds:)``; NaN moves nothing.
    public func adding(seconds s: Double) -> Timestamp {
        let ms = (s * 1000).rounded()
        let span = Double(Self.latest.milliseconds - Self.earliest.milliseconds)
        if ms.isNaN { return self }
        if ms >= span { return Self.latest }
        if ms <= -span { return Self.earliest }
        return adding(milliseconds: Int64(ms))
    }

    /// Seconds from `self` to `later` (negative when `later` is earlier). Any two times, even
    /// ones no clock reaches (a damaged store's): the difference is taken in `Double`.
    public func seconds(until later: Timestamp) -> Double { (Double(later.milliseconds) - Double(milliseconds)) / 1000 }

    public var description: String { rfc3339 }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`; a year outside 0…9999 (a time no clock reaches) is written
    /// with as many digits as it takes.
    public var rfc3339: String {
        // Floor division, without `milliseconds - ms` (which overflows near `Int64.min`).
        let remainder = milliseconds % 1000
        let ms = remainder < 0 ? remainder + 1000 : remainder
        let totalSeconds = milliseconds / 1000 - (remainder < 0 ? 1 : 0)
        let secondsOfDay = ((totalSeconds % 86_400) + 86_400) % 86_400
        let days = (totalSeconds - secondsOfDay) / 86_400
        let (y, m, d) = Timestamp.civil(fromDays: days)
        guard (0...9999).contains(y) else {  // outside four digits: the general path
            func pad(_ v: Int64, _ width: Int) -> String {
                let s = String(v)
                return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
            }
            return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondsOfDay / 3600, 2)):"
                + "\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2)).\(pad(ms, 3))Z"
        }
        // 24 ASCII bytes written in place: formatting is on every card's hot path.
        return String(unsafeUninitializedCapacity: 24) { b in
            func put(_ v: Int64, _ at: Int, _ width: Int) {
                var v = v
                for k in stride(from: at + width - 1, through: at, by: -1) {
                    b[k] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                    v /= 10
                }
            }
            put(y, 0, 4); b[4] = 0x2D; put(m, 5, 2); b[7] = 0x2D; put(d, 8, 2); b[10] = 0x54
            put(secondsOfDay / 3600, 11, 2); b[13] = 0x3A; put(secondsOfDay / 60 % 60, 14, 2); b[16] = 0x3A
            put(secondsOfDay % 60, 17, 2); b[19] = 0x2E; put(ms, 20, 3); b[23] = 0x5A
            return 24
        }
    }

    /// Parses RFC 3339: `2026-01-01T00:00:30Z`, with optional fraction (kept to the
    /// millisecond, further digits ignored) and `Z` or a numeric offset. Returns nil for anything
    /// else (see ``RFC3339Time``).
    public init?(rfc3339 text: String) {
        guard let t = RFC3339Time(parsing: text) else { return nil }
        self.milliseconds = t.seconds * 1000 + t.nanoseconds / 1_000_000
    }

    // Howard Hinnant's civil-date algorithms (days since 1970-01-01, proleptic Gregorian).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension JSON {
    public init(_ t: Timestamp) { self = .string(t.rfc3339) }
    public init(_ t: Timestamp?) { self = t.map { .string($0.rfc3339) } ?? .null }
}

/// An RFC 3339 time to the nanosecond: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, `T` and
/// `Z` in either case, a real date, hours 00-23, seconds 00-59 (no leap second), at least one
/// fraction digit when there is a point; digits after the ninth are ignored.
public struct RFC3339Time: Equatable, Sendable {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    public var seconds: Int64
    /// 0 … 999,999,999.
    public var nanoseconds: Int64

    public init?(parsing text: String) {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == 0x2D, let mo = num(5, 2), b[7] == 0x2D,
            let d = num(8, 2), b[10] == 0x54 || b[10] == 0x74, let h = num(11, 2), b[13] == 0x3A,
            let mi = num(14, 2), b[16] == 0x3A, let s = num(17, 2),
            (1...12).contains(mo), d >= 1, d <= Timestamp.daysInMonth(year: y, month: mo), h < 24, mi < 60, s < 60
        else { return nil }
        var i = 19
        var fraction: Int64 = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var digits = 0
            var scale: Int64 = 100_000_000
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if digits < 9 { fraction += Int64(b[i] - 0x30) * scale }
                scale /= 10
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            guard let oh = num(i + 1, 2), b.count > i + 3, b[i + 3] == 0x3A, let om = num(i + 4, 2), oh < 24, om < 60
            else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == 0x2B ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        seconds = Timestamp.days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        nanoseconds = fraction
    }
}
