/// A validated workflow template (`app.workflow/v2`): nodes joined by typed ports.
///
/// Immutable once registered. Every node's ports are explicit here, even when the author left
/// them to the tool catalogue, so a stored template means the same thing forever.
public struct Template: Sendable, Equatable {
    public static let currentSchema = "app.workflow/v2"
    public static let legacySchema = "app.workflow/v1"

    public var name: String
    public var description: String?
    public var nodes: [TemplateNode]
    public var edges: [TemplateEdge]
    public var options: TemplateOptions
    /// `x-` members of the template object, kept verbatim.
    public var extensions: JSONObject

    public init(name: String, description: String? = nil, nodes: [TemplateNode], edges: [TemplateEdge],
                options: TemplateOptions = TemplateOptions(), extensions: JSONObject = [:]) {
        self.name = name
        self.description = description
        self.nodes = nodes
        self.edges = edges
        self.options = options
        self.extensions = extensions
    }

    /// Index of each node id in `nodes`.
    public func nodeIndex() -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(nodes.count)
        for (i, n) in nodes.enumerated() where index[n.id] == nil { index[n.id] = i }
        return index
    }
}

public enum ResourceClass: String, Sendable, Equatable, CaseIterable {
    case remote, local
}

public enum ErrorPolicy: String, Sendable, Equatable, CaseIterable {
    /// The first failure cancels the workflow's other work.
    case failFast = "fail-fast"
    /// A failure blocks only the failed node's descendants.
    case isolateNode = "isolate-node"
}

public struct TemplateOptions: Sendable, Equatable {
    /// Per-workflow caps; nil means only the engine's global cap applies.
    public var remoteConcurrency: Int?
    public var localConcurrency: Int?
    public var errorPolicy: ErrorPolicy
    /// Whether the policy was written in the template (export writes only what was written).
    public var errorPolicyDeclared: Bool
    public var extensions: JSONObject

    public init(remoteConcurrency: Int? = nil, localConcurrency: Int? = nil, errorPolicy: ErrorPolicy = .isolateNode,
                errorPolicyDeclared: Bool = false, extensions: JSONObject = [:]) {
        self.remoteConcurrency = remoteConcurrency
        self.localConcurrency = localConcurrency
        self.errorPolicy = errorPolicy
        self.errorPolicyDeclared = errorPolicyDeclared
        self.extensions = extensions
    }
}

/// A typed port: `"image": "ImageRef"` or `"mask": {"type": "MaskRef", "optional": true}`.
public struct PortSpec: Sendable, Equatable {
    public var name: String
    public var type: String
    public var optional: Bool

    public init(name: String, type: String, optional: Bool = false) {
        self.name = name
        self.type = type
        self.optional = optional
    }
}

extension Array where Element == PortSpec {
    public func port(named name: String) -> PortSpec? { first { $0.name == name } }
}

public struct PortRef: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var port: String
    public init(node: String, port: String) {
        self.node = node
        self.port = port
    }
    public var description: String { "'\(node)'.\(port)" }
}

public struct TemplateEdge: Sendable, Equatable {
    public var from: PortRef
    public var to: PortRef
    public var extensions: JSONObject

    public init(from: PortRef, to: PortRef, extensions: JSONObject = [:]) {
        self.from = from
        self.to = to
        self.extensions = extensions
    }
}

public struct TemplateNode: Sendable, Equatable {
    public var id: String
    public var kind: String
    public var title: String?
    public var description: String?
    public var params: JSONObject
    public var inputs: [PortSpec]
    public var outputs: [PortSpec]
    public var awaitSpec: AwaitSpec?
    /// The class the node runs in: declared in `resources`, else the tool's, else local.
    public var resourceClass: ResourceClass
    /// Whether `resources` was written in the template.
    public var resourcesDeclared: Bool
    public var summaryParams: [String]?
    /// Named parameter deltas offered as presets.
    public var presets: [(name: String, params: JSONObject)]
    public var extensions: JSONObject

    public init(id: String, kind: String, title: String? = nil, description: String? = nil, params: JSONObject = [:],
                inputs: [PortSpec] = [], outputs: [PortSpec] = [], awaitSpec: AwaitSpec? = nil,
                resourceClass: ResourceClass = .local, resourcesDeclared: Bool = false, summaryParams: [String]? = nil,
                presets: [(name: String, params: JSONObject)] = [], extensions: JSONObject = [:]) {
        self.id = id
        self.kind = kind
        self.title = title
        self.description = description
        self.params = params
        self.inputs = inputs
        self.outputs = outputs
        self.awaitSpec = awaitSpec
        self.resourceClass = resourceClass
        self.resourcesDeclared = resourcesDeclared
        self.summaryParams = summaryParams
        self.presets = presets
        self.extensions = extensions
    }

    public var isInteractive: Bool { awaitSpec != nil }

