import Dispatch
import Foundation
import Synchronization

/// How a document runs its I/O: on its own serial queue, inside the caller's coordination
/// context, under a coordinated read or write when it has a coordinator.
extension Document {
    /// Runs `work` on the document's I/O queue, inside the caller's coordination context (so a
    /// save from inside a coordinated write of the document runs under that write).
    func perform<T: Sendable>(_ work: @escaping @Sendable () throws(DocumentKitError) -> T) async throws(DocumentKitError) -> T {
        let context = CoordinationContext.current
        let result: Result<T, DocumentKitError> = await withCheckedContinuation { continuation in
            io.async {
                context.run {
                    do throws(DocumentKitError) { continuation.resume(returning: .success(try work())) } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        }
        return try result.get()
    }

    /// Runs `work` under a coordinated read or write of the document, if it has a coordinator.
    func coordinated<T>(writing: Bool, _ work: () throws(DocumentKitError) -> T) throws(DocumentKitError) -> T {
        guard let coordinator else { return try work() }
        do {
            if writing {
                return try coordinator.coordinate(writingItemAt: fileURL) { _ in try work() }
            }
            return try coordinator.coordinate(readingItemAt: fileURL) { _ in try work() }
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw Self.wrap(error, operation: writing ? .save : .open, path: fileURL.path)
        }
    }

    static func wrap(_ error: any Error, operation: DocumentKitError.Operation, path: String) -> DocumentKitError {
        if let error = error as? DocumentKitError { return error }
        return DocumentKitError(
            .corruptData, operation: operation, path: path, originalIsIntact: true,
            detail: "The contents are not valid", underlyingError: SendableDescription(error))
    }
}
