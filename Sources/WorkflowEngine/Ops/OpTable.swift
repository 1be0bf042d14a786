import WorkflowCore

extension Engine {
    /// Every op by name. Each group lives in its own file (`Ops/*.swift`).
    static let ops: [String: OpHandler] = {
        var table: [String: OpHandler] = [:]
        for group in [clockOps, templateOps, toolOps, workflowOps, nodeOps, eventOps, awaitOps, assetOps, batchOps] {
            table.merge(group) { first, _ in first }
        }
        return table
    }()

    /// The names of every op, sorted (for `engine.ops` and the docs test).
    public static var opNames: [String] { ops.keys.sorted() }
}
