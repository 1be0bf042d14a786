import WorkflowCore

extension Engine {
    static let awaitOps: [String: OpHandler] = [
        // await.list {workflowId?, groupBy?: "workflow"} → {pending, snoozed, done}, each sorted by
        // urgency, then age (oldest first), then id. With groupBy each is
        // [{workflowId, title, awaits}].
        "await.list": OpHandler(mutates: false, args: ["workflowId", "groupBy"]) { (_, uow, args) throws(EngineError) -> JSON in
            let only = try args.optionalNonEmptyString("workflowId")
            let group = try args.optionalChoice("groupBy", ["workflow"]) != nil
            var pending: [(AwaitRequest, Executor, Workflow)] = []
            var snoozed: [(AwaitRequest, Executor, Workflow)] = []
            var done: [(AwaitRequest, Executor, Workflow)] = []
            for wf in try inboxWorkflows(uow, only: only) {
                let executor = try uow.executor(for: wf)
                for a in wf.awaits where !a.cleared {
                    switch a.status {
                    case .pending: pending.append((a, executor, wf))
                    case .snoozed: snoozed.append((a, executor, wf))
                    case .done: done.append((a, executor, wf))
                    }
                }
            }
            let byUrgency: ((AwaitRequest, Executor, Workflow), (AwaitRequest, Executor, Workflow)) -> Bool = { x, y in
                let (a, b) = (x.0, y.0)
                if a.urgency.rank != b.urgency.rank { return a.urgency.rank < b.urgency.rank }
                if a.createdAt != b.createdAt { return a.createdAt < b.createdAt }
                // Ids in the order they were handed out: aw-9 before aw-10 (a shorter number first).
                if a.awaitId.utf8.count != b.awaitId.utf8.count { return a.awaitId.utf8.count < b.awaitId.utf8.count }
                return a.awaitId < b.awaitId
            }
            pending.sort(by: byUrgency)
            snoozed.sort(by: byUrgency)
            done.sort(by: byUrgency)
            func section(_ items: [(AwaitRequest, Executor, Workflow)]) -> JSON {
                guard group else { return .array(items.map { $0.1.awaitJSON($0.0, in: $0.2) }) }
                var order: [String] = []
                var groups: [String: (title: String, awaits: [JSON])] = [:]
                for (a, executor, wf) in items {
                    if groups[wf.workflowId] == nil {
                        order.append(wf.workflowId)
                        groups[wf.workflowId] = (wf.title, [])
                    }
                    groups[wf.workflowId]!.awaits.append(executor.awaitJSON(a, in: wf))
                }
                return .array(order.map { id in
                    ["workflowId": .string(id), "title": .string(groups[id]!.title), "awaits": .array(groups[id]!.awaits)]
                })
            }
            return ["pending": section(pending), "snoozed": section(snoozed), "done": section(done),
                    "counts": ["pending": JSON(pending.count), "snoozed": JSON(snoozed.count), "done": JSON(done.count)]]
        },

        // await.get {awaitId} → the await.
        "await.get": OpHandler(mutates: false, args: ["awaitId"]) { (_, uow, args) throws(EngineError) -> JSON in
            let (wf, i) = try findAwait(uow, args)
            return try uow.executor(for: wf).awaitJSON(wf.awaits[i], in: wf)
        },

        // await.claim {awaitId, claimant} → {awaitId, claimant, leaseExpiresAt}; another live
        // claim → WF_ECONFLICT alreadyClaimed.
        "await.claim": OpHandler(mutates: true, args: ["awaitId", "claimant"]) { (_, uow, args) throws(EngineError) -> JSON in
            let claimant = try args.string("claimant")
            return try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> JSON in
                let lease = try executor.claim(&wf, awaitIndex: i, claimant: claimant)
                return ["awaitId": .string(wf.awaits[i].awaitId), "claimant": .string(claimant),
                        "leaseExpiresAt": JSON(lease)]
            }
        },

