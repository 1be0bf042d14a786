import WorkflowCore
import XCTest

/// Step 9 (template import/export) and TEST PLAN §1–§2: each error code, all errors collected,
/// the v1 upgrade, canonical export, and field order not mattering.
final class TemplateValidationTests: XCTestCase {
    func compile(_ json: JSON, tools: [String: ToolSpec] = [:]) -> TemplateValidation {
        TemplateCompiler.compile(json, tools: tools)
    }

    func testTheSampleTemplateIsValidWithWarningsForToolsNotInstalled() {
        let v = compile(TemplateFixtures.sample)
        XCTAssertTrue(v.valid, "\(v.errors)")
        XCTAssertEqual(Set(v.warnings.filter { $0.code == "toolNotInstalled" }.compactMap(\.nodeId)),
                       ["load1", "stylize1", "compress1"], "the interactive mask1 needs no tool")
    }

    /// OPS §1 Types: no tool's kind holds U+0000 (tool.register refuses it), so a node of such
    /// a kind could never run: a new template is refused at the kind; one a store kept from
    /// before the rule still reads.
    func testANodeKindHoldingANulIsRefusedAtItsPlaceUnlessStoredEarlier() {
        let t: JSON = ["schema": "app.workflow/v2", "name": "n", "nodes": [["id": "a", "kind": "K\u{0}x", "outputs": ["o": "TextRef"]]]]
        let v = compile(t)
        XCTAssertEqual(v.errors.map(\.path), ["$.nodes[0].kind"])
        XCTAssertEqual(v.errors.first?.message, "$.nodes[0].kind: 'kind' must not contain U+0000")
        XCTAssertTrue(TemplateCompiler.compile(t, tools: [:], storedEarlier: true).valid)
    }

    func testCycleABAIsCycleDetectedWithThePathInTheMessage() {
        let t: JSON = ["schema": "app.workflow/v2", "name": "c",
                       "nodes": [["id": "A", "kind": "K", "inputs": ["i": "ImageRef"], "outputs": ["o": "ImageRef"]],
                                 ["id": "B", "kind": "K", "inputs": ["i": "ImageRef"], "outputs": ["o": "ImageRef"]]],
                       "edges": [["from": ["A", "o"], "to": ["B", "i"]], ["from": ["B", "o"], "to": ["A", "i"]]]]
        let v = compile(t)
        XCTAssertEqual(TemplateFixtures.codes(v), ["cycleDetected"])
        XCTAssertEqual(v.errors[0].message, "cycle detected: A → B → A")
        XCTAssertEqual(v.errors[0].cycle, ["A", "B", "A"])
    }

    func testAnEdgeToAPortThatDoesNotExistIsUnknownPortAloneNotACycle() {
        let t: JSON = ["schema": "app.workflow/v2", "name": "c",
                       "nodes": [["id": "a", "kind": "K", "outputs": ["o": "ImageRef"]],
                                 ["id": "b", "kind": "K", "inputs": ["i": "ImageRef"], "outputs": ["o": "ImageRef"]]],
                       "edges": [["from": ["a", "o"], "to": ["b", "i"]], ["from": ["b", "nope"], "to": ["a", "nope"]],
                                 ["from": ["b", "nope"], "to": ["b", "i"]]]]
        XCTAssertEqual(Set(TemplateFixtures.codes(compile(t))), ["unknownPort"])
    }

    func testAnEdgeNamingANodeByALookalikeIsUnknownNode() {
        // The Kelvin sign is canonically equivalent to "K", but no node's id is spelled with it.
        let t: JSON = ["schema": "app.workflow/v2", "name": "k",
                       "nodes": [["id": "K", "kind": "Src", "outputs": ["o": "ImageRef"]],
                                 ["id": "b", "kind": "Use", "inputs": ["i": "ImageRef"]]],
                       "edges": [["from": ["\u{212A}", "o"], "to": ["b", "i"]]]]
        let v = compile(t)
        XCTAssertEqual(TemplateFixtures.codes(v), ["unknownNode"])
        XCTAssertEqual(v.errors[0].nodeId, "\u{212A}")
    }

