import Foundation
import WorkflowEngine

/// The engines the C ABI has handed out, by handle.
///
/// A `wf_engine *` is a number drawn from a counter, never a pointer and never reused, so a
/// handle used after `wf_engine_close()` (or closed twice, or made up) finds no engine and the
/// call is refused with `WF_ESTATE engineClosed` instead of reading freed memory: no misuse of
/// a handle crashes the host. A call takes its own reference to the engine, so a close racing
/// it on another thread cannot free the engine under it; the engine serialises the two (the
/// call either runs before the close or answers `engineClosed`).
enum HandleTable {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var engines: [UInt: Engine] = [:]
    nonisolated(unsafe) private static var lastHandle: UInt = 0

    /// Handles step by 16 from 16: never 0 (NULL), aligned like a pointer would be, and a
    /// 64-bit counter does not wrap.
    private static let step: UInt = 16

    /// Registers a newly opened engine; returns its handle.
    static func insert(_ engine: Engine) -> OpaquePointer {
        lock.lock()
        defer { lock.unlock() }
        lastHandle += step
        engines[lastHandle] = engine
        return OpaquePointer(bitPattern: lastHandle)!
    }

    /// The open engine behind `handle`, or nil when it was closed or never opened.
    static func engine(_ handle: OpaquePointer) -> Engine? {
        lock.lock()
        defer { lock.unlock() }
        return engines[UInt(bitPattern: handle)]
    }

    /// Removes `handle`: returns its engine for the caller to close, or nil when it was closed
    /// already or never opened.
    static func remove(_ handle: OpaquePointer) -> Engine? {
        lock.lock()
        defer { lock.unlock() }
        return engines.removeValue(forKey: UInt(bitPattern: handle))
    }
}
