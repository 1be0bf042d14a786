/// The gating rule (DESIGN §5): a node is ready when every required input port is bound to a
/// valid asset, its tool is installed, and (for remote work) the network is up.
public enum Gate: Equatable, Sendable {
    /// Ready to run with these inputs (port → asset id).
    case ready(inputs: [String: String])
    /// Not ready: why, the ports it waits for, and the inputs it already has (port → asset id),
    /// so that a node that ran can tell whether one of those changed.
    case blocked(BlockedReason, missing: [String], resolved: [String: String] = [:])

    public var inputs: [String: String]? {
        if case let .ready(inputs) = self { return inputs }
        return nil
    }

    /// The inputs the node has now: all of them when ready, those resolved so far when blocked.
    public var knownInputs: [String: String] {
        switch self {
        case let .ready(inputs): inputs
        case let .blocked(_, _, resolved): resolved
        }
    }
}

/// What is wrong upstream of a node's result, named by where it started: the result is out of
/// date (a node's input changed since it ran), cannot come (a node failed, was cancelled or
/// skipped), or cannot come until someone installs a tool (the origin's tool is not installed,
/// and the node waits only for what comes from it). Taints flow down the graph so every
/// descendant names the origin, however far.
public enum Taint: Equatable, Sendable {
    case stale(origin: String)
    case failed(origin: String, what: String)
    case toolMissing(origin: String)
}

/// Each node's taint, held without an array while no node has one: the usual workflow has
/// nothing stale or failed upstream, and its reconciles then allocate and compare no taints.
struct TaintMap {
    private(set) var values: [Taint?]?

    init(_ values: [Taint?]? = nil) { self.values = values }

    subscript(n: Int) -> Taint? { values?[n] ?? nil }

    /// Sets node `n`'s taint in a workflow of `count` nodes.
    mutating func set(_ n: Int, _ taint: Taint?, count: Int) {
        if values == nil {
            guard taint != nil else { return }
            values = [Taint?](repeating: nil, count: count)
        }
        values![n] = taint
    }
}

extension Executor {
    /// Each node's taint, computed in graph order from the nodes' states.
    public func taints(_ wf: Workflow) -> [Taint?] {
        taintMap(wf).values ?? [Taint?](repeating: nil, count: wf.nodes.count)
    }

    /// ``taints(_:)`` as a map: without an array when no node is the origin of a taint (blocked
    /// because an input changed, with a stale upstream, or because an upstream failed), since
    /// every taint starts at such a node.
    func taintMap(_ wf: Workflow) -> TaintMap {
        var map = TaintMap()
        guard wf.mayHaveTaintOrigin else { return map }
        for n in graph.order { map.set(n, taint(wf, n, given: map), count: wf.nodes.count) }
        return map
    }

    /// Whether node `n`'s own state can make it tainted whatever its producers
    /// (``taint(_:_:given:)``). Read in place: no node record is copied.
    func mayOriginateTaint(_ wf: Workflow, _ n: Int) -> Bool {
        wf.nodes.withRecord(at: n, NodeInstance.mayOriginateTaint)
    }

    /// Node `n`'s taint, its producers' being known: blocked because an input changed (stale, it
    /// is the origin), blocked by a stale or failed upstream (that origin), holding a result
    /// made from a stale producer's output (stale, the producer's origin), blocked because its
    /// tool is not installed (tool missing, it is the origin), or waiting only for ports whose
    /// producers have a tool missing (that origin: a chain below a missing tool). A port waiting
    /// for a binding or a selection is asked of a person, so it does not count.
    func taint(_ wf: Workflow, _ n: Int, given taints: TaintMap) -> Taint? {
        // Fields are read in place: the node record is not copied (this runs for every node of
        // every reconcile).
        switch wf.nodes[n].state {
        case .blocked:
            guard let code = wf.nodes[n].blockedReason?.code else { return nil }
            if code == BlockedReason.inputChanged { return .stale(origin: wf.nodes[n].nodeId) }
            if code == BlockedReason.waitingForInput,
               let origin = wf.nodes[n].blockedReason?.details["staleUpstream"]?.stringValue {
                return .stale(origin: origin)
            }
            if code == BlockedReason.upstreamFailed, let origin = wf.nodes[n].blockedReason?.details["upstream"]?.stringValue {
                return .failed(origin: origin, what: wf.nodes[n].blockedReason?.details["what"]?.stringValue ?? "failed")
            }
            if code == BlockedReason.toolNotInstalled { return .toolMissing(origin: wf.nodes[n].nodeId) }
            if code == BlockedReason.waitingForInput, taints.values != nil,
               let ports = wf.nodes[n].blockedReason?.details["missing"]?.arrayValue, !ports.isEmpty
            {
                var origin: String?
                for port in ports {
                    guard let name = port.stringValue, wf.nodes[n].inputSelections[name] == nil,
                          let producer = graph.producers[n][name],
                          case let .toolMissing(o)? = taints[producer.node] else { return nil }
                    origin = origin ?? o
                }
                return origin.map { .toolMissing(origin: $0) }
            }
            return nil
        case .succeeded:
            // Usually no producer is stale: checked on node indices before any port lookup.
            guard taints.values != nil,
                  graph.predecessors[n].contains(where: { if case .stale? = taints[$0] { true } else { false } }) else {
                return nil
            }
            for port in graph.info[n].inputs where wf.nodes[n].inputSelections[port.name] == nil {
                if let p = graph.producers[n][port.name], case let .stale(origin)? = taints[p.node] {
                    return .stale(origin: origin)
                }
            }
            return nil
        default:
            return nil
        }
    }

