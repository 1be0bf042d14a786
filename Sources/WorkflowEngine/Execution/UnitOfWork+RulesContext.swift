import Logging
import WorkflowCore

/// The unit of work is the rules' world: their time, lookups, ids, assets, effects and logs all
/// land in the call's staged changes.
extension UnitOfWork: RulesContext {
    func note(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String]) {
        guard wouldLog(.debug) else { return }
        log(.debug, "\(message())", fields().mapValues { .string($0) })
    }

    func warn(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String]) {
        guard wouldLog(.warning) else { return }
        log(.warning, "\(message())", fields().mapValues { .string($0) })
    }

    /// The rules for a workflow's template.
    func executor(for wf: Workflow) throws(EngineError) -> Executor {
        guard let t = template(wf.templateId) else {
            throw .internal("workflow \(wf.workflowId) refers to a missing template \(wf.templateId)")
        }
        return Executor(graph: t.graph, ctx: self)
    }
}
