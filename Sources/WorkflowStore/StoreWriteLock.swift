import Foundation

/// Serialises the writes to a store's tables by the engine's thread and the folder's, giving the
/// engine's thread the way: the folder takes the lock only while the engine is not waiting for
/// it.
final class StoreWriteLock: @unchecked Sendable {
    private let condition = NSCondition()
    private var held = false
    private var engineWaiting = 0

    /// The engine's thread: waits only for a transaction in progress.
    func lockForEngine() {
        condition.lock()
        engineWaiting += 1
        while held { condition.wait() }
        engineWaiting -= 1
        held = true
        condition.unlock()
    }

    /// The folder: waits until the lock is free and the engine is not waiting for it.
    func lockForFolder() {
        condition.lock()
        while held || engineWaiting > 0 { condition.wait() }
        held = true
        condition.unlock()
    }

    /// Whether a thread holds the lock now (for tests).
    var isHeld: Bool {
        condition.lock()
        defer { condition.unlock() }
        return held
    }

    /// How many threads wait for it in ``lockForEngine()`` now (for tests).
    var enginesWaiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return engineWaiting
    }

    func unlock() {
        condition.lock()
        held = false
        condition.broadcast()
        condition.unlock()
    }

    func withEngineLock<T>(_ body: () throws -> T) rethrows -> T {
        lockForEngine()
        defer { unlock() }
        return try body()
    }
}
