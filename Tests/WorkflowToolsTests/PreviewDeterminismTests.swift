import WorkflowCore
import WorkflowTools
import XCTest

/// 003 step 8, "PreviewDeterminismTests: same input → same preview bytes hash", and "Preview
/// function returns a small, cheap preview for UI thumbnails".
final class PreviewDeterminismTests: XCTestCase {
    /// FNV-1a over the preview's bytes: a hash that, unlike `Hasher`, is the same in every process.
    private func digest(_ preview: ToolPreview?) -> UInt64? {
        guard let preview else { return nil }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array(preview.mediaType.utf8) + [0] + preview.bytes {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// The last two: characters that join once reversed, so the output has fewer characters
    /// than the input (a Hangul vowel after its consonant makes one syllable; a mark after its
    /// letter one character): 300 in, 200 out.
    private let samples = ["hello", "", "straße ﬁ Ǆ", "👍🏽 family 👨‍👩‍👧 done", String(repeating: "long text ", count: 2_000),
                           String(repeating: "\u{1161}\u{1100}x", count: 100), String(repeating: "\u{0301}ex", count: 100)]

    private func effects(_ text: String) -> [JSON] {
        [localRun("Text", params: ["text": .string(text)]), localRun("Uppercase", inputs: textInput(text)),
         localRun("Append", params: ["suffix": "!"], inputs: textInput(text)), localRun("Reverse", inputs: textInput(text))]
    }

    func testTheSameInputGivesTheSamePreviewBytesHashEveryTimeAndInEveryToolBox() throws {
        for text in samples {
            for effect in effects(text) {
                let first = try ToolBox.builtInTextTools().preview(effect)
                XCTAssertNotNil(first)
                for _ in 0..<3 {
                    let again = try ToolBox.builtInTextTools().preview(effect)
                    XCTAssertEqual(again?.bytes, first?.bytes)
                    XCTAssertEqual(digest(again), digest(first))
                }
            }
        }
    }

    func testDifferentInputsGiveDifferentPreviews() throws {
        let box = ToolBox.builtInTextTools()
        let a = try box.preview(localRun("Uppercase", inputs: textInput("cat")))
        let b = try box.preview(localRun("Uppercase", inputs: textInput("dog")))
        XCTAssertNotEqual(digest(a), digest(b))
        let bang = try box.preview(localRun("Append", params: ["suffix": "!"], inputs: textInput("cat")))
        let quiet = try box.preview(localRun("Append", params: ["suffix": "?"], inputs: textInput("cat")))
        XCTAssertNotEqual(bang, quiet, "parameters are part of the input")
    }

    func testThePreviewShowsTheBeginningOfWhatTheRunMakes() throws {
        let box = ToolBox.builtInTextTools()
        for text in samples {
            for effect in effects(text) {
                let made = try XCTUnwrap(outputText(box.answer(effect)), "\(effect)")
                XCTAssertEqual(try box.preview(effect), ToolPreview.text(made), "\(effect["kind"]!) of \(text.prefix(20))")
            }
        }
    }

    func testAPreviewOfALargeTextIsSmall() throws {
        let big = String(repeating: "ab", count: 500_000)
        let preview = try XCTUnwrap(ToolBox.builtInTextTools().preview(localRun("Reverse", inputs: textInput(big))))
        XCTAssertLessThanOrEqual(preview.bytes.count, ToolPreview.maxBytes)
        XCTAssertEqual(preview.text?.count, ToolPreview.maxTextCharacters)
        XCTAssertEqual(preview.text?.last, "…")
        XCTAssertEqual(preview.json["mediaType"], "text/plain; charset=utf-8")
    }

    func testABinaryPreviewIsCutToTheLimitAndCarriedAsBase64() {
        let preview = ToolPreview(mediaType: "image/png", bytes: Array(repeating: 0xFF, count: 5_000))
        XCTAssertEqual(preview.bytes.count, ToolPreview.maxBytes)
        XCTAssertNil(preview.text)
        XCTAssertEqual(preview.json["base64"]?.stringValue?.prefix(8), "////////")
    }

    func testAToolWithoutAPreviewGivesNone() throws {
        struct Plain: Tool {
            var spec: ToolSpec { ToolSpec(kind: "Plain", outputs: [PortSpec(name: "text", type: "TextRef")]) }
            func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] { ["text": TextContent.asset("x")] }
        }
        XCTAssertNil(try ToolBox([Plain()]).preview(localRun("Plain")))
    }
}
