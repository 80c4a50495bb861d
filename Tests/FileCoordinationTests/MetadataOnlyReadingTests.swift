import Dispatch
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Issue #13 §5: `NSFileCoordinator.ReadingOptions.immediatelyAvailableMetadataOnly`.
@Suite struct MetadataOnlyReadingTests {
    @Test("a metadata-only read is granted the item and sees its metadata")
    func metadataOnlyReadSeesTheItem() throws {
        let fixture = try Fixture()
        try fixture.makeFile("a.txt", "12345")
        let size = try fixture.coordinator.coordinate(
            readingItemAt: fixture.url("a.txt"), options: .immediatelyAvailableMetadataOnly
        ) { granted in
            try FileManager.default.attributesOfItem(atPath: granted.path)[.size] as? Int
        }
        #expect(size == 5)
    }

    @Test("a metadata-only read still waits for a coordinated write of the item, as Apple's does")
    func metadataOnlyReadWaitsForAWriter() throws {
        let fixture = try Fixture()
        try fixture.makeFile("a.txt", "before")
        let url = fixture.url("a.txt")
        let writing = DispatchSemaphore(value: 0)
        let readerStarted = DispatchSemaphore(value: 0)
        let writer = FileCoordinator(namespace: fixture.namespace)
        let done = DispatchSemaphore(value: 0)
        let writeError = Mutex<(any Error)?>(nil)
        Thread.detachNewThread {
            do {
                try writer.coordinate(writingItemAt: url) { granted in
                    try Data("half".utf8).write(to: granted)
                    writing.signal()
                    readerStarted.wait()
                    Thread.sleep(forTimeInterval: 0.3)  // the reader is in its coordination by now
                    try Data("after".utf8).write(to: granted)
                }
            } catch {
                writeError.withLock { $0 = error }
            }
            done.signal()
        }
        writing.wait()
        readerStarted.signal()
        let seen = try fixture.coordinator.coordinate(readingItemAt: url, options: .immediatelyAvailableMetadataOnly) { granted in
            try FileManager.default.attributesOfItem(atPath: granted.path)[.size] as? Int
        }
        done.wait()
        #expect(writeError.withLock { $0 } == nil)
        #expect(seen == "after".utf8.count)
    }
}
