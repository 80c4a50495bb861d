/// A Sendable stand-in for an error that may not be Sendable: its type and description.
public struct SendableDescription: Error, Sendable, CustomStringConvertible {
    /// The original error's type name.
    public let typeName: String
    /// The original error's description.
    public let description: String

    /// Records the type and description of `error`.
    public init(_ error: any Error) {
        typeName = String(reflecting: type(of: error))
        description = String(describing: error)
    }
}