    func testEdgeTypeMismatchMaskToImageNamesNodeAndPortIdsAtBothEnds() {
        let v = compile(TemplateFixtures.sample { o in
            var edges = o["edges"]!.arrayValue!
            edges[2] = ["from": ["mask1", "mask"], "to": ["stylize1", "image"]]
            o["edges"] = .array(edges)
        })
        let e = v.errors.first { $0.code == "portTypeMismatch" }
        XCTAssertEqual(e?.extra["from"], ["nodeId": "mask1", "port": "mask", "type": "MaskRef"])
        XCTAssertEqual(e?.extra["to"], ["nodeId": "stylize1", "port": "image", "type": "ImageRef"])
        XCTAssertEqual(e?.path, "$.edges[2]")
        XCTAssertEqual(e?.message, "port type mismatch: 'mask1'.mask is MaskRef but 'stylize1'.image expects ImageRef")
    }

    func testEveryErrorIsCollectedNotJustTheFirst() {
        let t: JSON = ["schema": "app.workflow/v2", "name": "many",
                       "nodes": [["id": "a", "kind": "K", "outputs": ["o": "ImageRef"],
                                  "await": ["type": "draw_mask", "expiresIn": "24 hours"]],
                                 ["id": "a", "kind": "K"],
                                 ["id": "b", "kind": "K", "inputs": ["i": "MaskRef"], "bogus": 1]],
                       "edges": [["from": ["a", "o"], "to": ["b", "i"]], ["from": ["zz", "o"], "to": ["b", "nope"]]]]
        let codes = Set(TemplateFixtures.codes(compile(t)))
        XCTAssertEqual(codes, ["invalidDuration", "duplicateNodeId", "malformedTemplate", "portTypeMismatch",
                               "unknownNode", "unknownPort"])
    }

    func testEachStructuralErrorCarriesItsJSONPath() {
        let v = compile(TemplateFixtures.sample { o in
            var nodes = o["nodes"]!.arrayValue!
            var n = nodes[1].objectValue!
            n["inputs"] = ["image": 42]
            nodes[1] = .object(n)
            o["nodes"] = .array(nodes)
        })
        XCTAssertTrue(v.errors.contains { $0.code == "malformedTemplate" && $0.path == "$.nodes[1].inputs.image" }, "\(v.errors)")
    }

    func testSchemaUnsupportedAndMalformedTop() {
        XCTAssertEqual(TemplateFixtures.codes(compile(["schema": "app.workflow/v9", "name": "x", "nodes": []])), ["schemaUnsupported"])
        XCTAssertEqual(TemplateFixtures.codes(compile(["name": "x", "nodes": []])), ["malformedTemplate"])
        XCTAssertEqual(compile([1, 2]).errors.first?.path, "$")
    }

    func testMultipleProducersOnRequiredAndOptionalPorts() {
        let t: JSON = ["schema": "app.workflow/v2", "name": "mp",
                       "nodes": [["id": "a", "kind": "K", "outputs": ["o": "ImageRef"]], ["id": "b", "kind": "K", "outputs": ["o": "ImageRef"]],
                                 ["id": "c", "kind": "K", "inputs": ["r": "ImageRef", "p": ["type": "ImageRef", "optional": true]]]],
                       "edges": [["from": ["a", "o"], "to": ["c", "r"]], ["from": ["b", "o"], "to": ["c", "r"]],
                                 ["from": ["a", "o"], "to": ["c", "p"]], ["from": ["b", "o"], "to": ["c", "p"]]]]
        XCTAssertEqual(Set(TemplateFixtures.codes(compile(t))), ["multiProducerOnRequiredPort", "multiProducerOnOptionalPort"])
    }

