import WorkflowCore

/// The few things a runner needs from a host binding: open an engine from a config, call an op,
/// free an engine, and abandon one as a killed process would.
///
/// The Swift host drives ``WorkflowEngine/Engine`` directly; the C and Python runners implement
/// the same four operations over `wf_engine_open`, `wf_call`, `wf_engine_free`.
public protocol ConformanceHost {
    associatedtype Handle

    /// Opens an engine with `config` (already resolved: no `$tempfile` left in it).
    func open(config: JSON) -> Result<Handle, OutcomeError>

    /// Calls `op` with `args` and reports the outcome. `args` is usually an object; `null` means
    /// `{}`, and any other value goes to the engine as it is, which refuses it as `wf_call` does.
    func call(_ engine: Handle, op: String, args: JSON) -> Outcome

    /// Closes the engine cleanly.
    func free(_ engine: Handle)

    /// Drops the engine without closing or flushing anything. It must never be deinitialised,
    /// closed or reused afterwards: the store is left exactly as a killed process leaves it.
    func abandon(_ engine: Handle)
}
