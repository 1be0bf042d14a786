import Foundation
import WorkflowCore

/// The fresh store file behind `"store": "$tempfile"`: a path in the temporary directory that
/// no file holds yet (the engine creates it), removed afterwards with its `-wal` and `-shm`.
public struct TempStore: Sendable {
    public static let placeholder = "$tempfile"

    public let path: String

    public init() {
        let dir = FileManager.default.temporaryDirectory.path
        path = "\(dir)/wf-conformance-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).sqlite"
    }

    /// Whether `config` asks for a temporary store.
    public static func isRequested(by config: JSON) -> Bool { config["store"] == .string(placeholder) }

    /// `config` with its `$tempfile` store replaced by this path.
    public func resolve(_ config: JSON) -> JSON {
        guard case var .object(o) = config else { return config }
        o["store"] = .string(path)
        return .object(o)
    }

    /// Deletes the store and its SQLite side files; missing files are fine.
    public func remove() {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
