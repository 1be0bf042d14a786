import WorkflowCore
import XCTest

/// The workflow list's search: lower-cased text matched by its UTF-8 bytes.
final class TextSearchTests: XCTestCase {
    func testFindsSubstringsByTheirBytes() {
        XCTAssertTrue(TextSearch.contains("beach photo 12", Array("photo 1".utf8)))
        XCTAssertTrue(TextSearch.contains("beach photo 12", Array("beach photo 12".utf8)))
        XCTAssertFalse(TextSearch.contains("beach photo 12", Array("photo 3".utf8)))
        XCTAssertFalse(TextSearch.contains("ab", Array("abc".utf8)))
        XCTAssertTrue(TextSearch.contains("anything", []))
        XCTAssertTrue(TextSearch.contains("café crème", Array("é cr".utf8)))
        XCTAssertFalse(TextSearch.contains("aab", Array("abb".utf8)))
    }

    func testFindsSubstringsInASliceOfALargerBufferAndNeverPastItsEnd() {
        let buffer = Array("harbor photo 1beach photo 2".utf8)
        buffer.withUnsafeBufferPointer { all in
            func slice(_ start: Int, _ count: Int) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(rebasing: all[start..<start + count])
            }
            func has(_ start: Int, _ count: Int, _ needle: String) -> Bool {
                Array(needle.utf8).withUnsafeBufferPointer { TextSearch.contains(slice(start, count), $0) }
            }
            XCTAssertTrue(has(0, 14, "photo 1"))
            XCTAssertFalse(has(0, 14, "1beach"), "a match running into the next text is not one")
            XCTAssertTrue(has(14, 13, "beach photo 2"))
            XCTAssertFalse(has(14, 13, "photo 1"))
            XCTAssertTrue(has(14, 0, ""))
            XCTAssertFalse(has(14, 0, "b"))
        }
    }
}
