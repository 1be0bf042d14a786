import Foundation

/// What threads started together returned, gathered under a lock.
private final class Gathered<T>: @unchecked Sendable {  // written under `lock` by the threads
    let lock = NSLock()
    var results: [Result<T, Error>] = []
}

/// Runs `body` on `count` threads started together (two engines opening one store at the same
/// moment); returns each one's result, in the order they finished.
func atOnce<T>(_ count: Int, _ body: @escaping @Sendable () throws -> T) -> [Result<T, Error>] {
    let gathered = Gathered<T>()
    let group = DispatchGroup()
    for _ in 0..<count {
        group.enter()
        Thread {
            defer { group.leave() }
            let result = Result { try body() }
            gathered.lock.withLock { gathered.results.append(result) }
        }.start()
    }
    group.wait()
    return gathered.results
}