    func testToolContractMismatchWhenANodeContradictsItsRegisteredTool() {
        let tool = ToolSpec(kind: "StylizeRemote", inputs: [PortSpec(name: "image", type: "ImageRef"), PortSpec(name: "mask", type: "MaskRef")],
                            outputs: [PortSpec(name: "image", type: "ImageRef")], resourceClass: .remote)
        XCTAssertTrue(compile(TemplateFixtures.sample, tools: ["StylizeRemote": tool]).valid)
        let wrong = ToolSpec(kind: "StylizeRemote", inputs: [PortSpec(name: "image", type: "ImageRef")],
                             outputs: [PortSpec(name: "image", type: "DepthRef")], resourceClass: .local)
        let v = compile(TemplateFixtures.sample, tools: ["StylizeRemote": wrong])
        XCTAssertEqual(Set(TemplateFixtures.codes(v)), ["toolContractMismatch"])
        XCTAssertEqual(v.errors.count, 3, "extra input, output type, resource class: \(v.errors)")
    }

    func testNodesWithoutPortsTakeThemFromTheToolCatalogue() throws {
        let tool = ToolSpec(kind: "Up", inputs: [PortSpec(name: "text", type: "TextRef")], outputs: [PortSpec(name: "text", type: "TextRef")])
        let t: JSON = ["schema": "app.workflow/v2", "name": "m", "nodes": [["id": "u", "kind": "Up"]]]
        let template = try XCTUnwrap(compile(t, tools: ["Up": tool]).template)
        XCTAssertEqual(template.nodes[0].inputs, tool.inputs)
        XCTAssertEqual(compile(t, tools: ["Up": tool]).warnings.map(\.code), ["unboundRequiredInput"])
    }

    func testV1KeysUpgradeToV2PortsFedByTheNearestEarlierProducer() throws {
        let v1: JSON = ["schema": "app.workflow/v1", "name": "legacy",
                        "steps": [["id": "load", "kind": "ImageLoader", "producedKeys": ["image"]],
                                  ["id": "depth", "kind": "Depth", "requiredKeys": ["image"], "producedKeys": ["depth"]],
                                  ["id": "enhance", "kind": "Enhance", "requiredKeys": ["image"], "producedKeys": ["image"]],
                                  ["id": "final", "kind": "Compose", "requiredKeys": ["image", "depth"]]]]
        let v = compile(v1)
        XCTAssertEqual(v.schema, "app.workflow/v1")
        let t = try XCTUnwrap(v.template)
        XCTAssertEqual(t.nodes[3].inputs, [PortSpec(name: "depth", type: "DepthRef"), PortSpec(name: "image", type: "ImageRef")])
        let edges = t.edges.map { "\($0.from.node).\($0.from.port)→\($0.to.node).\($0.to.port)" }
        XCTAssertEqual(edges, ["load.image→depth.image", "load.image→enhance.image", "enhance.image→final.image",
                               "depth.depth→final.depth"])
        XCTAssertEqual(TemplateEncoder.canonicalText(t), TemplateEncoder.canonicalText(t), "deterministic")
        let bad: JSON = ["schema": "app.workflow/v1", "name": "x", "steps": [["id": "a", "kind": "K", "requiredKeys": "image"]]]
        XCTAssertEqual(compile(bad).errors.first?.path, "$.steps[0].requiredKeys")
    }

    func testCanonicalExportIsStableKeepsExtensionsAndReimportsIdentically() throws {
        let withX = TemplateFixtures.sample { o in
            o["x-owner"] = "studio"
            var nodes = o["nodes"]!.arrayValue!
            var n = nodes[2].objectValue!
            n["x-note"] = ["b": 2, "a": 1]
            n["params"] = ["steps": 30, "cfg": 4.0, "alpha": true]
            nodes[2] = .object(n)
            o["nodes"] = .array(nodes)
        }
        let t = try XCTUnwrap(compile(withX).template)
        let text = TemplateEncoder.canonicalText(t)
        XCTAssertTrue(text.contains("\"x-owner\": \"studio\""))
        XCTAssertTrue(text.contains("\"x-note\": {\n"))
        XCTAssertTrue(text.hasSuffix("}\n"))
        let alpha = try XCTUnwrap(text.firstRange(of: "\"alpha\""))
        let steps = try XCTUnwrap(text.firstRange(of: "\"steps\""))
        XCTAssertLessThan(alpha.lowerBound, steps.lowerBound, "params sorted")
        let again = try XCTUnwrap(compile(try JSON(parsing: text)).template)
        XCTAssertEqual(TemplateEncoder.canonicalText(again), text)
        XCTAssertEqual(again, t)
    }