        // await.release {awaitId, claimant?} → the await, pending again (editor dismissed, nothing written).
        "await.release": OpHandler(mutates: true, args: ["awaitId", "claimant"]) { (_, uow, args) throws(EngineError) -> JSON in
            let claimant = try args.optionalNonEmptyString("claimant")
            return try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> JSON in
                try executor.release(&wf, awaitIndex: i, claimant: claimant)
                return executor.awaitJSON(wf.awaits[i], in: wf)
            }
        },

        // await.complete {awaitId, claimant?, result: {asset} | {choice} | {params} | {cancel: true}}
        // → {awaitId, status, warnings, node}
        "await.complete": OpHandler(mutates: true, args: ["awaitId", "claimant", "result"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let claimant = try args.optionalNonEmptyString("claimant")
            let answer = try AwaitAnswer.decode(try args.value("result"))
            let (workflowId, warnings) = try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> (String, [JSON]) in
                (wf.workflowId, try executor.complete(&wf, awaitIndex: i, claimant: claimant, answer: answer))
            }
            return try settledAwaitResult(engine, uow, workflowId, try args.string("awaitId"), warnings: warnings)
        },

        // await.snooze {awaitId, seconds?} → the await (default 1 h; the 6th snooze → snoozeLimitReached).
        "await.snooze": OpHandler(mutates: true, args: ["awaitId", "seconds"]) { (_, uow, args) throws(EngineError) -> JSON in
            let seconds = try args.optionalSeconds("seconds", min: 1, max: 365 * 86_400)
            return try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> JSON in
                _ = try executor.snooze(&wf, awaitIndex: i, seconds: seconds)
                return executor.awaitJSON(wf.awaits[i], in: wf)
            }
        },

        // await.skip {awaitId} → {awaitId, status, warnings, node}, where the template allows skipping.
        "await.skip": OpHandler(mutates: true, args: ["awaitId"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let workflowId = try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> String in
                try executor.skip(&wf, awaitIndex: i)
                return wf.workflowId
            }
            return try settledAwaitResult(engine, uow, workflowId, try args.string("awaitId"), warnings: [])
        },

        // await.respond {awaitId, action} → what the notification action did: Open and Edit only
        // navigate (never claim); Snooze, Approve, Choose A/B and Skip act.
        "await.respond": OpHandler(mutates: true, args: ["awaitId", "action"]) { (_, uow, args) throws(EngineError) -> JSON in
            let action = try args.string("action")
            return try withAwait(uow, args) { (wf, executor, i) throws(EngineError) -> JSON in
                let a = wf.awaits[i]
                let offered = a.respondableActions
                guard offered.contains(action) else {
                    throw .invalid("unknownAction", "'\(action)' is not an action of \(a.type.notificationCategory)",
                                   details: ["action": .string(action), "actions": JSON(offered)])
                }
                // A stale notification (the item was answered, skipped or expired elsewhere) acts on
                // nothing, not even Open: the shell shows the node instead.
                guard a.isOpen else {
                    throw .state("awaitNotOpen", "the await is \(a.status.rawValue); this notification is stale",
                                 details: ["awaitId": .string(a.awaitId), "status": .string(a.status.rawValue),
                                           "navigate": DeepLink(workflowId: a.workflowId, nodeId: a.nodeId, awaitId: nil).json])
                }
                // One past its expiry is the same: its timeout answers it at the next tick.
                do throws(EngineError) { try executor.requireNotExpired(a, action) } catch {
                    var details = error.details
                    details["navigate"] = DeepLink(workflowId: a.workflowId, nodeId: a.nodeId, awaitId: nil).json
                    throw .state(error.code, error.message, details: details)
                }
                var result: JSONObject = ["awaitId": .string(a.awaitId), "action": .string(action)]
                switch action {
                case "Open", "Edit":
                    result["navigate"] = DeepLink(workflowId: a.workflowId, nodeId: a.nodeId, awaitId: a.awaitId).json
                    result["deepLink"] = .string(a.deepLink)
                    result["claimed"] = false
                case "Snooze":
                    result["snoozeUntil"] = JSON(try executor.snooze(&wf, awaitIndex: i, seconds: nil))
                case "Approve":
                    result["warnings"] = .array(try executor.complete(&wf, awaitIndex: i, claimant: nil, answer: .params([:])))
                case "Skip":
                    try executor.skip(&wf, awaitIndex: i)
                default:  // "Choose A", "Choose B"
                    let letter = String(action.split(separator: " ").last ?? "")
                    result["warnings"] = .array(try executor.complete(&wf, awaitIndex: i, claimant: nil, answer: .choice(letter)))
                }
                result["status"] = .string(wf.awaits[i].status.rawValue)
                return .object(result)
            }
        },

        // badges.get → {actionCenter, workflows: {id: n}, blocking: {id: true}, nodes: {id: {nodeId: n}}}:
        // counts of pending awaits (snoozed ones wait quietly); `blocking` flags workflows held up
        // by an open blocking await, pending or snoozed (the row's red dot).
        "badges.get": OpHandler(mutates: false, args: []) { (_, uow, _) throws(EngineError) -> JSON in
            var total = 0
            var workflows = JSONObject()
            var blocking = JSONObject()
            var nodes = JSONObject()
            for wf in try inboxWorkflows(uow, only: nil) {
                if wf.awaits.contains(where: { $0.isOpen && $0.blocking }) { blocking[wf.workflowId] = true }
                let pending = wf.awaits.filter { $0.status == .pending }
                guard !pending.isEmpty else { continue }
                total += pending.count
                workflows[wf.workflowId] = JSON(pending.count)
                var perNode = JSONObject()
                for a in pending { perNode[a.nodeId] = .int((perNode[a.nodeId]?.intValue ?? 0) + 1) }
                nodes[wf.workflowId] = .object(perNode)
            }
            return ["actionCenter": JSON(total), "workflows": .object(workflows), "blocking": .object(blocking),
                    "nodes": .object(nodes)]
        },

        // deeplink.parse {url} → {workflowId, nodeId?, awaitId?}; a bad or stale link is
        // WF_EINVALID badDeepLink with details.reason. Never claims anything.
        "deeplink.parse": OpHandler(mutates: false, args: ["url"]) { (engine, uow, args) throws(EngineError) -> JSON in
            let url = try args.string("url")
            let link = try DeepLink.parse(url, scheme: engine.config.deepLinkScheme)
            guard let wf = try uow.workflow(link.workflowId) else {
                throw DeepLink.bad(url, "unknownWorkflow", "no workflow '\(link.workflowId)'")
            }
            if let nodeId = link.nodeId, wf.nodeIndex(nodeId) == nil {
                throw DeepLink.bad(url, "unknownNode", "workflow '\(wf.workflowId)' has no node '\(nodeId)'")
            }
            if let awaitId = link.awaitId {
                // One cleared from the Action Center is gone, as `await.get` answers it.
                guard let i = wf.awaitIndex(awaitId), wf.awaits[i].nodeId == link.nodeId, !wf.awaits[i].cleared else {
                    throw DeepLink.bad(url, "unknownAwait", "no await '\(awaitId)' on that node")
                }
                guard wf.awaits[i].isOpen else {
                    throw DeepLink.bad(url, "awaitDone", "the request was already answered (\(wf.awaits[i].resolution?.rawValue ?? "done"))")
                }
            }
            return link.json
        },

        // deeplink.build {workflowId, nodeId?, awaitId?} → {url}
        "deeplink.build": OpHandler(mutates: false, args: ["workflowId", "nodeId", "awaitId"]) { (engine, _, args) throws(EngineError) -> JSON in
            // Empty ids would make links `deeplink.parse` refuses.
            let link = DeepLink(workflowId: try args.string("workflowId"), nodeId: try args.optionalNonEmptyString("nodeId"),
                                awaitId: try args.optionalNonEmptyString("awaitId"))
            if link.awaitId != nil, link.nodeId == nil {
                throw .invalid("missingArgument", "an await link needs its nodeId", details: ["argument": "nodeId"])
            }
            return ["url": .string(link.url(scheme: engine.config.deepLinkScheme))]
        },
    ]

    /// Workflows with something in the Action Center (open, or done within retention).
    static func inboxWorkflows(_ uow: UnitOfWork, only: String?) throws(EngineError) -> [Workflow] {
        if let only { return [try uow.requireWorkflow(only)] }
        var result: [Workflow] = []
        for id in uow.allWorkflowIds() {
            if let staged = uow.stagedWorkflow(id) {
                // Changed by an earlier call of the same batch: its summary is not made yet.
                if staged.awaits.contains(where: { !$0.cleared }) { result.append(staged) }
                continue
            }
            guard let s = uow.state.summary(id), s.inboxCount > 0 else { continue }
            if let wf = try uow.workflowUnlessDamaged(id) { result.append(wf) }
        }
        return result
    }

    static func findAwait(_ uow: UnitOfWork, _ args: Args) throws(EngineError) -> (Workflow, Int) {
        let awaitId = try args.string("awaitId")
        if let id = uow.workflowId(forAwait: awaitId), let wf = try uow.workflow(id), let i = wf.awaitIndex(awaitId),
            !wf.awaits[i].cleared
        {
            return (wf, i)
        }
        // Done awaits are not indexed: look through the Action Center's workflows. A cleared one
        // (done past its retention) is gone, whatever else its workflow holds.
        for wf in try inboxWorkflows(uow, only: nil) {
            if let i = wf.awaitIndex(awaitId), !wf.awaits[i].cleared { return (wf, i) }
        }
        throw .notFound("unknownAwait", "no await '\(awaitId)'", details: ["awaitId": .string(awaitId)])
    }

    static func withAwait<T>(_ uow: UnitOfWork, _ args: Args,
                             _ body: (inout Workflow, Executor, Int) throws(EngineError) -> T) throws(EngineError) -> T {
        var (wf, i) = try findAwait(uow, args)
        let executor = try uow.executor(for: wf)
        let result = try body(&wf, executor, i)
        uow.putWorkflow(wf)
        return result
    }

    /// The answered await and its node as they are once the queues were served in the same call,
    /// as the run-starting node ops report (a confirmed tool that got a slot reads `runningLocal`).
    static func settledAwaitResult(_ engine: Engine, _ uow: UnitOfWork, _ workflowId: String, _ awaitId: String,
                                   warnings: [JSON]) throws(EngineError) -> JSON
    {
        try engine.settleTouched(uow)
        let wf = try uow.requireWorkflow(workflowId)
        guard let i = wf.awaits.firstIndex(where: { $0.awaitId == awaitId }) else {
            throw .internal("await \(awaitId) left its workflow while answered")
        }
        return try awaitResult(wf, try uow.executor(for: wf), i, warnings: warnings)
    }

    static func awaitResult(_ wf: Workflow, _ executor: Executor, _ i: Int, warnings: [JSON]) throws(EngineError) -> JSON {
        let a = wf.awaits[i]
        var o: JSONObject = ["awaitId": .string(a.awaitId), "status": .string(a.status.rawValue),
                             "resolution": JSON(a.resolution?.rawValue), "warnings": .array(warnings)]
        if let n = executor.nodeIndex(wf, a.nodeId) { o["node"] = try executor.nodeJSON(wf, n) }
        return .object(o)
    }
}
