#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

/// What is on disk at a path, member by member, without following symbolic links.
enum DiskEntry: Equatable, CustomStringConvertible {
    case file(Data)
    case directory
    case link(String)
    case other

    var description: String {
        switch self {
        case .file(let data): "file(\(String(decoding: data, as: UTF8.self).prefix(40)))"
        case .directory: "directory"
        case .link(let destination): "link(\(destination))"
        case .other: "other"
        }
    }
}

/// The tree at `url`: "" for the item itself, then every member by relative path.
func snapshot(_ url: URL) -> [String: DiskEntry] {
    var result: [String: DiskEntry] = [:]
    func visit(_ path: String, _ relative: String) {
        var s = stat()
        guard lstat(path, &s) == 0 else { return }
        switch s.st_mode & S_IFMT {
        case S_IFREG:
            result[relative] = .file(FileManager.default.contents(atPath: path) ?? Data())
        case S_IFLNK:
            result[relative] = .link((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
        case S_IFDIR:
            result[relative] = .directory
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                visit(path + "/" + name, relative.isEmpty ? name : relative + "/" + name)
            }
        default:
            result[relative] = .other
        }
    }
    visit(url.path, "")
    return result
}

/// A temporary folder on a memory file system where there is one (`/dev/shm`), where `fsync`
/// costs nothing: for the suites that save thousands of times.
func fastTemporaryDirectory() throws -> TemporaryDirectory {
    let shm = URL(fileURLWithPath: "/dev/shm")
    if access(shm.path, W_OK) == 0 { return try TemporaryDirectory(prefix: "documentkit-tests", in: shm) }
    return try TemporaryDirectory()
}

/// The `.dk-` names in a folder.
func litter(in directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { $0.contains(TemporaryName.marker) }.sorted()
}

/// `lstat` of a path; fails the test if it fails.
func status(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) -> stat {
    var s = stat()
    let result = lstat(url.path, &s)
    #expect(result == 0, "lstat \(url.path) failed: errno \(errno)", sourceLocation: sourceLocation)
    return s
}

func inode(_ url: URL) -> UInt64 { UInt64(status(url).st_ino) }
func mode(_ url: URL) -> UInt32 { UInt32(status(url).st_mode & 0o7777) }

/// Writes a plain file with `text` (not through DocumentKit).
func put(_ text: String, at url: URL) throws {
    try Data(text.utf8).write(to: url)
}

func read(_ url: URL) -> String? {
    FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) }
}

func file(_ text: String, permissions: UInt32? = nil) -> FileWrapper {
    FileWrapper(regularFileWithContents: Data(text.utf8), permissions: permissions)
}

func folder(_ children: [String: FileWrapper]) -> FileWrapper {
    FileWrapper(directoryWithFileWrappers: children)
}

func text(_ wrapper: FileWrapper?) throws -> String? {
    guard let wrapper else { return nil }
    return String(decoding: try wrapper.regularFileContents, as: UTF8.self)
}

/// A small package with nested folders, used by several suites.
func samplePackage() -> FileWrapper {
    folder([
        "Info.json": file(#"{"format":"sample"}"#),
        "body.md": file("the body"),
        "attachments": folder([
            "a.txt": file("A"),
            "deep": folder(["b.txt": file("B")]),
        ]),
    ])
}

/// Rewrites a file in place (same inode) and sets its modification time back to what it was.
func rewriteInPlaceKeepingModificationTime(_ url: URL, with text: String) throws {
    let before = status(url)
    let fd = open(url.path, O_WRONLY | O_TRUNC)
    #expect(fd >= 0)
    defer { close(fd) }
    let bytes = Array(text.utf8)
    #expect(Glibc.write(fd, bytes, bytes.count) == bytes.count)
    var times = [timespec(tv_sec: before.st_atim.tv_sec, tv_nsec: before.st_atim.tv_nsec),
                 timespec(tv_sec: before.st_mtim.tv_sec, tv_nsec: before.st_mtim.tv_nsec)]
    #expect(futimens(fd, &times) == 0)
    let after = status(url)
    #expect(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_mtim.tv_sec == before.st_mtim.tv_sec)
    #expect(after.st_ino == before.st_ino)
}

/// Replaces a file by a new one (new inode) through rename, as an editor or sync engine does.
func replaceByRename(_ url: URL, with text: String) throws {
    let side = url.deletingLastPathComponent().appendingPathComponent("side-\(UUID().uuidString.prefix(6))")
    try put(text, at: side)
    #expect(rename(side.path, url.path) == 0)
}
