import WorkflowCore
import WorkflowEngine

/// Small templates the engine tests share.
enum Templates {
    /// One remote node with no inputs.
    static func oneRemote(kind: String = "StylizeRemote", options: JSON? = nil) -> JSON {
        var t: JSONObject = [
            "schema": "app.workflow/v2", "name": "one remote",
            "nodes": [["id": "stylize1", "kind": .string(kind), "outputs": ["image": "ImageRef"],
                       "resources": ["class": "remote"]]],
            "edges": [],
        ]
        if let options { t["options"] = options }
        return .object(t)
    }

    /// load1 (local) → a (local Uppercase-like) → c (local), and load1 → b.
    static let chain: JSON = [
        "schema": "app.workflow/v2", "name": "chain",
        "nodes": [
            ["id": "A", "kind": "Text", "params": ["text": "a"], "outputs": ["text": "TextRef"]],
            ["id": "B", "kind": "Uppercase", "title": "Make it loud", "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
            ["id": "C", "kind": "Append", "params": ["suffix": "!"], "inputs": ["text": "TextRef"], "outputs": ["text": "TextRef"]],
        ],
        "edges": [
            ["from": ["A", "text"], "to": ["B", "text"]],
            ["from": ["B", "text"], "to": ["C", "text"]],
        ],
    ]

    /// The sample of the runtime plan §3, "Stylize with user mask".
    static let stylize: JSON = [
        "schema": "app.workflow/v2", "name": "Stylize with user mask",
        "nodes": [
            ["id": "load1", "kind": "ImageLoader", "params": ["source": "photos"], "outputs": ["image": "ImageRef"]],
            ["id": "mask1", "kind": "UserMaskEditor", "inputs": ["image": "ImageRef"], "outputs": ["mask": "MaskRef"],
             "await": ["type": "draw_mask", "blocking": true, "urgency": "normal", "expiresIn": "PT24H",
                       "notification": ["title": "Draw a mask", "body": "Mask the subject for the next step."],
                       "resumePolicy": ["onTimeout": "cancel"], "ui": "mask-sheet"]],
            ["id": "stylize1", "kind": "StylizeRemote", "params": ["steps": 30, "cfg": 4.0],
             "inputs": ["image": "ImageRef", "mask": "MaskRef"], "outputs": ["image": "ImageRef"],
             "resources": ["class": "remote"]],
            ["id": "compress1", "kind": "CompressLocal", "params": ["targetMB": 2], "inputs": ["image": "ImageRef"],
             "outputs": ["file": "FileRef"], "resources": ["class": "local"]],
        ],
        "edges": [
            ["from": ["load1", "image"], "to": ["mask1", "image"]],
            ["from": ["load1", "image"], "to": ["stylize1", "image"]],
            ["from": ["mask1", "mask"], "to": ["stylize1", "mask"]],
            ["from": ["stylize1", "image"], "to": ["compress1", "image"]],
        ],
        "options": ["concurrency": ["remote": 8, "local": 2], "errorPolicy": "fail-fast"],
    ]

    /// Registers the built-in text tools' own catalogue entries (WorkflowTools).
    static func registerTextTools(_ h: Harness) {
        for spec in TextTools.box.specs { h.call("tool.register", spec.json.objectValue!) }
    }

    static func registerStylizeTools(_ h: Harness) {
        h.register(tool: "ImageLoader", outputs: ["image": "ImageRef"])
        h.register(tool: "StylizeRemote", inputs: ["image": "ImageRef", "mask": "MaskRef"], outputs: ["image": "ImageRef"],
                   remote: true, defaults: ["res": "1024×1024", "steps": 20], summaryParams: ["res", "steps", "cfg"])
        h.register(tool: "CompressLocal", inputs: ["image": "ImageRef"], outputs: ["file": "FileRef"])
    }
}

extension Harness {
    /// Answers every pending local.run with the text tools; returns how many ran.
    @discardableResult
    func runLocalTools() -> Int {
        var ran = 0
        for e in take() where e["type"] == "local.run" {
            call("local.completed", TextTools.run(e).objectValue!)
            ran += 1
        }
        return ran
    }

    func effects(_ type: String) -> [JSON] { take().filter { $0["type"]?.stringValue == type } }
}
