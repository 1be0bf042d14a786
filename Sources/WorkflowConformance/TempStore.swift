import Foundation
import WorkflowCore
import WorkflowEngine

/// The fresh store file behind `"store": "$tempfile"`: a path in the temporary directory that
/// no file holds yet (the engine creates it), removed afterwards with every file the engine keeps
/// beside it (``Engine/storeFiles(_:)``).
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

    /// Deletes the store and its side files; missing files are fine.
    public func remove() {
        for file in Engine.storeFiles(path) + [path + "-journal"] {
            try? FileManager.default.removeItem(atPath: file)
        }
    }
}
