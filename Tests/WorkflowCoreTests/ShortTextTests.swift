import WorkflowCore
import XCTest

/// Ids and keys written straight into bytes are exactly what string interpolation writes.
final class ShortTextTests: XCTestCase {
    func testIdsAreThePrefixADashAndTheNumberAsInterpolationWritesThem() {
        var rng = SplitMix64(seed: 11)
        var numbers: [Int64] = [0, 1, 9, 10, 99, 100, 12_345, -1, -10, Int64.max, Int64.min, Int64.min + 1]
        for _ in 0..<300 { numbers.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)) }
        for prefix in ["run", "as", "e", "wf", "", "a-much-longer-prefix-than-fits-inline", "präfix ✓"] {
            for n in numbers {
                XCTAssertEqual(ShortText.id(prefix, n), "\(prefix)-\(n)")
            }
        }
    }

    func testKeysJoinTheirPartsAsInterpolationDoes() {
        let parts = ["", "run-1", "wf-12345", "local:", "node with spaces", "ünï ✓ 🎉", String(repeating: "x", count: 40)]
        for a in parts {
            for b in parts {
                XCTAssertEqual(ShortText.concat(a, b), "\(a)\(b)")
                for c in parts { XCTAssertEqual(ShortText.join(a, b, c, separator: 0x2F), "\(a)/\(b)/\(c)") }
            }
        }
    }
}
