#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

@Suite struct SavePolicyTests {
    enum LinkStyle: String, CaseIterable, CustomTestStringConvertible {
        case relative, absolute, chain
        var testDescription: String { rawValue }
    }

    /// Makes `name` in `dir` lead to `target` (a name in `dir/real/`) in the given style.
    private func makeLink(_ style: LinkStyle, named name: String, to target: String, in dir: TemporaryDirectory) throws -> URL {
        let link = dir.appending(name)
        let fm = FileManager.default
        switch style {
        case .relative:
            try fm.createSymbolicLink(atPath: link.path, withDestinationPath: "real/" + target)
        case .absolute:
            try fm.createSymbolicLink(atPath: link.path, withDestinationPath: dir.appending("real/" + target).path)
        case .chain:
            // name -> hop1 (absolute) -> links/hop2 (relative, ../) -> real/target
            try fm.createDirectory(at: dir.appending("links"), withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: dir.appending("links/hop2").path, withDestinationPath: "../real/" + target)
            try fm.createSymbolicLink(atPath: dir.appending("hop1").path, withDestinationPath: dir.appending("links/hop2").path)
            try fm.createSymbolicLink(atPath: link.path, withDestinationPath: "hop1")
        }
        return link
    }

    @Test("a file reached through a symbolic link is saved at the target; the link stays a link", arguments: LinkStyle.allCases)
    func fileThroughLink(style: LinkStyle) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.appending("real"), withIntermediateDirectories: true)
        let target = dir.appending("real/note.txt")
        try put("old", at: target)
        let link = try makeLink(style, named: "note.txt", to: "note.txt", in: dir)
        let linkBefore = snapshot(link)
        try file("new").write(to: link)
        #expect(read(target) == "new")
        #expect(snapshot(link) == linkBefore)
        #expect(status(link).st_mode & S_IFMT == S_IFLNK)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("real").path) == ["note.txt"])
        #expect(litter(in: dir.url).isEmpty)
    }

    @Test("a package reached through a symbolic link is saved at the target; the link stays a link", arguments: LinkStyle.allCases)
    func packageThroughLink(style: LinkStyle) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.appending("real"), withIntermediateDirectories: true)
        let target = dir.appending("real/Doc.pkg")
        try samplePackage().write(to: target)
        let aInode = inode(target.appendingPathComponent("attachments/a.txt"))
        let link = try makeLink(style, named: "Doc.pkg", to: "Doc.pkg", in: dir)
        let linkBefore = status(link)
        var tree = try FileWrapper(contentsOf: link)
        tree["body.md"] = file("through the link")
        try tree.write(to: link)
        #expect(read(target.appendingPathComponent("body.md")) == "through the link")
        #expect(inode(target.appendingPathComponent("attachments/a.txt")) == aInode)
        let linkAfter = status(link)
        #expect(linkAfter.st_mode & S_IFMT == S_IFLNK && linkAfter.st_ino == linkBefore.st_ino)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("real").path) == ["Doc.pkg"])
        #expect(litter(in: dir.url).isEmpty)
    }

    @Test("a new document through a dangling link is created at the link's target")
    func danglingLink() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.appending("real"), withIntermediateDirectories: true)
        let link = try makeLink(.relative, named: "Doc.pkg", to: "Doc.pkg", in: dir)
        try samplePackage().write(to: link)
        #expect(status(link).st_mode & S_IFMT == S_IFLNK)
        #expect(try FileWrapper(contentsOf: dir.appending("real/Doc.pkg")) == samplePackage())
    }

    @Test("by default a hard-linked file is detached: the other name keeps the old contents")
    func hardLinkDetach() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        let other = dir.appending("other-name.txt")
        try put("shared", at: url)
        #expect(link(url.path, other.path) == 0)
        try file("mine now").write(to: url)
        #expect(read(url) == "mine now")
        #expect(read(other) == "shared")
        #expect(status(other).st_nlink == 1)
        #expect(try dir.contents() == ["note.txt", "other-name.txt"])
    }

    @Test("with .refuse a hard-linked file is not saved: hardLinked is thrown and nothing is written")
    func hardLinkRefuse() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        let other = dir.appending("other-name.txt")
        try put("shared", at: url)
        #expect(link(url.path, other.path) == 0)
        let before = status(url)
        let error = #expect(throws: DocumentKitError.self) {
            try file("mine now").write(to: url, options: SaveOptions(hardLinks: .refuse))
        }
        #expect(error?.code == .hardLinked)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.originalIsIntact == true)
        let after = status(url)
        #expect(after.st_ino == before.st_ino && after.st_nlink == 2)
        #expect(read(url) == "shared" && read(other) == "shared")
        #expect(try dir.contents() == ["note.txt", "other-name.txt"])
    }

    @Test("an existing file's mode is kept", arguments: [UInt32(0o640), 0o600, 0o604, 0o755, 0o444])
    func modeKept(permissions: UInt32) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        try put("old", at: url)
        #expect(chmod(url.path, mode_t(permissions)) == 0)
        try file("new").write(to: url)
        #expect(mode(url) == permissions)
        #expect(read(url) == "new")
        // A wrapper read from the file carries the same mode and keeps it too.
        try FileWrapper(contentsOf: url).write(to: url)
        #expect(mode(url) == permissions)
    }

    @Test("a requested mode never widens the existing one, but may narrow it")
    func modeNeverWidened() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        try put("old", at: url)
        #expect(chmod(url.path, 0o600) == 0)
        try file("new", permissions: 0o666).write(to: url)
        #expect(mode(url) == 0o600)
        try file("newer", permissions: 0o400).write(to: url)
        #expect(mode(url) == 0o400)
        // A package's mode is kept the same way.
        let package = dir.appending("Doc.pkg")
        try samplePackage().write(to: package)
        #expect(chmod(package.path, 0o700) == 0)
        try FileWrapper(directoryWithFileWrappers: ["x": file("x")], permissions: 0o777).write(to: package)
        #expect(mode(package) == 0o700)
    }

    @Test("a new file gets the requested mode")
    func newFileMode() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("secret.txt")
        try file("s", permissions: 0o600).write(to: url)
        #expect(mode(url) == 0o600)
    }

    @Test("the owner and group of a file and of a package are kept (as root)", .enabled(if: geteuid() == 0))
    func ownerKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        try put("old", at: url)
        #expect(chown(url.path, 1234, 1234) == 0)
        #expect(chmod(url.path, 0o640) == 0)
        try file("new").write(to: url)
        var s = status(url)
        #expect(s.st_uid == 1234 && s.st_gid == 1234)
        #expect(s.st_mode & 0o7777 == 0o640)
        #expect(read(url) == "new")

        let package = dir.appending("Doc.pkg")
        try samplePackage().write(to: package)
        #expect(chown(package.path, 1234, 4321) == 0)
        #expect(chmod(package.path, 0o750) == 0)
        var tree = try FileWrapper(contentsOf: package)
        tree["body.md"] = file("changed")
        try tree.write(to: package)
        s = status(package)
        #expect(s.st_uid == 1234 && s.st_gid == 4321)
        #expect(s.st_mode & 0o7777 == 0o750)
        // Members the save wrote belong to the package's owner too, not to root.
        let member = status(package.appendingPathComponent("body.md"))
        #expect(member.st_uid == 1234 && member.st_gid == 4321)
    }
}
