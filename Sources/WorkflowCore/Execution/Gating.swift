/// The gating rule (DESIGN §5): a node is ready when every required input port is bound to a
/// valid asset, its tool is installed, and (for remote work) the network is up.
public enum Gate: Equatable, Sendable {
    /// Ready to run with these inputs (port → asset id).
    case ready(inputs: [String: String])
    case blocked(BlockedReason, missing: [String])

    public var inputs: [String: String]? {
        if case let .ready(inputs) = self { return inputs }
        return nil
    }
}

extension Executor {
    /// Whether node `n` could run now, and with which inputs; otherwise why not.
    public func gate(_ wf: Workflow, _ n: Int, ignoreNetwork: Bool = false) throws(EngineError) -> Gate {
        let t = graph.nodes[n]
        let node = wf.nodes[n]
        let needsTool = t.awaitSpec == nil || t.awaitSpec?.type == .confirmParams
        if needsTool, ctx.tool(t.kind) == nil {
            return .blocked(BlockedReason(code: BlockedReason.toolNotInstalled, message: "Tool not installed.",
                                          details: ["kind": .string(t.kind)]), missing: [])
        }
        var inputs: [String: String] = [:]
        var waiting: [(port: String, phrase: String)] = []
        var upstreamProblem: BlockedReason?
        var staleUpstream: String?
        for port in t.inputs {
            if let selected = node.inputSelections[port.name] {
                if try validAsset(selected, type: port.type) {
                    inputs[port.name] = selected
                    continue
                }
                waiting.append((port.name, "\(port.name) (the selected asset is gone)"))
                continue
            }
            if let producer = graph.producers[n][port.name] {
                let p = wf.nodes[producer.node]
                let pid = p.nodeId
                switch p.state {
                case .succeeded:
                    if let asset = p.outputs[producer.port], try validAsset(asset, type: port.type) {
                        inputs[port.name] = asset
                    } else if !port.optional {
                        waiting.append((port.name, "\(port.name) from '\(pid)' (its output is gone)"))
                    }
                case .skipped:
                    if !port.optional, upstreamProblem == nil {
                        upstreamProblem = BlockedReason(
                            code: BlockedReason.upstreamFailed, message: "Upstream '\(pid)' was skipped.",
                            details: ["upstream": .string(pid), "port": .string(port.name)])
                    }
                case .failed, .cancelled:
                    if upstreamProblem == nil {
                        let verb = p.state == .failed ? "failed" : "was cancelled"
                        upstreamProblem = BlockedReason(
                            code: BlockedReason.upstreamFailed, message: "Upstream '\(pid)' \(verb).",
                            details: ["upstream": .string(pid), "port": .string(port.name)])
                    }
                case .blocked where isStale(p):
                    // Name the node whose input actually changed, however far up it is.
                    let origin = p.blockedReason?.details["staleUpstream"]?.stringValue ?? pid
                    staleUpstream = staleUpstream ?? origin
                    let why = origin == pid ? "its input changed" : "upstream '\(origin)' changed"
                    waiting.append((port.name, "\(port.name) from '\(pid)' (\(why))"))
                default:
                    waiting.append((port.name, "\(port.name) from '\(pid)'"))
                }
                continue
            }
            if let bound = node.bindings[port.name] {
                if try validAsset(bound, type: port.type) {
                    inputs[port.name] = bound
                } else if !port.optional {
                    waiting.append((port.name, "\(port.name) (the bound asset is gone)"))
                }
                continue
            }
            if !port.optional { waiting.append((port.name, "\(port.name) (nothing produces it; bind an asset)")) }
        }
        if let upstreamProblem { return .blocked(upstreamProblem, missing: waiting.map(\.port)) }
        if !waiting.isEmpty {
            let message = "Waiting for " + waiting.map(\.phrase).joined(separator: ", ")
            var details: JSONObject = ["missing": JSON(waiting.map(\.port))]
            if let staleUpstream { details["staleUpstream"] = .string(staleUpstream) }
            return .blocked(BlockedReason(code: BlockedReason.waitingForInput, message: message, details: details),
                            missing: waiting.map(\.port))
        }
        if !ignoreNetwork, !ctx.isOnline, t.resourceClass == .remote, t.awaitSpec == nil {
            return .blocked(BlockedReason(code: BlockedReason.offline, message: "Offline"), missing: [])
        }
        return .ready(inputs: inputs)
    }

    /// A blocked node whose result is out of date, directly (its input changed) or through an
    /// upstream node that is.
    func isStale(_ node: NodeInstance) -> Bool {
        guard node.state == .blocked, let reason = node.blockedReason else { return false }
        return reason.code == BlockedReason.inputChanged || reason.details["staleUpstream"] != nil
    }

    func validAsset(_ id: String, type: String) throws(EngineError) -> Bool {
        guard let asset = try ctx.asset(id) else { return false }
        return asset.type == type
    }
}
