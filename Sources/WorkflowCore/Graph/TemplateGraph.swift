/// A validated template with its graph precomputed: node lookup, graph order, and who produces
/// and consumes each port. Built once per template and shared by every workflow of it.
public final class TemplateGraph: Sendable {
    public struct Consumer: Sendable, Equatable {
        /// The producing output port.
        public let port: String
        public let node: Int
        public let inputPort: String
    }

    public let template: Template
    public let index: [String: Int]
    /// Node indices in graph order: Kahn's algorithm, ties broken by template order.
    public let order: [Int]
    /// For each node index, its position in `order`.
    public let position: [Int]
    /// For each node index: input port → producing (node index, output port).
    public let producers: [[String: (node: Int, port: String)]]
    /// For each node index: the inputs its outputs feed.
    public let consumers: [[Consumer]]
    public let successors: [[Int]]
    /// For each node index: the nodes producing its inputs, each once.
    public let predecessors: [[Int]]
    /// For each node index of a template of at most 64 nodes: its predecessors as bits (node `p`
    /// is bit `p`), so that "did a producer of this node move?" is one AND; nil for larger ones.
    public let predecessorBits: [UInt64]?
    /// What gating and the run rules read about each node, apart from the (large) template nodes,
    /// which every read of `nodes[n]` copies whole.
    public let info: [NodeInfo]

    /// A class: rules bind a node's facts (`let t = graph.info[n]`) many times per call, and a
    /// binding of a struct this size retains every one of its strings and arrays.
    public final class NodeInfo: Sendable {
        public let id: String
        public let kind: String
        /// The template's params for the node.
        public let params: JSONObject
        public let outputs: [PortSpec]
        public let inputs: [PortSpec]
        /// The producing (node index, output port) of each input, in the order of `inputs`.
        public let inputProducers: [(node: Int, port: String)?]
        public let resourceClass: ResourceClass
        /// The class is the template's: written there (`resources.class`), or a remote tool's when
        /// the template was registered. Otherwise it is the tool's when the node runs (a tool
        /// registered after the template), local without one (``Executor/resourceClass(of:)``).
        public let classFixed: Bool
        public let isInteractive: Bool
        /// Needs its tool installed: every node but a person-only interactive one.
        public let needsTool: Bool

        init(id: String, kind: String, params: JSONObject, outputs: [PortSpec], inputs: [PortSpec],
             inputProducers: [(node: Int, port: String)?], resourceClass: ResourceClass, classFixed: Bool,
             isInteractive: Bool, needsTool: Bool) {
            self.id = id
            self.kind = kind
            self.params = params
            self.outputs = outputs
            self.inputs = inputs
            self.inputProducers = inputProducers
            self.resourceClass = resourceClass
            self.classFixed = classFixed
            self.isInteractive = isInteractive
            self.needsTool = needsTool
        }
    }

    public init(template: Template) {
        self.template = template
        let index = template.nodeIndex()
        self.index = index
        var producers = [[String: (node: Int, port: String)]](repeating: [:], count: template.nodes.count)
        var consumers = [[Consumer]](repeating: [], count: template.nodes.count)
        var successors = [[Int]](repeating: [], count: template.nodes.count)
        var predecessors = [[Int]](repeating: [], count: template.nodes.count)
        var pairs: [(Int, Int)] = []
        pairs.reserveCapacity(template.edges.count)
        for e in template.edges {
            guard let f = index[e.from.node], let t = index[e.to.node] else { continue }
            producers[t][e.to.port] = (f, e.from.port)
            consumers[f].append(Consumer(port: e.from.port, node: t, inputPort: e.to.port))
            if !successors[f].contains(t) { successors[f].append(t) }
            if !predecessors[t].contains(f) { predecessors[t].append(f) }
            pairs.append((f, t))
        }
        self.producers = producers
        self.consumers = consumers
        self.info = template.nodes.indices.map { n in
            let t = template.nodes[n]
            return NodeInfo(id: t.id, kind: t.kind, params: t.params, outputs: t.outputs, inputs: t.inputs,
                            inputProducers: t.inputs.map { producers[n][$0.name] },
                            resourceClass: t.resourceClass, classFixed: t.resourcesDeclared || t.resourceClass == .remote,
                            isInteractive: t.isInteractive,
                            needsTool: t.needsTool)
        }
        self.successors = successors
        self.predecessors = predecessors
        self.predecessorBits = template.nodes.count <= 64
            ? predecessors.map { $0.reduce(UInt64(0)) { bits, p in bits | (UInt64(1) << UInt64(p)) } } : nil
        let order = GraphAlgorithms.topologicalOrder(count: template.nodes.count, edges: pairs)
            ?? Array(0..<template.nodes.count)
        self.order = order
        var position = [Int](repeating: 0, count: template.nodes.count)
        for (p, n) in order.enumerated() { position[n] = p }
        self.position = position
    }

    public var nodes: [TemplateNode] { template.nodes }

    public func node(_ id: String) -> TemplateNode? { index[id].map { template.nodes[$0] } }

    /// Every node downstream of `start` (not including it).
    public func descendants(of start: Int) -> Set<Int> {
        GraphAlgorithms.descendants(of: [start], successors: successors)
    }
}
