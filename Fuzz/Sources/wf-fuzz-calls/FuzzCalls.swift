import Foundation
import WorkflowCAPI
import WorkflowCore  // Status: the C interface's status codes (a module of the `workflow` product)

// libFuzzer's entry point: one input is a short session of calls through the C ABI's text
// functions, as an FFI host makes them, on a fresh engine (in memory unless the input configures
// a store). Fuzz/README.md tells how to run it.
//
// Input: UTF-8 text, one call per line, `op` then a space then the args as JSON (`effects.take
// {"max":5}`); a line without a space is an op without args. A first line `config {...}` opens the
// engine with that configuration instead of the default (manual clock, seed 1); a `store` other
// than ":memory:" becomes a file of this process's own, deleted after the input, so no input
// writes anywhere else. A line `reopen` frees the engine and opens it again on the same store (on
// a file store, what the engine reads back). At most `maxCalls` lines are played; bytes that are
// not UTF-8 are replaced.
//
// What counts as a finding (the process aborts, and libFuzzer keeps the input):
// - a crash of any kind: a Swift trap (overflow, index out of range, force unwrap), a signal, or
//   a memory error AddressSanitizer sees;
// - a call answered WF_EINTERNAL ("a bug in the engine"), or any status the header does not list;
// - a failure whose error record lacks a code or a message, or a status that disagrees with the
//   record;
// - a success without a result, or a result that is not a JSON value.

private let maxCalls = 64
private let defaultConfig = #"{"clock":{"mode":"manual","start":"2026-01-01T00:00:00.000Z"},"seed":1,"logLevel":"error"}"#
/// The header's statuses a call may return: all but WF_EINTERNAL (a finding) and WF_ITEROVER
/// (reserved, returned by nothing yet).
private let statuses = Set(Status.allCases.filter { $0 != .internal && $0 != .iterOver }.map(\.rawValue))

/// The fields of the thread's `wf_error` record (include/workflow.h).
private struct ErrorFields {
    let status: Int32
    let code: String
    let message: String

    static var last: ErrorFields {
        let p = wf_error_last()
        func text(_ offset: Int) -> String {
            guard let s = p.load(fromByteOffset: offset, as: UnsafePointer<CChar>?.self) else { return "" }
            return String(cString: s)
        }
        return ErrorFields(status: p.load(as: Int32.self), code: text(8), message: text(16))
    }
}

private func finding(_ what: String, _ call: String) -> Never {
    FileHandle.standardError.write(Data("wf-fuzz-calls: \(what)\n  call: \(call)\n".utf8))
    abort()
}

/// Checks the status of one call against the error record.
private func check(_ status: Int32, _ call: String) {
    guard statuses.contains(status) else {
        let e = ErrorFields.last
        finding("status \(status) (\(e.code): \(e.message))", call)
    }
    let e = ErrorFields.last
    if e.status != status { finding("the error record says \(e.status), the call returned \(status)", call) }
    if status != 0 && (e.code.isEmpty || e.message.isEmpty) { finding("a failure without a code or a message", call) }
}

/// Opens an engine, or nil when the configuration is refused (checked as any call is).
private func open(_ config: String) -> OpaquePointer? {
    var handle: OpaquePointer?
    let status = config.withCString { wf_engine_open_text(&handle, $0) }
    check(status, "wf_engine_open_text \(config)")
    return status == 0 ? handle : nil
}

/// Where an input's engine keeps its store.
private enum Confined {
    case memory
    /// This process's store file: the configuration's `store` was rewritten to it.
    case file(String)
    /// The configuration mentions a store this harness cannot read (the input is skipped).
    case unreadable
}

/// Rewrites a configuration naming any store but ":memory:" to a file of this process's own.
private func confine(_ config: inout String) -> Confined {
    let parsed = try? JSONSerialization.jsonObject(with: Data(config.utf8), options: [.fragmentsAllowed])
    guard var object = parsed as? [String: Any] else { return config.contains("store") ? .unreadable : .memory }
    // A store that is not a string is left for the engine to refuse. (JSONSerialization, like
    // the engine, keeps the last of duplicated keys, so both read the same `store`.)
    guard let store = object["store"] as? String, store != ":memory:" else { return .memory }
    let path = NSTemporaryDirectory() + "wf-fuzz-calls-\(getpid()).sqlite"
    removeStore(path)
    object["store"] = path
    guard let data = try? JSONSerialization.data(withJSONObject: object) else { return .unreadable }
    config = String(decoding: data, as: UTF8.self)
    return .file(path)
}

private func removeStore(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal", "-wfjournal"] { unlink(path + suffix) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: true).prefix(maxCalls + 1).map(String.init)
    var config = defaultConfig
    if let first = lines.first, first.hasPrefix("config ") {
        config = String(first.dropFirst("config ".count))
        lines.removeFirst()
    }
    let store: String?
    switch confine(&config) {
    case .memory: store = nil
    case .file(let path): store = path
    case .unreadable: return 0
    }
    defer { if let store { removeStore(store) } }
    guard var engine = open(config) else { return 0 }
    defer { wf_engine_free(engine) }
    for line in lines.prefix(maxCalls) {
        if line == "reopen" {
            wf_engine_free(engine)
            guard let again = open(config) else {
                // The store the engine closed must open again.
                finding("the engine did not open again: \(ErrorFields.last.code): \(ErrorFields.last.message)", line)
            }
            engine = again
            continue
        }
        let op: String, args: String?
        if let space = line.firstIndex(of: " ") {
            (op, args) = (String(line[..<space]), String(line[line.index(after: space)...]))
        } else {
            (op, args) = (line, nil)
        }
        var result: UnsafeMutablePointer<CChar>?
        let status = op.withCString { o in
            if let args { return args.withCString { wf_call_text(&result, engine, o, $0) } }
            return wf_call_text(&result, engine, o, nil)
        }
        check(status, line)
        if status == 0 {
            guard let result else { finding("a success without a result", line) }
            let json = String(cString: result)
            wf_free(result)
            if (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])) == nil {
                finding("a result that is not JSON: \(json.prefix(200))", line)
            }
        } else if result != nil {
            finding("a failure with a result", line)
        }
    }
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main` (so tests can link the module);
// this one hands the process to libFuzzer's driver, which then calls `fuzzOneInput`.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<Int32>,
                       _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ callback: @convention(c) (UnsafeRawPointer, Int) -> CInt) -> CInt

@_cdecl("wf_fuzz_calls_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runDriver(&argc, &argv) { fuzzOneInput($0, $1) }
}
