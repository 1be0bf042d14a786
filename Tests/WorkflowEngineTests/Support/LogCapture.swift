import Foundation
import Logging
import WorkflowEngine

/// Every log line an engine writes, captured through a swift-log handler, for tests that check
/// what is logged (and what never is).
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [(level: Logger.Level, text: String)] = []

    /// Each line's level and text (`message key=value …`, metadata sorted by key).
    var entries: [(level: Logger.Level, text: String)] { lock.lock(); defer { lock.unlock() }; return stored }
    /// Each line as `level message key=value …`.
    var lines: [String] { entries.map { "\($0.level) \($0.text)" } }

    /// The handler to pass as an engine's `logHandler`.
    var handler: @Sendable (String) -> LogHandler { { [self] _ in Handler(capture: self) } }

    /// An engine on a manual clock whose log lines at `level` and above land here.
    func engine(level: Logger.Level) throws -> Engine {
        var config = EngineConfig()
        config.clock = .manual(start: EngineConfig.defaultStart)
        config.logLevel = level
        return try Engine(config: config, logHandler: handler)
    }

    fileprivate func add(_ level: Logger.Level, _ text: String) { lock.lock(); stored.append((level, text)); lock.unlock() }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.add(event.level, "\(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        }
    }
}
