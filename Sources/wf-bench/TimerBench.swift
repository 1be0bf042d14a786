import Foundation
import WorkflowCore
import WorkflowEngine

/// Firing timers in one call: `clock.advance` over a long span fires every live job's poll about
/// every 10 s of it, all in one unit of work. The cost per fire must not grow with the number
/// already fired in the call (it once did: each fire re-read every record the call had written,
/// so a simulated day took seconds and a fortnight minutes). Baseline measured in the same run:
/// the cost per fire of a short advance (one simulated hour); linear means the ratio stays near 1.
enum TimerBench {
    static func run() {
        print("timers: clock.advance with 10 remote jobs in flight (one poll each about every 10 s), in-memory store")
        let short = costPerFire(seconds: 3_600)
        print(String(format: "  one simulated hour (baseline):   %6.0f fires, %@ per fire", short.fires, Measure.us(short.perFire)))
        for (label, seconds) in [("one simulated day:  ", 86_400.0), ("one simulated week: ", 604_800.0)] {
            let r = costPerFire(seconds: seconds)
            print(String(format: "  %@%8.0f fires, %@ per fire = %.2f× the baseline",
                         label, r.fires, Measure.us(r.perFire), r.perFire / short.perFire))
        }
    }

    /// Median over five engines of the wall time per timer fired by one `clock.advance`.
    static func costPerFire(seconds: Double, jobs: Int = 10) -> (fires: Double, perFire: Double) {
        var samples: [(fires: Double, perFire: Double)] = []
        for _ in 0..<5 {
            let d = Driver.open(store: ":memory:")
            d.call("tool.register", ["kind": "Generate", "outputs": ["text": "TextRef"], "resourceClass": "remote"])
            let tpl = d.call("template.register", ["template": ["schema": "app.workflow/v2", "name": "one remote",
                                                                "nodes": [["id": "g", "kind": "Generate", "outputs": ["text": "TextRef"]]]]])["templateId"]!
            for i in 0..<jobs {
                let wf = d.call("workflow.create", ["templateId": tpl])["workflowId"]!
                let runId = d.call("node.run", ["workflowId": wf, "nodeId": "g"])["runId"]!
                d.call("job.submitted", ["runId": runId, "jobId": .string("job-\(i)")])
            }
            let start = DispatchTime.now().uptimeNanoseconds
            let fired = d.call("clock.advance", ["seconds": .double(seconds)])["fired"]?.intValue ?? 0
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            d.engine.close()
            guard fired > 0 else { fatalError("wf-bench: nothing fired") }
            samples.append((Double(fired), elapsed / Double(fired)))
        }
        samples.sort { $0.perFire < $1.perFire }
        return samples[samples.count / 2]
    }
}
