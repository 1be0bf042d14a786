import WorkflowCore

enum TemplateFixtures {
    /// The "Stylize with user mask" sample of the runtime plan, §3.
    static let sample: JSON = try! JSON(parsing: """
        {
          "schema": "app.workflow/v2",
          "name": "Stylize with user mask",
          "nodes": [
            {"id": "load1", "kind": "ImageLoader", "params": {"source": "photos"}, "outputs": {"image": "ImageRef"}},
            {"id": "mask1", "kind": "UserMaskEditor", "inputs": {"image": "ImageRef"}, "outputs": {"mask": "MaskRef"},
             "await": {"type": "draw_mask", "blocking": true, "urgency": "normal", "expiresIn": "PT24H",
                       "notification": {"title": "Draw a mask", "body": "Mask the subject for the next step."},
                       "resumePolicy": {"onTimeout": "cancel"}, "ui": "mask-sheet"}},
            {"id": "stylize1", "kind": "StylizeRemote", "params": {"steps": 30, "cfg": 4.0},
             "inputs": {"image": "ImageRef", "mask": "MaskRef"}, "outputs": {"image": "ImageRef"},
             "resources": {"class": "remote"}},
            {"id": "compress1", "kind": "CompressLocal", "params": {"targetMB": 2}, "inputs": {"image": "ImageRef"},
             "outputs": {"file": "FileRef"}, "resources": {"class": "local"}}
          ],
          "edges": [
            {"from": ["load1","image"], "to": ["mask1","image"]},
            {"from": ["load1","image"], "to": ["stylize1","image"]},
            {"from": ["mask1","mask"], "to": ["stylize1","mask"]},
            {"from": ["stylize1","image"], "to": ["compress1","image"]}
          ],
          "options": {"concurrency": {"remote": 8, "local": 2}, "errorPolicy": "fail-fast"}
        }
        """)

    static func codes(_ v: TemplateValidation) -> [String] { v.errors.map(\.code) }

    /// The sample with `change` applied to its object.
    static func sample(_ change: (inout JSONObject) -> Void) -> JSON {
        var o = sample.objectValue!
        change(&o)
        return .object(o)
    }
}
