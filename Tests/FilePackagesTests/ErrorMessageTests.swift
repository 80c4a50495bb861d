#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import SystemPackage
import Testing

@testable import FilePackages

@Suite struct ErrorMessageTests {
    @Test("a system failure's description names the path, the step and the errno")
    func describesSystemFailure() {
        let error = DocumentKitError(
            .ioError, operation: .save, path: "/tmp/a/Doc.pkg", step: "flushing the new package (fsync)", originalIsIntact: true)
        #expect(error.code == .ioError)
        #expect(error.errno == .ioError)
        #expect(error.description.contains("/tmp/a/Doc.pkg"))
        #expect(error.description.contains("flushing the new package (fsync)"))
        #expect(error.description.contains("EIO"))
        #expect(error.description.contains("save"))
        #expect(error.description.contains("The original is unchanged"))
        #expect("\(error)" == error.description)
    }

    @Test("the message is also the error's localizedDescription, as an app shows it")
    func localizedDescriptionIsTheMessage() {
        let error: any Error = DocumentKitError(
            .noSpace, operation: .save, path: "/tmp/a/Doc.pkg", step: "writing the new contents", originalIsIntact: true)
        #expect(error.localizedDescription == (error as! DocumentKitError).description)
        #expect(error.localizedDescription.contains("/tmp/a/Doc.pkg"))
        #expect(error.localizedDescription.contains("ENOSPC"))
    }

    @Test("errno values map to codes and carry their symbolic names",
          arguments: [(Errno.ioError, DocumentKitError.Code.ioError, "EIO"), (.noSpace, .noSpace, "ENOSPC"),
                      (.improperLink, .crossDevice, "EXDEV"), (.permissionDenied, .permissionDenied, "EACCES"),
                      (.readOnlyFileSystem, .readOnlyFileSystem, "EROFS"), (.noSuchFileOrDirectory, .notFound, "ENOENT"),
                      (.diskQuotaExceeded, .noSpace, "EDQUOT"), (.fileExists, .alreadyExists, "EEXIST"),
                      (.tooManySymbolicLinkLevels, .symbolicLinkNotAllowed, "ELOOP"), (.badAddress, .other, "errno 14")])
    func errnoCodes(errno: Errno, code: DocumentKitError.Code, name: String) {
        let error = DocumentKitError(errno, operation: .read, path: "/x", step: "reading")
        #expect(error.code == code)
        #expect(error.description.contains(name))
        #expect(errno.readableDescription.contains(name))
    }

    @Test("an error without errno or step still reads as a sentence")
    func withoutErrno() {
        let error = DocumentKitError(.corruptData, operation: .recover, path: "/x/Doc.pkg", detail: "The intent is malformed.")
        #expect(error.description == "Couldn't recover “/x/Doc.pkg”: The intent is malformed.")
        let stepOnly = DocumentKitError(.busy, operation: .save, path: "/x", step: "locking")
        #expect(stepOnly.description == "Couldn't save “/x”: locking failed.")
    }

    @Test("a failed save of a file names the document, the step that failed and the errno",
          arguments: [(SystemCall.synchronize, "fsync"), (.write, "writing"), (.lock, "locking the temporary file"),
                      (.changeMode, "permissions")])
    func failedFileSave(call: SystemCall, stepWords: String) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        try put("old", at: url)
        let faults = FaultInjector()
        faults.fail(call, with: .ioError)
        let error = #expect(throws: DocumentKitError.self) {
            try file("new").write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
        }
        #expect(error?.operation == .save)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.step?.contains(stepWords) == true, "\(String(describing: error))")
        #expect(error?.description.contains("EIO") == true)
        #expect(error?.originalIsIntact == true)
        #expect(read(url) == "old")
        #expect(try dir.contents() == ["note.txt"])
    }

    @Test("a failed package save names the package and the member whose step failed")
    func failedPackageSave() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        var tree = try FileWrapper(contentsOf: url)
        tree["attachments"]!["deep"]!["b.txt"] = file("changed")
        let faults = FaultInjector()
        faults.fail(.write, with: .noSpace)
        let error = #expect(throws: DocumentKitError.self) {
            try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
        }
        #expect(error?.code == .noSpace)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.description.contains("attachments/deep/b.txt") == true)
        #expect(error?.description.contains("ENOSPC") == true)
        #expect(try FileWrapper(contentsOf: url) == samplePackage())
    }

    @Test("a failed read names the package, the member and the errno")
    func failedRead() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let faults = FaultInjector()
        faults.fail(.readLink, with: .ioError)
        try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("attachments/l").path, withDestinationPath: "a.txt")
        let error = #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem) }
        #expect(error?.operation == .read)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.description.contains("attachments/l") == true)
        #expect(error?.description.contains("EIO") == true)
    }
}
