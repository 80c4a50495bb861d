import DocumentKitSystem

/// The batches of a live ``DocumentIndex``: an `AsyncSequence` that ends when the index is
/// closed, or throws a ``/DocumentKitSystem/DocumentKitError`` when the library folder is deleted or moved away.
public struct IndexUpdates: AsyncSequence, Sendable {
    /// A batch of changes.
    public typealias Element = IndexBatch
    /// Why the sequence ended early: the library folder went away.
    public typealias Failure = DocumentKitError

    let stream: AsyncThrowingStream<IndexBatch, any Error>

    /// Iterates over the batches.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<IndexBatch, any Error>.AsyncIterator

        /// The next batch; nil when the sequence ended.
        public mutating func next() async throws(DocumentKitError) -> IndexBatch? {
            do { return try await base.next() } catch let error as DocumentKitError {
                throw error
            } catch {
                throw DocumentKitError(.other, operation: .read, path: "(document index)", detail: "\(error)")
            }
        }

        /// The next batch, on `actor`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(DocumentKitError) -> IndexBatch? {
            do { return try await base.next(isolation: actor) } catch let error as DocumentKitError {
                throw error
            } catch {
                throw DocumentKitError(.other, operation: .read, path: "(document index)", detail: "\(error)")
            }
        }
    }

    /// Makes an iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}
