import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite struct DocumentLifecycleTests {
    let directory: TemporaryDirectory
    var url: URL { directory.appending("Doc.pkg") }

    init() throws { directory = try TemporaryDirectory(prefix: "document") }

    @Test("a new document is dirty until saved, and reopens with what was saved")
    func newDocumentRoundTrip() async throws {
        let document = TextPackageDocument(fileURL: url, content: TextContent(text: "hello"))
        #expect(document.hasUnsavedChanges)
        try await document.save()
        #expect(!document.hasUnsavedChanges)
        try document.update { $0.text += " world" }
        #expect(document.hasUnsavedChanges)
        try await document.close()
        #expect(document.documentState.contains(.closed))
        let reopened = try await TextPackageDocument.open(at: url)
        #expect(reopened.content.text == "hello world")
        #expect(reopened.documentState == .normal)
    }

    @Test("edits made while a save runs stay unsaved after it")
    func editsDuringSaveStayDirty() async throws {
        let document = TextPackageDocument(fileURL: url, content: TextContent(text: "v1"))
        try await document.save()
        try document.update { $0.text = "v2" }
        document.gate.close()
        let save = Task { try await document.save() }
        while !document.gate.hasWaiter { try await Task.sleep(for: .milliseconds(1)) }
        try document.update { $0.text = "v3" }  // while the save of "v2" is being written
        document.gate.open()
        try await save.value
        #expect(document.hasUnsavedChanges)
        #expect(document.content.text == "v3")
        #expect(try await TextPackageDocument.open(at: url).content.text == "v2")
        try await document.save()
        #expect(!document.hasUnsavedChanges)
        #expect(try await TextPackageDocument.open(at: url).content.text == "v3")
    }

    @Test("a failed save keeps the file as it was and the edits in memory")
    func failedSaveKeepsEverything() async throws {
        try await TextPackageDocument(fileURL: url, content: TextContent(text: "on disk")).save()
        let faults = FaultInjector()
        let document = try await TextPackageDocument.open(at: url, saveOptions: SaveOptions(fileSystem: faults.fileSystem))
        try document.update { $0.text = "precious edit" }
        faults.fail(.synchronize, with: .noSpace, once: true)
        await #expect(throws: DocumentKitError.self) { try await document.save() }
        #expect(document.documentState.contains(.savingError))
        #expect(document.lastSaveError?.code == .noSpace)
        #expect(document.lastSaveError?.description.contains(url.path) == true)
        #expect(document.hasUnsavedChanges)
        #expect(document.content.text == "precious edit")
        #expect(try await TextPackageDocument.open(at: url).content.text == "on disk")
        // The next save (the disk has room again) succeeds and clears the error.
        try await document.save()
        #expect(!document.documentState.contains(.savingError))
        #expect(try await TextPackageDocument.open(at: url).content.text == "precious edit")
    }

    @Test("opening a damaged or missing document names the file")
    func openErrors() async throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        do {
            _ = try await TextPackageDocument.open(at: url)
            Issue.record("opened a package without text.txt")
        } catch {
            #expect(error.code == .corruptData)
            #expect(error.description.contains(url.path))
            #expect(error.description.contains("text.txt"))
        }
        do {
            _ = try await TextPackageDocument.open(at: directory.appending("absent.pkg"))
            Issue.record("opened a missing document")
        } catch {
            #expect(error.code == .notFound)
            #expect(error.description.contains("absent.pkg"))
        }
    }

    @Test("close saves unsaved changes unless told to discard them")
    func closeSavesOrDiscards() async throws {
        try await TextPackageDocument(fileURL: url, content: TextContent(text: "a")).save()
        let first = try await TextPackageDocument.open(at: url)
        try first.update { $0.text = "b" }
        try await first.close()
        let second = try await TextPackageDocument.open(at: url)
        #expect(second.content.text == "b")
        try second.update { $0.text = "discarded" }
        try await second.close(discardingChanges: true)
        #expect(try await TextPackageDocument.open(at: url).content.text == "b")
        await #expect(throws: DocumentKitError.self) { try await second.save() }
    }

    @Test("many tasks editing and saving at once lose no edit")
    func concurrentEdits() async throws {
        let document = TextPackageDocument(fileURL: url, content: TextContent(text: ""))
        try await document.save()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try document.update { $0.text += "\(index)," }
                    if index % 20 == 0 { try await document.save() }
                }
            }
            try await group.waitForAll()
        }
        try await document.save()
        let numbers = try await TextPackageDocument.open(at: url).content.text.split(separator: ",").compactMap { Int($0) }
        #expect(Set(numbers) == Set(0..<200))
    }

    @Test("a document reached through a symbolic link is saved at the target; the link stays")
    func symbolicLinkPolicy() async throws {
        let target = directory.appending("Real.pkg")
        try await TextPackageDocument(fileURL: target, content: TextContent(text: "real")).save()
        let link = directory.appending("Link.pkg")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "Real.pkg")
        let document = try await TextPackageDocument.open(at: link)
        try document.update { $0.text = "through the link" }
        try await document.save()
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "Real.pkg")
        #expect(try await TextPackageDocument.open(at: target).content.text == "through the link")
    }
}
