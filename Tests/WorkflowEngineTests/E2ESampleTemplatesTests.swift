import WorkflowCore
import WorkflowEngine
import XCTest

/// 003 step 14, `E2E_Template1_to_5_Tests`: the five sample workflows (text → display, select
/// image → display, text → image → display, the runtime plan's "Stylize with user mask", enter
/// text → speech) run from start to finish under fakes: a scripted host runs the local tools,
/// plays the provider (accepts, reports progress, succeeds, or hands a URL to download) and
/// answers each await as a person would. Each test checks the final states and the outputs'
/// metadata and provenance, not bytes, and that a second run from scratch gives the same.
final class E2ESampleTemplatesTests: XCTestCase {
    // MARK: The five templates

    /// 1. Text → display: a text, made loud, then shown.
    static let textToDisplay: JSON = [
        "schema": "app.workflow/v2", "name": "Text → display",
        "nodes": [["id": "text1", "kind": "Text", "params": ["text": "hello, world"], "outputs": ["text": "TextRef"]],
                  ["id": "loud1", "kind": "Uppercase", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
                  ["id": "display1", "kind": "Display", "inputs": ["text": "TextRef"], "outputs": ["view": "TextRef"]]],
        "edges": [["from": ["text1", "text"], "to": ["loud1", "text"]],
                  ["from": ["loud1", "text"], "to": ["display1", "text"]]],
    ]

    /// 2. Select image → display: the person picks a photo (an await; no editor opens), it is shown.
    static let selectImageToDisplay: JSON = [
        "schema": "app.workflow/v2", "name": "Select image → display",
        "nodes": [["id": "pick1", "kind": "UserAssetPicker", "outputs": ["image": "ImageRef"],
                   "await": ["type": "select_asset", "urgency": "normal"]],
                  ["id": "display1", "kind": "ImageDisplay", "inputs": ["image": "ImageRef"], "outputs": ["view": "ImageRef"]]],
        "edges": [["from": ["pick1", "image"], "to": ["display1", "image"]]],
    ]

    /// 3. Text → image → display: a prompt, a remote text-to-image job, the picture shown.
    static let textToImageToDisplay: JSON = [
        "schema": "app.workflow/v2", "name": "Text → image → display",
        "nodes": [["id": "prompt1", "kind": "Text", "params": ["text": "a lighthouse at dusk"], "outputs": ["text": "TextRef"]],
                  ["id": "gen1", "kind": "TextToImage", "params": ["steps": 30], "inputs": ["prompt": "TextRef"],
                   "outputs": ["image": "ImageRef"], "resources": ["class": "remote"]],
                  ["id": "display1", "kind": "ImageDisplay", "inputs": ["image": "ImageRef"], "outputs": ["view": "ImageRef"]]],
        "edges": [["from": ["prompt1", "text"], "to": ["gen1", "prompt"]],
                  ["from": ["gen1", "image"], "to": ["display1", "image"]]],
    ]

    /// 4. The runtime plan's §3 sample: load a photo, the person draws a mask, a remote stylize
    /// job, a local compress.
    static let stylizeWithUserMask = Templates.stylize

    /// 5. Enter text → speech: the person types a line, a remote job speaks it and hands back a
    /// URL, which the host downloads.
    static let enterTextToSpeech: JSON = [
        "schema": "app.workflow/v2", "name": "Enter text → speech",
        "nodes": [["id": "say1", "kind": "UserTextEntry", "outputs": ["text": "TextRef"],
                   "await": ["type": "enter_text", "urgency": "blocking", "blocking": true]],
                  ["id": "tts1", "kind": "TextToSpeech", "params": ["voice": "calm"], "inputs": ["text": "TextRef"],
                   "outputs": ["audio": "AudioRef"], "resources": ["class": "remote"]]],
        "edges": [["from": ["say1", "text"], "to": ["tts1", "text"]]],
    ]

    // MARK: The scenarios

    func testTemplate1TextToDisplayRunsToTheEndWithTheTextShown() throws {
        let outcome = try runTwice(Self.textToDisplay)
        XCTAssertEqual(outcome.states, ["display1": "succeeded", "loud1": "succeeded", "text1": "succeeded"])
        let view = try XCTUnwrap(outcome.outputs["display1.view"])
        XCTAssertEqual(view["type"], "TextRef")
        XCTAssertEqual(view["uri"]?.stringValue.flatMap(TextAsset.text), "HELLO, WORLD")
        XCTAssertEqual(view["provenance"]?["nodeId"], "display1")
        XCTAssertEqual(view["provenance"]?["port"], "view")
    }

    func testTemplate2SelectImageToDisplayShowsThePickedPhotoWithItsMetadata() throws {
        let outcome = try runTwice(Self.selectImageToDisplay)
        XCTAssertEqual(outcome.states, ["display1": "succeeded", "pick1": "succeeded"])
        XCTAssertEqual(outcome.awaitsAnswered, ["select_asset"])
        let picked = try XCTUnwrap(outcome.outputs["pick1.image"])
        XCTAssertEqual(picked["type"], "ImageRef")
        XCTAssertEqual(picked["meta"]?["width"], 4032)
        XCTAssertEqual(picked["provenance"]?["nodeId"], "pick1")
        let shown = try XCTUnwrap(outcome.outputs["display1.view"])
        XCTAssertEqual(shown["type"], "ImageRef")
        XCTAssertEqual(shown["meta"]?["source"], picked["uri"], "the display shows the picked photo")
    }

    func testTemplate3TextToImageToDisplayRunsTheRemoteJobAndShowsItsPicture() throws {
        let outcome = try runTwice(Self.textToImageToDisplay)
        XCTAssertEqual(outcome.states, ["display1": "succeeded", "gen1": "succeeded", "prompt1": "succeeded"])
        XCTAssertEqual(outcome.submits, ["gen1"])
        let image = try XCTUnwrap(outcome.outputs["gen1.image"])
        XCTAssertEqual(image["type"], "ImageRef")
        XCTAssertEqual(image["meta"]?["providerSchema"], "v1")
        XCTAssertEqual(image["meta"]?["width"], 1024)
        XCTAssertEqual(image["meta"]?["prompt"], "a lighthouse at dusk", "the job got the prompt asset")
        XCTAssertEqual(image["meta"]?["steps"], 30, "and the node's params")
        XCTAssertEqual(image["provenance"]?["nodeId"], "gen1")
        XCTAssertEqual(outcome.outputs["display1.view"]?["meta"]?["source"], image["uri"])
    }

    func testTemplate4StylizeWithUserMaskRunsThroughTheAwaitTheRemoteJobAndTheCompression() throws {
        let outcome = try runTwice(Self.stylizeWithUserMask)
        XCTAssertEqual(outcome.states, ["compress1": "succeeded", "load1": "succeeded", "mask1": "succeeded",
                                        "stylize1": "succeeded"])
        XCTAssertEqual(outcome.awaitsAnswered, ["draw_mask"])
        XCTAssertEqual(outcome.submits, ["stylize1"])
        XCTAssertEqual(outcome.outputs["mask1.mask"]?["type"], "MaskRef")
        XCTAssertEqual(outcome.outputs["mask1.mask"]?["meta"]?["coverage"], 0.3)
        let stylized = try XCTUnwrap(outcome.outputs["stylize1.image"])
        XCTAssertEqual(stylized["type"], "ImageRef")
        XCTAssertEqual(stylized["meta"]?["steps"], 30)
        XCTAssertEqual(stylized["meta"]?["inputs"], ["image", "mask"], "the job got the photo and the mask")
        let file = try XCTUnwrap(outcome.outputs["compress1.file"])
        XCTAssertEqual(file["type"], "FileRef")
        XCTAssertEqual(file["meta"]?["targetMB"], 2)
        XCTAssertEqual(file["meta"]?["source"], stylized["uri"])
    }

    func testTemplate5EnterTextToSpeechDownloadsTheSpokenAudio() throws {
        let outcome = try runTwice(Self.enterTextToSpeech)
        XCTAssertEqual(outcome.states, ["say1": "succeeded", "tts1": "succeeded"])
        XCTAssertEqual(outcome.awaitsAnswered, ["enter_text"])
        XCTAssertEqual(outcome.downloads, ["tts1.audio"])
        let audio = try XCTUnwrap(outcome.outputs["tts1.audio"])
        XCTAssertEqual(audio["type"], "AudioRef")
        XCTAssertEqual(audio["meta"]?["voice"], "calm")
        XCTAssertEqual(audio["meta"]?["text"], "good morning")
        XCTAssertEqual(audio["provenance"]?["nodeId"], "tts1")
        XCTAssertEqual(audio["provenance"]?["port"], "audio")
    }

    // MARK: Driving

    struct Outcome: Equatable {
        var status: String
        /// nodeId → final state.
        var states: [String: String]
        /// "nodeId.port" → the asset (`asset.get`), with its engine-assigned id left out.
        var outputs: [String: JSON]
        var awaitsAnswered: [String] = []
        var submits: [String] = []
        var downloads: [String] = []
    }

    /// Runs `template` on two fresh engines; both runs must reach `done` with the same outcome.
    private func runTwice(_ template: JSON, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let first = try run(template)
        let second = try run(template)
        XCTAssertEqual(first.status, "done", file: file, line: line)
        XCTAssertEqual(first, second, "reproducible under fakes", file: file, line: line)
        return first
    }

    private func run(_ template: JSON) throws -> Outcome {
        let h = try Harness()
        registerTools(h)
        let wf = h.create(h.register(template: template), ["title": "Sample"])
        h.call("workflow.runAllReady", ["workflowId": .string(wf)])
        var outcome = Outcome(status: "", states: [:], outputs: [:])
        var jobs = Jobs()
        for _ in 0..<40 {
            var effects = h.take()
            if effects.isEmpty {
                h.advance(11)  // the next poll
                effects = h.take()
                if effects.isEmpty { break }
            }
            for e in effects { answer(h, e, &outcome, &jobs) }
        }
        let detail = h.call("workflow.get", ["workflowId": .string(wf)])
        outcome.status = detail["status"]?.stringValue ?? ""
        for node in detail["nodes"]?.arrayValue ?? [] {
            let id = node["nodeId"]?.stringValue ?? ""
            outcome.states[id] = node["state"]?.stringValue
            for (port, assetId) in node["outputs"]?.objectValue ?? [:] {
                var asset = h.call("asset.get", ["assetId": assetId]).objectValue ?? [:]
                asset["assetId"] = nil
                asset["createdAt"] = nil
                if case var .object(p)? = asset["provenance"] {
                    p["workflowId"] = nil
                    p["runId"] = nil
                    asset["provenance"] = .object(p)
                }
                outcome.outputs["\(id).\(port)"] = .object(asset)
            }
        }
        return outcome
    }

    private func registerTools(_ h: Harness) {
        Templates.registerTextTools(h)
        Templates.registerStylizeTools(h)
        h.register(tool: "Display", inputs: ["text": "TextRef"], outputs: ["view": "TextRef"])
        h.register(tool: "ImageDisplay", inputs: ["image": "ImageRef"], outputs: ["view": "ImageRef"])
        h.register(tool: "TextToImage", inputs: ["prompt": "TextRef"], outputs: ["image": "ImageRef"], remote: true)
        h.register(tool: "TextToSpeech", inputs: ["text": "TextRef"], outputs: ["audio": "AudioRef"], remote: true)
    }

    /// The fake provider's jobs: what each was sent, and how often it was polled.
    struct Jobs {
        var requests: [String: JSON] = [:]
        var polls: [String: Int] = [:]
    }

    /// The scripted host's answer to one effect.
    private func answer(_ h: Harness, _ e: JSON, _ outcome: inout Outcome, _ jobs: inout Jobs) {
        let nodeId = e["nodeId"]?.stringValue ?? ""
        let runId = e["runId"] ?? .null
        switch e["type"]?.stringValue {
        case "local.run":
            h.call("local.completed", localResult(e))
        case "remote.submit":
            outcome.submits.append(nodeId)
            jobs.requests["job-\(nodeId)"] = e
            h.call("job.submitted", ["runId": runId, "jobId": .string("job-\(nodeId)")])
        case "remote.poll":
            let jobId = e["jobId"]?.stringValue ?? ""
            jobs.polls[jobId, default: 0] += 1
            if jobs.polls[jobId] == 1 {
                h.call("job.update", ["jobId": .string(jobId), "status": "running", "progress": 0.5])
            } else {
                h.call("job.update", ["jobId": .string(jobId), "status": "succeeded",
                                      "outputs": .object(FakeProvider.outputs(jobId: jobId, request: jobs.requests[jobId] ?? .null))])
            }
        case "remote.download":
            let port = e["port"]?.stringValue ?? ""
            outcome.downloads.append("\(nodeId).\(port)")
            h.call("job.downloaded", ["runId": runId, "port": .string(port),
                                      "asset": .object(FakeProvider.downloaded(url: e["url"]?.stringValue ?? "",
                                                                               request: jobs.requests["job-\(nodeId)"] ?? .null))])
        case "notify":
            let awaitId = e["awaitId"] ?? .null
            let type = h.call("await.get", ["awaitId": awaitId])["type"]?.stringValue ?? ""
            outcome.awaitsAnswered.append(type)
            h.call("await.complete", ["awaitId": awaitId, "result": ["asset": .object(Person.answer(type))]])
        default:
            break  // notify.withdraw, cache.evict: nothing to do here
        }
    }

    /// Local tools: the built-in text tools, and fakes that record what they were given.
    private func localResult(_ e: JSON) -> JSONObject {
        let kind = e["kind"]?.stringValue ?? ""
        let inputs = e["inputs"]?.objectValue ?? [:]
        let params = e["params"]?.objectValue ?? [:]
        func result(_ port: String, _ asset: JSONObject) -> JSONObject {
            ["runId": e["runId"] ?? .null, "outputs": [port: .object(asset)]]
        }
        switch kind {
        case "Display":
            let text = inputs["text"]?["uri"]?.stringValue.flatMap(TextAsset.text) ?? ""
            return result("view", TextAsset.json(text).objectValue ?? [:])
        case "ImageDisplay":
            return result("view", ["type": "ImageRef", "uri": "file:///screen/view.png",
                                   "meta": ["source": inputs["image"]?["uri"] ?? .null]])
        case "ImageLoader":
            return result("image", ["type": "ImageRef", "uri": "file:///photos/IMG_0001.HEIC", "bytes": 2_400_000,
                                    "meta": ["width": 4032, "height": 3024, "providerSchema": "v1"]])
        case "CompressLocal":
            return result("file", ["type": "FileRef", "uri": "file:///out/compressed.jpg", "bytes": 1_900_000,
                                   "meta": ["targetMB": params["targetMB"] ?? .null, "source": inputs["image"]?["uri"] ?? .null]])
        default:
            return TextTools.run(e).objectValue ?? [:]
        }
    }

    /// A fake provider: deterministic outputs that record the job's params and inputs.
    enum FakeProvider {
        /// `request` is the job's `remote.submit` effect: its kind, params and input assets.
        static func outputs(jobId: String, request: JSON) -> JSONObject {
            let params = request["params"]?.objectValue ?? [:]
            let inputs = request["inputs"]?.objectValue ?? [:]
            switch request["kind"]?.stringValue {
            case "TextToImage":
                let prompt = inputs["prompt"]?["uri"]?.stringValue.flatMap(TextAsset.text) ?? ""
                return ["image": ["type": "ImageRef", "uri": .string("file:///provider/\(jobId).png"), "bytes": 1_048_576,
                                  "meta": ["providerSchema": "v1", "width": 1024, "height": 1024, "prompt": .string(prompt),
                                           "steps": params["steps"] ?? .null]]]
            case "StylizeRemote":
                return ["image": ["type": "ImageRef", "uri": .string("file:///provider/\(jobId).png"), "bytes": 2_097_152,
                                  "meta": ["providerSchema": "v1", "steps": params["steps"] ?? .null,
                                           "inputs": JSON(inputs.keys.sorted())]]]
            default:
                return ["audio": ["url": .string("https://provider.invalid/\(jobId).m4a")]]
            }
        }

        /// The file behind a `{url}` output, as the host reports it once downloaded: speech of the
        /// job's text input in the job's voice.
        static func downloaded(url: String, request: JSON) -> JSONObject {
            let text = request["inputs"]?["text"]?["uri"]?.stringValue.flatMap(TextAsset.text) ?? ""
            return ["type": "AudioRef", "uri": .string("file:///downloads/" + (url.split(separator: "/").last.map(String.init) ?? "")),
                    "bytes": 48_000, "meta": ["voice": request["params"]?["voice"] ?? .null, "text": .string(text),
                                              "durationSeconds": 1.5]]
        }
    }

    /// What a person gives each kind of await.
    enum Person {
        static func answer(_ type: String) -> JSONObject {
            switch type {
            case "draw_mask":
                return ["type": "MaskRef", "uri": "file:///masks/subject.png", "meta": ["coverage": 0.3]]
            case "enter_text":
                return TextAsset.json("good morning").objectValue ?? [:]
            default:
                return ["type": "ImageRef", "uri": "file:///photos/IMG_0420.HEIC", "bytes": 3_100_000,
                        "meta": ["width": 4032, "height": 3024]]
            }
        }
    }
}
