import CJansson
import Glibc
import WorkflowCore
import WorkflowEngine

// The functions of include/workflow.h. Each one converts its arguments, calls the engine,
// records the outcome for wf_error_last(), and returns a status. No logic lives here, and no
// error escapes: every failure becomes a status and an error record.

/// Returns `error.status` after recording it, or WF_OK after clearing the record.
private func finish(_ error: EngineError?) -> Int32 {
    if let error {
        ErrorRecord.current.set(error)
        return error.status.rawValue
    }
    ErrorRecord.current.setOK()
    return Status.ok.rawValue
}

private func invalid(_ argument: String, _ message: String, code: String = "invalidArgument") -> EngineError {
    .invalid(code, message, details: ["argument": .string(argument)])
}

/// The error for a handle that names no open engine (closed already, or never opened).
private func closedHandle() -> EngineError {
    .state("engineClosed", "engine is not an open engine: it was closed, or never opened",
           details: ["argument": "engine"])
}

private func openEngine(_ out: UnsafeMutablePointer<OpaquePointer?>, _ config: JSON?) -> Int32 {
    do throws(EngineError) {
        let engine = try Engine(configJSON: config)
        out.pointee = HandleTable.insert(engine)
        return finish(nil)
    } catch {
        return finish(error)
    }
}

@_cdecl("wf_engine_open")
public func wf_engine_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ config: UnsafePointer<json_t>?) -> Int32 {
    guard let out else { return finish(invalid("out", "out must not be NULL")) }
    out.pointee = nil
    var configJSON: JSON?
    if let config {
        do throws(EngineError) {
            configJSON = try JanssonBridge.toJSON(config, name: "config")
        } catch {
            return finish(error)
        }
    }
    return openEngine(out, configJSON)
}

@_cdecl("wf_engine_open_text")
public func wf_engine_open_text(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ configText: UnsafePointer<CChar>?) -> Int32 {
    guard let out else { return finish(invalid("out", "out must not be NULL")) }
    out.pointee = nil
    var configJSON: JSON?
    if let configText {
        do throws(EngineError) {
            configJSON = try parseText(configText, name: "config_json")
        } catch {
            return finish(error)
        }
    }
    return openEngine(out, configJSON)
}

@_cdecl("wf_engine_free")
public func wf_engine_free(_ handle: OpaquePointer?) {
    guard let handle, let engine = HandleTable.remove(handle) else { return }
    engine.close()
}

@_cdecl("wf_engine_close")
public func wf_engine_close(_ handle: OpaquePointer?) -> Int32 {
    guard let handle else { return finish(nil) }
    guard let engine = HandleTable.remove(handle) else { return finish(closedHandle()) }
    switch engine.close() {
    case .success: return finish(nil)
    case .failure(let error): return finish(error)
    }
}

private func parseText(_ text: UnsafePointer<CChar>, name: String) throws(EngineError) -> JSON {
    let length = strlen(text)
    let bytes = UnsafeRawBufferPointer(start: text, count: length).bindMemory(to: UInt8.self)
    do throws(JSONParser.Failure) {
        return try JSONParser.parse(bytes: bytes)
    } catch {
        // The same codes as for a json_t argument (JanssonBridge): nesting and text that is
        // not Unicode have their own.
        let code = switch error.kind {
        case .syntax: "malformedJSON"
        case .tooDeep: "tooDeep"
        case .invalidUnicode: "invalidUTF8"
        }
        throw EngineError.invalid(code, "\(name) is not valid JSON: \(error.description)",
                                  details: ["argument": .string(name), "offset": JSON(error.offset)])
    }
}

