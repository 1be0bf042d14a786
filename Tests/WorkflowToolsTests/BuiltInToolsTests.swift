import Foundation
import WorkflowCore
import WorkflowEngine
import WorkflowTools
import XCTest

/// The built-in pure text tools (Text, Uppercase, Append, Reverse) and the text assets they use.
final class BuiltInToolsTests: XCTestCase {
    func testTheBuiltInTextToolsMakeWhatTheirNamesSay() {
        let box = ToolBox.builtInTextTools()
        XCTAssertEqual(outputText(box.answer(localRun("Text", params: ["text": "hello"]))), "hello")
        XCTAssertEqual(outputText(box.answer(localRun("Uppercase", inputs: textInput("hello, straße")))), "HELLO, STRASSE")
        XCTAssertEqual(outputText(box.answer(localRun("Append", params: ["suffix": "!"], inputs: textInput("HELLO")))), "HELLO!")
        XCTAssertEqual(outputText(box.answer(localRun("Append", inputs: textInput("as is")))), "as is",
                       "the suffix defaults to nothing")
        XCTAssertEqual(outputText(box.answer(localRun("Reverse", inputs: textInput("ab👍🏽c")))), "c👍🏽ba",
                       "characters, not bytes, are reversed")
    }

    func testTheirContractsAreValidAndTheEngineAcceptsThem() throws {
        let box = ToolBox.builtInTextTools()
        XCTAssertEqual(box.kinds, ["Text", "Uppercase", "Append", "Reverse"])
        let engine = try Engine(configJSON: ["clock": ["mode": "manual"]])
        defer { engine.close() }
        for spec in box.specs {
            XCTAssertTrue(ToolSpec.decode(spec.json).issues.isEmpty, spec.kind)
            XCTAssertEqual(try engine.callOrThrow("tool.register", spec.json.objectValue!)["kind"]?.stringValue, spec.kind)
        }
    }

    func testAWrongParameterTypeFailsWithTheParameterNamed() {
        let answer = ToolBox.builtInTextTools().answer(localRun("Append", params: ["suffix": 3], inputs: textInput("a")))
        XCTAssertEqual(answer["error"]?["code"], "invalidParam")
        XCTAssertEqual(answer["error"]?["message"], "The 'suffix' parameter must be text, not integer.")
    }

    /// A `null` param is an absent one, as `null` members are in every op's arguments (OPS
    /// section 1): a node whose person cleared a param with `null` runs with the default.
    func testANullParameterTakesItsDefault() {
        let answer = ToolBox.builtInTextTools().answer(localRun("Append", params: ["suffix": .null], inputs: textInput("a")))
        XCTAssertEqual(outputText(answer), "a")
    }

    func testTextSurvivesTheDataURIRoundTripWithReservedCharacters() throws {
        let text = "a,b%c d/é?#&=+\n👍"
        let asset = TextContent.asset(text)
        XCTAssertEqual(asset.type, "TextRef")
        XCTAssertEqual(asset.bytes, Int64(text.utf8.count))
        XCTAssertEqual(try TextContent.read(asset.uri), text)
        XCTAssertEqual(try TextContent.read("data:text/plain;charset=utf-8;base64,aMOpbGxv"), "héllo")
    }

    func testTextIsReadFromARealFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wf-tools-\(UUID().uuidString).txt")
        try "from a file".write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        let answer = ToolBox.builtInTextTools().answer(localRun("Uppercase", inputs: ["text": ["type": "TextRef", "uri": .string(url.absoluteString)]]))
        XCTAssertEqual(outputText(answer), "FROM A FILE")
    }

    func testAnInputThatCannotBeReadFailsTheRunWithAReason() {
        let box = ToolBox.builtInTextTools()
        let gone = box.answer(localRun("Uppercase", inputs: ["text": ["type": "TextRef", "uri": "file:///nonexistent/wf-gone.txt"]]))
        XCTAssertEqual(gone["error"]?["code"], "unreadableInput")
        XCTAssertEqual(gone["error"]?["hint"], "Check that the file still exists.")
        let web = box.answer(localRun("Uppercase", inputs: ["text": ["type": "TextRef", "uri": "https://example.com/a.txt"]]))
        XCTAssertEqual(web["error"]?["code"], "unreadableInput")
        XCTAssertEqual(web["error"]?["details"]?["scheme"], "https")
    }

    func testAWrongParameterTypeNamesTheParameterInTheErrorDetails() {
        let answer = ToolBox.builtInTextTools().answer(localRun("Append", params: ["suffix": 3], inputs: textInput("a")))
        XCTAssertEqual(answer["error"]?["details"]?["param"], "suffix")
    }

    func testAnAnsweredTextAssetCarriesItsTypeSizeInBytesAndProviderSchema() {
        let answer = ToolBox.builtInTextTools().answer(localRun("Text", params: ["text": "héllo 👍"]))
        let out = answer["outputs"]?["text"]
        XCTAssertEqual(out?["type"], "TextRef")
        XCTAssertEqual(out?["bytes"], 11, "UTF-8 bytes, not characters")
        XCTAssertEqual(out?["meta"], ["providerSchema": "v1"])
        XCTAssertEqual(TextContent.asset("x").meta, ["providerSchema": "v1"])
    }

    func testAMalformedDataURIFailsAsUnreadableInput() {
        for uri in ["data:text/plain;base64,@@not base64@@", "data:text/plain;charset=utf-8;base64,/w==", "data:text/plain"] {
            XCTAssertThrowsError(try TextContent.read(uri), uri) { error in
                XCTAssertEqual((error as? ToolFailure)?.code, "unreadableInput", uri)
            }
        }
    }
}