    /// Whether node `n` could run now, and with which inputs; otherwise why not. `taints` are the
    /// workflow's (``taints(_:)``); computed when not given.
    public func gate(_ wf: Workflow, _ n: Int, taints given: [Taint?]? = nil, ignoreNetwork: Bool = false)
        throws(EngineError) -> Gate
    {
        let inputs = graph.info[n].inputs
        return try gate(wf, n, taints: inputs.isEmpty ? TaintMap() : given.map { TaintMap($0) } ?? taintMap(wf),
                        ignoreNetwork: ignoreNetwork)
    }

    /// ``gate(_:_:taints:ignoreNetwork:)`` with the workflow's taints known.
    func gate(_ wf: Workflow, _ n: Int, taints: TaintMap, ignoreNetwork: Bool = false) throws(EngineError) -> Gate {
        let t = graph.info[n]
        var inputs = [String: String](minimumCapacity: t.inputs.count)
        var waiting: [(port: String, phrase: String)] = []
        // Ports that hold the node with no asset, in port order (`notReady`'s `details.missing`):
        // those waited for, and required ones an upstream failure, cancel or skip leaves empty
        // (under fail-fast, optional ones a failure leaves empty too).
        var missing: [String] = []
        var upstreamProblem: BlockedReason?
        var failFast: Bool { template.options.errorPolicy == .failFast }
        var staleUpstream: String?
        for (i, port) in t.inputs.enumerated() {
            if let selected = wf.nodes[n].inputSelections[port.name] {
                if try validAsset(selected, type: port.type) {
                    inputs[port.name] = selected
                    continue
                }
                waiting.append((port.name, "\(port.name) (the selected asset is gone)"))
                continue
            }
            if let producer = t.inputProducers[i] {
                let pid = wf.nodes[producer.node].nodeId
                switch taints[producer.node] {
                case let .stale(origin)?:
                    // A result made from out-of-date inputs is never used: name where it started.
                    // An optional input waits too: the stale node waits for the person's Re-run
                    // (docs/OPS.md, §15), as a request waits for its answer.
                    staleUpstream = staleUpstream ?? origin
                    let why = origin == pid ? "its input changed" : "upstream '\(origin)' changed"
                    waiting.append((port.name, "\(port.name) from '\(pid)' (\(why))"))
                    continue
                case let .failed(origin, what)?:
                    // An optional input goes without what a failed upstream cannot bring (under
                    // fail-fast a failure stops the workflow: nothing goes on from it).
                    if port.optional, !failFast { continue }
                    missing.append(port.name)
                    if upstreamProblem == nil {
                        upstreamProblem = BlockedReason(
                            code: BlockedReason.upstreamFailed, message: "Upstream '\(origin)' \(what).",
                            details: ["upstream": .string(origin), "what": .string(what), "via": .string(pid),
                                      "port": .string(port.name)])
                    }
                    continue
                case .toolMissing?:
                    // Nothing comes until someone installs a tool: an optional input goes without.
                    if port.optional { continue }
                case nil:
                    break
                }
                switch wf.nodes[producer.node].state {
                case .succeeded:
                    if let asset = wf.nodes[producer.node].outputs[producer.port], try validAsset(asset, type: port.type) {
                        inputs[port.name] = asset
                    } else if !port.optional {
                        waiting.append((port.name, "\(port.name) from '\(pid)' (its output is gone)"))
                    }
                case .skipped:
                    if !port.optional { missing.append(port.name) }
                    if !port.optional, upstreamProblem == nil {
                        upstreamProblem = BlockedReason(
                            code: BlockedReason.upstreamFailed, message: "Upstream '\(pid)' was skipped.",
                            details: ["upstream": .string(pid), "what": "was skipped", "port": .string(port.name)])
                    }
                case .failed where wf.nodes[producer.node].lastError?.isInterruption == true:
                    // Not a failure of the work: the producer waits for its Retry.
                    waiting.append((port.name, "\(port.name) from '\(pid)' (interrupted; Retry it)"))
                case .failed, .cancelled:
                    if port.optional, !failFast { continue }
                    missing.append(port.name)
                    if upstreamProblem == nil {
                        let what = wf.nodes[producer.node].state == .failed ? "failed" : "was cancelled"
                        upstreamProblem = BlockedReason(
                            code: BlockedReason.upstreamFailed, message: "Upstream '\(pid)' \(what).",
                            details: ["upstream": .string(pid), "what": .string(what), "port": .string(port.name)])
                    }
                default:
                    waiting.append((port.name, "\(port.name) from '\(pid)'"))
                }
                continue
            }
            if let bound = wf.nodes[n].bindings[port.name] {
                if try validAsset(bound, type: port.type) {
                    inputs[port.name] = bound
                } else if !port.optional {
                    waiting.append((port.name, "\(port.name) (the bound asset is gone)"))
                }
                continue
            }
            if !port.optional { waiting.append((port.name, "\(port.name) (nothing produces it; bind an asset)")) }
        }
        if !waiting.isEmpty, !missing.isEmpty {
            // Both (rare): in port order, ports waited for and ports an upstream problem leaves empty.
            let waited = Set(waiting.map(\.port))
            let empty = Set(missing)
            missing = t.inputs.map(\.name).filter { waited.contains($0) || empty.contains($0) }
        }
        // A missing tool comes first; the inputs are still resolved, for a node that ran, and the
        // ports it lacks are still listed (`notReady`'s `details.missing`, the card's
        // `missingInputs`): installing the tool alone would not make it ready.
        if t.needsTool, !ctx.hasTool(t.kind) {
            let lacking = missing.isEmpty ? waiting.map(\.port) : missing
            return .blocked(BlockedReason(code: BlockedReason.toolNotInstalled, message: "Tool not installed.",
                                          details: ["kind": .string(t.kind)]), missing: lacking, resolved: inputs)
        }
        if let upstreamProblem { return .blocked(upstreamProblem, missing: missing, resolved: inputs) }
        if !waiting.isEmpty {
            // "Waiting for " and the phrases joined by ", ", in one string made to size; the
            // ports waited for beside it (nothing failed upstream: those are the missing ones).
            var message = "Waiting for "
            message.reserveCapacity(waiting.reduce(12) { $0 + $1.phrase.utf8.count + 2 })
            var missing: [String] = []
            missing.reserveCapacity(waiting.count)
            var ports: [JSON] = []
            ports.reserveCapacity(waiting.count)
            for (i, w) in waiting.enumerated() {
                if i > 0 { message += ", " }
                message += w.phrase
                missing.append(w.port)
                ports.append(.string(w.port))
            }
            var details = JSONObject(minimumCapacity: 2)
            details.append(uniqueKey: "missing", .array(ports))
            if let staleUpstream { details.append(uniqueKey: "staleUpstream", .string(staleUpstream)) }
            return .blocked(BlockedReason(code: BlockedReason.waitingForInput, message: message, details: details),
                            missing: missing, resolved: inputs)
        }
        if !ignoreNetwork, !ctx.isOnline, !t.isInteractive, resourceClass(of: n) == .remote {
            return .blocked(BlockedReason(code: BlockedReason.offline, message: "Offline"), missing: [], resolved: inputs)
        }
        return .ready(inputs: inputs)
    }

    func validAsset(_ id: String, type: String) throws(EngineError) -> Bool {
        guard let found = try ctx.assetType(id) else { return false }
        return found == type
    }
}
