/// A fixture that cannot be run as written: unreadable, not JSON, or not in the format of
/// shared/conformance/FORMAT.md. The message is the `<why>` of its `invalid fixture` line.
public struct FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The fixture's name, when the document has a valid one: what the line shows (else the path).
    public var name: String?

    public init(_ message: String, name: String? = nil) {
        self.message = message
        self.name = name
    }

    public var description: String { message }
}
