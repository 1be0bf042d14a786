/// Deterministic jitter: a factor in `1 ± spread` drawn from a PRNG seeded by the engine's seed,
/// the thing being delayed and its attempt number. The same fixture replays identically, and a
/// reopened engine draws the same numbers it would have drawn before.
public enum Jitter {
    public static func factor(seed: UInt64, key: String, attempt: Int, spread: Double) -> Double {
        var rng = SplitMix64(seed: seed ^ fnv1a(key) ^ UInt64(truncatingIfNeeded: attempt &* 0x9E37_79B9))
        let unit = Double(rng.next() >> 11) / Double(1 << 53)  // [0, 1)
        return 1 - spread + 2 * spread * unit
    }

    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and good enough for jitter.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