    /// Whether the node needs its kind's tool registered (else it is blocked "Tool not
    /// installed."): every node but an interactive one a person answers alone; `confirm_params`
    /// runs its tool once the person approved.
    public var needsTool: Bool { Self.needsTool(awaitSpec) }

    public static func needsTool(_ awaitSpec: AwaitSpec?) -> Bool {
        awaitSpec == nil || awaitSpec?.type == .confirmParams
    }

    /// The title people see: the template's title, else the node id.
    public var displayTitle: String { title ?? id }

    public static func == (a: TemplateNode, b: TemplateNode) -> Bool {
        a.id == b.id && a.kind == b.kind && a.title == b.title && a.description == b.description && a.params == b.params
            && a.inputs == b.inputs && a.outputs == b.outputs && a.awaitSpec == b.awaitSpec && a.resourceClass == b.resourceClass
            && a.resourcesDeclared == b.resourcesDeclared && a.summaryParams == b.summaryParams
            && a.presets.map(\.name) == b.presets.map(\.name) && a.presets.map(\.params) == b.presets.map(\.params)
            && a.extensions == b.extensions
    }
}

/// What an interactive node asks of a person.
public enum AwaitType: String, Sendable, Equatable, CaseIterable {
    case drawMask = "draw_mask"
    case selectAsset = "select_asset"
    case confirmParams = "confirm_params"
    case enterText = "enter_text"

    /// The notification category (Appendix A of the runtime plan).
    public var notificationCategory: String {
        switch self {
        case .drawMask: return "AWAIT_DRAW_MASK"
        case .selectAsset: return "AWAIT_SELECT_ASSET"
        case .confirmParams: return "AWAIT_CONFIRM_PARAMS"
        case .enterText: return "AWAIT_ENTER_TEXT"
        }
    }

    /// The notification's actions, in display order.
    public var notificationActions: [String] {
        switch self {
        case .drawMask: return ["Open", "Snooze"]
        case .selectAsset: return ["Choose A", "Choose B", "Open"]
        case .confirmParams: return ["Approve", "Edit", "Snooze"]
        case .enterText: return ["Open", "Snooze"]
        }
    }

    public var defaultTitle: String {
        switch self {
        case .drawMask: return "Draw a mask"
        case .selectAsset: return "Choose an asset"
        case .confirmParams: return "Confirm parameters"
        case .enterText: return "Enter text"
        }
    }
}

public enum Urgency: String, Sendable, Equatable, CaseIterable {
    case blocking, normal, low

    /// Sort rank: most urgent first.
    public var rank: Int {
        switch self {
        case .blocking: return 0
        case .normal: return 1
        case .low: return 2
        }
    }
}

/// What happens to an await when it expires, or when a person cancels it.
public enum ResumeAction: String, Sendable, Equatable, CaseIterable {
    /// The node fails (expiry) or is cancelled (a person cancels), with an explanation.
    case cancel
    /// Default params, or the single best candidate, stand in for the person's answer.
    case autoDefault
    /// Outputs are absent; consumers whose ports are optional go on.
    case skip
}

public struct AwaitSpec: Sendable, Equatable {
    public var type: AwaitType
    public var title: String?
    public var detail: String?
    public var blocking: Bool
    public var urgency: Urgency
    /// `expiresIn` as written (`PT24H`) and in milliseconds.
    public var expiresIn: String?
    public var expiresInMilliseconds: Int64?
    public var notificationTitle: String?
    public var notificationBody: String?
    public var onTimeout: ResumeAction
    public var onCancel: ResumeAction?
    /// Whether a person may skip it from the Action Center. Defaults to `onTimeout == skip`.
    public var skippable: Bool
    public var skippableDeclared: Bool
    public var ui: String?
    public var extensions: JSONObject

    public init(type: AwaitType, title: String? = nil, detail: String? = nil, blocking: Bool = true,
                urgency: Urgency = .normal, expiresIn: String? = nil, expiresInMilliseconds: Int64? = nil,
                notificationTitle: String? = nil, notificationBody: String? = nil, onTimeout: ResumeAction = .cancel,
                onCancel: ResumeAction? = nil, skippable: Bool? = nil, ui: String? = nil, extensions: JSONObject = [:]) {
        self.type = type
        self.title = title
        self.detail = detail
        self.blocking = blocking
        self.urgency = urgency
        self.expiresIn = expiresIn
        self.expiresInMilliseconds = expiresInMilliseconds
        self.notificationTitle = notificationTitle
        self.notificationBody = notificationBody
        self.onTimeout = onTimeout
        self.onCancel = onCancel
        self.skippable = skippable ?? (onTimeout == .skip)
        self.skippableDeclared = skippable != nil
        self.ui = ui
        self.extensions = extensions
    }

    /// What a person's explicit cancel does: `onCancel`, else `onTimeout`.
    public var cancelAction: ResumeAction { onCancel ?? onTimeout }
}
