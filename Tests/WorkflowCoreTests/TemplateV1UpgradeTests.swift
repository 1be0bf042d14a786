import WorkflowCore
import XCTest

/// The v1 → v2 upgrade reports every problem of a v1 template, not just its step-shape problems,
/// each with a path into the v1 document the author wrote.
final class TemplateV1UpgradeTests: XCTestCase {
    /// A `Depth` tool whose output is `depth`: a step producing `depthmap` contradicts it.
    let depthTool = ToolSpec(kind: "Depth", inputs: [PortSpec(name: "image", type: "ImageRef")],
                             outputs: [PortSpec(name: "depth", type: "DepthRef")], resourceClass: .remote)

    /// One v1 template with problems of every layer: v1 shapes, node fields, tool contract, top level.
    let broken: JSON = ["schema": "app.workflow/v1",
                        "steps": [["id": "load", "kind": "ImageLoader", "producedKeys": "image"],
                                  ["id": "mask", "kind": "UserMaskEditor", "requiredKeys": ["image", 3], "colour": "red",
                                   "await": ["type": "draw_mask", "expiresIn": "1 day"]],
                                  "not a step",
                                  ["id": "mask", "kind": "K"],
                                  ["id": "relight", "kind": "Relight", "requiredKeys": ["image"],
                                   "resources": ["class": "cloud"]],
                                  ["id": "depth", "kind": "Depth", "requiredKeys": ["image"], "producedKeys": ["depthmap"]]]]

    func testEveryProblemOfAV1TemplateIsCollectedWithItsV1Path() {
        let v = TemplateCompiler.compile(broken, tools: ["Depth": depthTool])
        XCTAssertFalse(v.valid)
        XCTAssertNil(v.template)
        let found = v.errors.map { "\($0.code) \($0.path ?? "-")" }
        XCTAssertEqual(Set(found), [
            "malformedTemplate $.name",                         // top level, found by the v2 rules
            "malformedTemplate $.steps[0].producedKeys",         // v1 shape
            "malformedTemplate $.steps[1].requiredKeys[1]",      // v1 shape
            "malformedTemplate $.steps[1].colour",               // unknown step field
            "invalidDuration $.steps[1].await.expiresIn",        // node rule, after a shape problem in the same step
            "malformedTemplate $.steps[2]",                      // not an object
            "duplicateNodeId $.steps[3].id",                     // reported once, not by both passes
            "malformedTemplate $.steps[4].resources.class",      // node rule in a step after the shape problems
            "toolContractMismatch $.steps[5].producedKeys[0]",   // a port path mapped to the key that made it
        ], "\(v.errors)")
        XCTAssertEqual(found.count, 9, "each problem once: \(found)")
    }

    func testEveryV1ErrorPathAndMessagePointIntoTheV1Document() {
        let v = TemplateCompiler.compile(broken, tools: ["Depth": depthTool])
        for e in v.errors {
            let path = try? XCTUnwrap(e.path)
            XCTAssertTrue(path == "$.name" || path?.hasPrefix("$.steps") == true, "\(e)")
            for v2Word in ["nodes", "edges", "inputs", "outputs"] {
                XCTAssertFalse(e.message.contains("$.\(v2Word)"), "\(e)")
                XCTAssertFalse(path?.contains(v2Word) ?? false, "\(e)")
            }
        }
        let duration = v.errors.first { $0.code == "invalidDuration" }
        XCTAssertEqual(duration?.nodeId, "mask")
        XCTAssertEqual(duration?.message.hasPrefix("$.steps[1].await.expiresIn: "), true, "\(String(describing: duration))")
    }

    func testAKeyListedTwiceOrStartingWithUnderscoreIsNamedAtItsV1Place() {
        let t: JSON = ["schema": "app.workflow/v1", "name": "dups",
                       "steps": [["id": "load", "kind": "ImageLoader", "producedKeys": ["image", "image"]],
                                 ["id": "use", "kind": "Use", "requiredKeys": ["image", "image", "_x"]]]]
        let v = TemplateCompiler.compile(t, tools: [:])
        XCTAssertEqual(Set(v.errors.map { "\($0.code) \($0.path ?? "-")" }), [
            "malformedTemplate $.steps[0].producedKeys[1]", "malformedTemplate $.steps[1].requiredKeys[1]",
            "malformedTemplate $.steps[1].requiredKeys[2]",
        ])
        XCTAssertTrue(v.errors.contains { $0.message.contains("'image' is listed twice") })
        XCTAssertTrue(v.errors.contains { $0.message.contains("'_x' must start with a letter") })
    }

    func testABrokenStepAddsNoSpuriousEdgeErrorsForTheStepsAfterIt() {
        // Step 0's produced keys are unreadable and step 1 repeats an id: neither may turn the edges of
        // later steps into unknownPort/unknownNode/multi-producer errors.
        let t: JSON = ["schema": "app.workflow/v1", "name": "noise",
                       "steps": [["id": "load", "kind": "ImageLoader", "producedKeys": ["image", "bad key"]],
                                 ["id": "load", "kind": "ImageLoader", "producedKeys": ["image"]],
                                 ["id": "bad id!", "kind": "Fix", "requiredKeys": ["image"], "producedKeys": ["image"]],
                                 ["id": "use", "kind": "Use", "requiredKeys": ["image"]]]]
        let v = TemplateCompiler.compile(t, tools: [:])
        XCTAssertEqual(v.errors.map { "\($0.code) \($0.path ?? "-")" },
                       ["malformedTemplate $.steps[0].producedKeys[1]", "duplicateNodeId $.steps[1].id",
                        "malformedTemplate $.steps[2].id"])
    }

    func testAValidV1TemplateStillUpgradesWithItsToolContractChecked() throws {
        let t: JSON = ["schema": "app.workflow/v1", "name": "ok",
                       "steps": [["id": "load", "kind": "ImageLoader", "producedKeys": ["image"]],
                                 ["id": "depth", "kind": "Depth", "requiredKeys": ["image"], "producedKeys": ["depth"]]]]
        let v = TemplateCompiler.compile(t, tools: ["Depth": depthTool])
        XCTAssertTrue(v.valid, "\(v.errors)")
        let template = try XCTUnwrap(v.template)
        XCTAssertEqual(template.edges.map { "\($0.from.node).\($0.from.port)→\($0.to.node).\($0.to.port)" },
                       ["load.image→depth.image"])
    }
}
