import DocumentKitSystem
import Foundation

/// The message of a ``/DocumentKitSystem/DocumentKitError`` (the file, the step and the cause) is also its
/// `localizedDescription`, where apps and logs look first.
extension DocumentKitError: LocalizedError {
    /// The error's full message: ``/DocumentKitSystem/DocumentKitError/description``.
    public var errorDescription: String? { description }
}
