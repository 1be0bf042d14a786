/// A fixture that cannot be run as written: unreadable, not JSON, or not in the format of
/// shared/conformance/FORMAT.md. The message says where.
public struct FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
