/// Numbers the rules use, from the engine's configuration (DESIGN §5).
public struct RuleSettings: Sendable {
    public var pollIntervalSeconds: Double = 10
    public var seed: UInt64 = 0
    public var deepLinkScheme: String = "app"
    public var claimLeaseSeconds: Double = 300
    public var defaultSnoozeSeconds: Double = 3600
    public var maxSnoozes: Int = 5
    public var doneAwaitRetentionSeconds: Double = 7 * 86_400

    public init() {}
}

/// What the rules need from their surroundings: the time, lookups, ids, and a place to put
/// assets, effects and telemetry. The engine's unit of work implements it; core tests use a
/// plain in-memory one. Nothing here reads a clock or touches files or the network.
public protocol RulesContext: AnyObject {
    var now: Timestamp { get }
    var settings: RuleSettings { get }
    var isOnline: Bool { get }
    func tool(_ kind: String) -> ToolSpec?
    /// Whether a tool of `kind` is registered (gating asks this of every node it gates).
    func hasTool(_ kind: String) -> Bool
    /// The class of the tool of `kind`, if one is registered (every run created asks this).
    func toolClass(_ kind: String) -> ResourceClass?
    /// The defaults of the tool of `kind`, if one is registered (every run created asks this).
    func toolDefaults(_ kind: String) -> JSONObject?
    func providerDefaults(_ kind: String) -> JSONObject?
    func asset(_ id: String) throws(EngineError) -> Asset?
    /// The type of asset `id`, or nil when there is none (gating asks this of every input).
    func assetType(_ id: String) throws(EngineError) -> String?
    func putAsset(_ asset: Asset)
    func newId(_ prefix: String) -> String
    /// Adds an effect of `type` whose own members are `body` (an `id` and `type` in it are
    /// replaced by the effect's). `body` is consumed: an object built for the effect becomes its
    /// body without a copy.
    @discardableResult
    func emit(_ type: String, _ body: consuming JSONObject, answerKey: String?) -> Effect
    /// Effects on record for an answer key.
    func effects(answerKey: String) -> [Effect]
    /// The answer arrived, or the work is obsolete: drop what is on record for the key.
    func settle(answerKey: String)
    func metric(_ name: String, _ fields: JSONObject)
    /// A log line for operators: ids and codes only, never media, file contents or personal data.
    /// The fields are built only if the line would be logged (they are evaluated lazily).
    func note(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String])
    /// A warning log line, same rules as ``note(_:_:)``.
    func warn(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String])
    /// Whether workflow `workflowId` was reconciled in full (``Executor/reconcile(_:)``) since
    /// anything outside it that gating reads last changed (tools, the network), in this process.
    /// Only then may a completion re-gate just the nodes that can see it.
    func isReconciled(_ workflowId: String) -> Bool
    /// ``Executor/reconcile(_:)`` just brought workflow `workflowId` up to date.
    func markReconciled(_ workflowId: String)
}

extension RulesContext {
    public func assetType(_ id: String) throws(EngineError) -> String? { try asset(id)?.type }
    public func hasTool(_ kind: String) -> Bool { tool(kind) != nil }
    public func toolClass(_ kind: String) -> ResourceClass? { tool(kind)?.resourceClass }
    public func toolDefaults(_ kind: String) -> JSONObject? { tool(kind)?.defaults }
}
