import Foundation
import WorkflowCore
import WorkflowEngine

/// Builds stores full of workflows the way a host would, through ops, in batches so the setup
/// stays quick: the population the rehydration and view benchmarks measure.
enum Population {
    static let adjectives = ["Beach", "Forest", "City", "Mountain", "Desert", "River", "Harbor", "Garden"]
    static let subjects = ["photo", "portrait", "sketch", "poster", "collage"]

    /// A title that searches can find: "Beach photo 1234".
    static func title(_ i: Int) -> String {
        "\(adjectives[i % adjectives.count]) \(subjects[(i / adjectives.count) % subjects.count]) \(i)"
    }

    /// Registers `Pure0`…`Pure3` and `Remote0`…`Remote3` (that many text inputs, one text output).
    static func registerTools(_ d: Driver) {
        d.registerPureTools()
        for k in 0...3 {
            var inputs = JSONObject()
            for j in 0..<k { inputs["in\(j)"] = "TextRef" }
            d.call("tool.register", ["kind": .string("Remote\(k)"), "inputs": .object(inputs),
                                     "outputs": ["text": "TextRef"], "resourceClass": "remote"])
        }
    }

    /// ``Driver/pureDAG(nodes:width:)`` with every fifth node (from the third) remote.
    static func mixedDAG(nodes n: Int) -> JSON {
        guard case var .object(t) = Driver.pureDAG(nodes: n), case var .array(nodes) = t["nodes"] else { return .null }
        for i in stride(from: 2, to: n, by: 5) {
            guard case var .object(node) = nodes[i], let kind = node["kind"]?.stringValue else { continue }
            node["kind"] = .string(kind.replacingOccurrences(of: "Pure", with: "Remote"))
            nodes[i] = .object(node)
        }
        t["nodes"] = .array(nodes)
        t["name"] = .string("mixed \(n)")
        return .object(t)
    }

    /// Creates `count` workflows of `templateId` titled by ``title(_:)``, `chunk` per transaction;
    /// returns their ids.
    static func create(_ d: Driver, templateId: JSON, count: Int, from first: Int = 0, chunk: Int = 500) -> [JSON] {
        var ids: [JSON] = []
        var i = 0
        while i < count {
            let n = min(chunk, count - i)
            let calls: [JSON] = (0..<n).map {
                ["op": "workflow.create", "args": ["templateId": templateId, "title": .string(title(first + i + $0))]]
            }
            let results = d.call("batch", ["calls": .array(calls)])["results"]?.arrayValue ?? []
            ids += results.compactMap { $0["workflowId"] }
            i += n
        }
        return ids
    }

    /// Runs `ids` in batches and plays the host for `rounds` rounds: every submitted job is
    /// accepted (`job.submitted`, then polled on the engine's timers), every local run that
    /// started completes. What is left is mid-run: jobs in flight, local runs queued or running.
    /// Returns the ids of the jobs it accepted.
    @discardableResult
    static func runPartway(_ d: Driver, _ ids: [JSON], rounds: Int, chunk: Int = 500) -> [String] {
        var jobIds: [String] = []
        for start in stride(from: 0, to: ids.count, by: chunk) {
            let calls: [JSON] = ids[start..<min(ids.count, start + chunk)].map {
                ["op": "workflow.runAllReady", "args": ["workflowId": $0]]
            }
            d.call("batch", ["calls": .array(calls)])
        }
        for _ in 0..<rounds {
            let effects = d.call("effects.take", ["max": 1_000_000])["effects"]?.arrayValue ?? []
            var calls: [JSON] = []
            for e in effects {
                guard let runId = e["runId"] else { continue }
                switch e["type"]?.stringValue {
                case "remote.submit":
                    let jobId = "job-\(runId.stringValue ?? "")"
                    jobIds.append(jobId)
                    calls.append(["op": "job.submitted", "args": ["runId": runId, "jobId": .string(jobId)]])
                case "local.run":
                    calls.append(["op": "local.completed", "args": [
                        "runId": runId,
                        "outputs": ["text": ["type": "TextRef", "uri": .string("mem://\(runId.stringValue ?? "")"), "bytes": 8]]]])
                default: break
                }
            }
            for start in stride(from: 0, to: calls.count, by: chunk) {
                d.call("batch", ["calls": .array(Array(calls[start..<min(calls.count, start + chunk)]))])
            }
        }
        return jobIds
    }
}
