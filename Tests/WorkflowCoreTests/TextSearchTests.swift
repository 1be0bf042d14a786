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
}
