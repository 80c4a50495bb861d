import DocumentKitSystem
import Foundation

/// The message of a ``DocumentKitError`` (the file, the step and the cause) is also its
/// `localizedDescription`, where apps and logs look first.
extension DocumentKitError: LocalizedError {
    /// The error's full message: ``DocumentKitError/description``.
    public var errorDescription: String? { description }
}
