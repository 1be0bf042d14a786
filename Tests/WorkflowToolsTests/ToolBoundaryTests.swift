import WorkflowCore
import WorkflowEngine
import WorkflowTools
import XCTest

/// Boundaries of the Swift tool API, each pinned after a mutation of it went unnoticed (003
/// step 8: deterministic, small previews; IO contracts checked with descriptive errors).
final class ToolBoundaryTests: XCTestCase {
    // MARK: Text previews

    func testATextOfExactlyTheCharacterLimitIsShownWholeWithoutAnEllipsis() throws {
        let exact = String(repeating: "a", count: ToolPreview.maxTextCharacters)
        XCTAssertEqual(ToolPreview.text(exact).text, exact)
        let preview = try XCTUnwrap(ToolBox.builtInTextTools().preview(localRun("Text", params: ["text": .string(exact)])))
        XCTAssertEqual(preview.text, exact, "nothing was cut, so no ellipsis")
        let oneMore = exact + "b"
        XCTAssertEqual(ToolPreview.text(oneMore).text, String(repeating: "a", count: ToolPreview.maxTextCharacters - 1) + "…")
    }

    func testAPreviewCutForSizeIsValidUTF8WithinTheByteLimitAndEndsInAnEllipsis() throws {
        // 80 characters of 18 UTF-8 bytes each (1,440 bytes): 1,021 bytes end inside a zero-width
        // joiner, in the 57th character; the preview keeps 56 whole ones and the ellipsis.
        let family = "👨‍👩‍👧"
        XCTAssertEqual(family.utf8.count, 18)
        let big = String(repeating: family, count: ToolPreview.maxTextCharacters)
        for text in [big, String(repeating: "e\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}\u{307}\u{308}", count: 80)] {
            let preview = ToolPreview.text(text)
            XCTAssertLessThanOrEqual(preview.bytes.count, ToolPreview.maxBytes)
            let decoded = try XCTUnwrap(String(validating: preview.bytes, as: UTF8.self), "the preview bytes are valid UTF-8")
            XCTAssertFalse(decoded.unicodeScalars.contains("\u{FFFD}"), "no replacement character from a cut sequence")
            XCTAssertTrue(decoded.hasSuffix("…"), "the ellipsis marks the cut")
            XCTAssertTrue(text.unicodeScalars.starts(with: decoded.unicodeScalars.dropLast()),
                          "the preview shows the beginning of the text")
            XCTAssertTrue(text.starts(with: decoded.dropLast()), "whole characters only, none cut between its scalars")
        }
    }

    // MARK: Inputs

    func testAnOptionalInputMayBeLeftUnboundAndTheToolStillRuns() throws {
        struct Overlay: Tool {
            var spec: ToolSpec {
                ToolSpec(kind: "Overlay", inputs: [PortSpec(name: "text", type: "TextRef"),
                                                   PortSpec(name: "note", type: "TextRef", optional: true)],
                         outputs: [PortSpec(name: "text", type: "TextRef")])
            }
            func run(_ invocation: ToolInvocation) throws -> [String: AssetDraft] {
                let note = invocation.inputs["note"] == nil ? "" : " (" + (try invocation.text("note")) + ")"
                return ["text": TextContent.asset(try invocation.text("text") + note)]
            }
        }
        let box = try ToolBox([Overlay()])
        let answer = box.answer(localRun("Overlay", inputs: textInput("base")))
        XCTAssertNil(answer["error"], "\(answer)")
        XCTAssertEqual(outputText(answer), "base")
        var both = textInput("base")
        both["note"] = ToolBox.json(TextContent.asset("n"))
        XCTAssertEqual(outputText(box.answer(localRun("Overlay", inputs: both))), "base (n)")
    }

    // MARK: Answers

    func testAContractErrorInAnAnswerKeepsItsDetailsNamingThePort() {
        let box = ToolBox.builtInTextTools()
        let missing = box.answer(localRun("Uppercase"))
        XCTAssertEqual(missing["error"]?["code"], "missingInput")
        XCTAssertEqual(missing["error"]?["details"]?["port"], "text")
        XCTAssertEqual(missing["error"]?["details"]?["kind"], "Uppercase")
        XCTAssertEqual(missing["error"]?["details"]?["expected"], "TextRef")
        let wrong = box.answer(localRun("Uppercase", inputs: ["text": ["type": "ImageRef", "uri": "file:///p.png"]]))
        XCTAssertEqual(wrong["error"]?["code"], "portTypeMismatch")
        XCTAssertEqual(wrong["error"]?["details"]?["port"], "text")
        XCTAssertEqual(wrong["error"]?["details"]?["got"], "ImageRef")
    }

    func testTheBoxHandlesOnlyLocalRunEffects() {
        let box = ToolBox.builtInTextTools()
        XCTAssertTrue(box.handles(localRun("Uppercase")))
        for type in ["remote.submit", "notify", "cache.evict"] {
            let effect: JSON = ["type": .string(type), "runId": "run-1", "kind": "Uppercase", "params": [:], "inputs": [:]]
            XCTAssertFalse(box.handles(effect), type)
        }
        let untyped: JSON = ["runId": "run-1", "kind": "Uppercase"]
        XCTAssertFalse(box.handles(untyped))
    }

    // MARK: Previews at their limits

    func testAnAppendPreviewWithNoSuffixOfALongTextEndsInAnEllipsis() throws {
        let box = ToolBox.builtInTextTools()
        let effect = localRun("Append", inputs: textInput(String(repeating: "xy", count: 100)))
        let made = try XCTUnwrap(outputText(box.answer(effect)))
        let preview = try XCTUnwrap(box.preview(effect))
        XCTAssertEqual(preview, ToolPreview.text(made))
        XCTAssertEqual(preview.text?.last, "…")
    }

    func testAPreviewCutForSizeKeepsEveryCharacterThatFitsExactlyBeforeTheEllipsis() throws {
        // 50 characters of 19 bytes and one of 71: exactly 1,021 bytes, so with the 3-byte
        // ellipsis the preview is exactly maxBytes long.
        let marks19 = "e" + String(repeating: "\u{301}", count: 9)
        let marks71 = "o" + String(repeating: "\u{302}", count: 35)
        XCTAssertEqual(marks19.utf8.count, 19)
        XCTAssertEqual(marks71.utf8.count, 71)
        let kept = String(repeating: marks19, count: 50) + marks71
        let text = kept + String(repeating: "x", count: 41)
        let preview = ToolPreview.text(text)
        XCTAssertEqual(preview.bytes.count, ToolPreview.maxBytes)
        XCTAssertEqual(preview.text, kept + "…")
    }
}