    func testRandomFieldOrderDecodesTheSame() throws {
        var rng = SplitMix64(seed: 3)
        let expected = TemplateEncoder.canonicalText(try XCTUnwrap(compile(TemplateFixtures.sample).template))
        for _ in 0..<50 {
            let shuffled = shuffleKeys(TemplateFixtures.sample, &rng)
            XCTAssertEqual(TemplateEncoder.canonicalText(try XCTUnwrap(compile(shuffled).template)), expected)
        }
    }

    func testAPathToAKeyThatLooksLikeAPathIsQuotedSoItNamesThatKey() {
        let v = compile(TemplateFixtures.sample { o in
            o["nodes[0]"] = 1
            var nodes = o["nodes"]!.arrayValue!
            var n = nodes[0].objectValue!
            n["outputs"] = ["image": "ImageRef", "x.y": "ImageRef"]
            nodes[0] = .object(n)
            o["nodes"] = .array(nodes)
        })
        XCTAssertEqual(Set(v.errors.map(\.path)), [#"$["nodes[0]"]"#, #"$.nodes[0].outputs["x.y"]"#])
    }

    func testUnknownFieldsAreErrorsButXFieldsAreKept() {
        let v = compile(TemplateFixtures.sample { o in o["comment"] = "nope"; o["x-comment"] = "fine" })
        XCTAssertEqual(v.errors.map(\.path), ["$.comment"])
    }

    func testDurationsAreISO8601() {
        XCTAssertEqual(ISODuration.milliseconds("PT24H"), 86_400_000)
        XCTAssertEqual(ISODuration.milliseconds("P1DT2H30M"), (86_400 + 9_000) * 1000)
        XCTAssertEqual(ISODuration.milliseconds("PT0.5S"), 500)
        XCTAssertEqual(ISODuration.milliseconds("P2W"), 14 * 86_400_000)
        XCTAssertEqual(ISODuration.milliseconds("PT1H0,5M"), 3_630_000, "a comma is a decimal sign too")
        XCTAssertEqual(ISODuration.milliseconds("PT0S"), 0, "zero is a duration; the template refuses it")
        // As versions before 2026-11-25 read them, for templates a store kept from them.
        XCTAssertEqual(ISODuration.milliseconds("pt.5s", lenient: true), 500)
        XCTAssertEqual(ISODuration.milliseconds("PT1.5H30M", lenient: true), 7_200_000)
        XCTAssertNil(ISODuration.milliseconds("P1M", lenient: true))
        for bad in ["24h", "P1M", "P1Y", "PT", "P", "PT1H2D", "P1DT", "-PT1H", "",
                    "pt24h", "PT1.5H30M", "PT.5S", "PT5.S", "PT1..5S", "PT1.5.5S", "P1D1D"] {
            XCTAssertNil(ISODuration.milliseconds(bad), bad)
        }
    }

    func testAZeroExpiryIsRefusedAsZeroNotAsUnreadable() {
        for zero in ["PT0S", "PT0.0004S"] {
            let v = compile(TemplateFixtures.sample { o in
                var nodes = o["nodes"]!.arrayValue!
                var n = nodes[1].objectValue!
                n["await"] = ["type": "draw_mask", "expiresIn": .string(zero)]
                nodes[1] = .object(n)
                o["nodes"] = .array(nodes)
            })
            let issue = v.errors.first { $0.code == "invalidDuration" }
            XCTAssertNotNil(issue, zero)
            XCTAssertTrue(issue?.message.contains("is zero") ?? false, issue?.message ?? zero)
        }
    }

    private func shuffleKeys(_ v: JSON, _ rng: inout SplitMix64) -> JSON {
        switch v {
        case let .object(o):
            let pairs = zip(o.keys, o.values).map { ($0, shuffleKeys($1, &rng)) }.shuffled(using: &rng)
            return .object(JSONObject(uniqueKeysWithValues: pairs))
        case let .array(a): return .array(a.map { shuffleKeys($0, &rng) })
        default: return v
        }
    }
}