/// Validates the handle and op name, then runs the op. `argsName` names the arguments in errors.
private func run(_ handle: OpaquePointer?, _ op: UnsafePointer<CChar>?, argsName: String,
                 _ args: () throws(EngineError) -> JSON?) -> Result<JSON, EngineError>
{
    guard let handle else { return .failure(invalid("engine", "engine must not be NULL")) }
    guard let engine = HandleTable.engine(handle) else { return .failure(closedHandle()) }
    guard let op else { return .failure(invalid("op", "op must not be NULL")) }
    guard let name = String(validatingCString: op) else {
        return .failure(invalid("op", "op is not valid UTF-8", code: "invalidUTF8"))
    }
    guard !name.isEmpty else { return .failure(invalid("op", "op must not be empty")) }
    let argsJSON: JSON?
    do throws(EngineError) {
        argsJSON = try args()
    } catch {
        return .failure(error)
    }
    var object = JSONObject()
    if let argsJSON, !argsJSON.isNull {  // NULL and JSON null both mean {}
        guard case let .object(o) = argsJSON else {
            return .failure(invalid(argsName, "\(argsName) must be a JSON object, not \(argsJSON.typeName)"))
        }
        object = o
    }
    let outcome = engine.call(name, object)
    // A close on another thread won the race after the handle was looked up: the same record
    // as for a handle closed before the call.
    if case let .failure(error) = outcome, error.code == "engineClosed" { return .failure(closedHandle()) }
    return outcome
}

@_cdecl("wf_call")
public func wf_call(_ result: UnsafeMutablePointer<UnsafeMutablePointer<json_t>?>?, _ handle: OpaquePointer?,
                    _ op: UnsafePointer<CChar>?, _ args: UnsafePointer<json_t>?) -> Int32
{
    result?.pointee = nil
    let outcome = run(handle, op, argsName: "args") { () throws(EngineError) -> JSON? in
        try args.map { a throws(EngineError) in try JanssonBridge.toJSON(a, name: "args") }
    }
    switch outcome {
    case .success(let value):
        if let result {
            guard let converted = JanssonBridge.toJansson(value) else {
                return finish(.internal("out of memory converting the result"))
            }
            result.pointee = converted
        }
        return finish(nil)
    case .failure(let error):
        return finish(error)
    }
}

@_cdecl("wf_call_text")
public func wf_call_text(_ result: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ handle: OpaquePointer?,
                         _ op: UnsafePointer<CChar>?, _ argsText: UnsafePointer<CChar>?) -> Int32
{
    result?.pointee = nil
    let outcome = run(handle, op, argsName: "args_json") { () throws(EngineError) -> JSON? in
        try argsText.map { t throws(EngineError) in try parseText(t, name: "args_json") }
    }
    switch outcome {
    case .success(let value):
        if let result {
            guard let text = strdup(JSONWriter.string(value)) else {
                return finish(.internal("out of memory writing the result"))
            }
            result.pointee = text
        }
        return finish(nil)
    case .failure(let error):
        return finish(error)
    }
}

@_cdecl("wf_error_last")
public func wf_error_last() -> UnsafeRawPointer {
    UnsafeRawPointer(ErrorRecord.current.record)
}

@_cdecl("wf_error_clear")
public func wf_error_clear() {
    ErrorRecord.current.setOK()
}

@_cdecl("wf_free")
public func wf_free(_ p: UnsafeMutableRawPointer?) {
    free(p)
}

@_cdecl("wf_libversion_number")
public func wf_libversion_number() -> Int32 {
    Int32(EngineVersion.number)
}

nonisolated(unsafe) private let versionText: UnsafeMutablePointer<CChar> = strdup(EngineVersion.string)!

@_cdecl("wf_libversion")
public func wf_libversion() -> UnsafePointer<CChar> {
    UnsafePointer(versionText)
}

nonisolated(unsafe) private let statusNames: [Int32: UnsafeMutablePointer<CChar>] = {
    var names: [Int32: UnsafeMutablePointer<CChar>] = [:]
    for s in Status.allCases { names[s.rawValue] = strdup(s.name)! }
    return names
}()
nonisolated(unsafe) private let unknownStatusName: UnsafeMutablePointer<CChar> = strdup("WF_UNKNOWN")!

@_cdecl("wf_status_name")
public func wf_status_name(_ status: Int32) -> UnsafePointer<CChar> {
    UnsafePointer(statusNames[status] ?? unknownStatusName)
}
