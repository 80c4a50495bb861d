#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitSystem
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

/// Folders of thousands of entries with names of every length, read through the one seam.
@Suite struct LargeFolderTests {
    /// `count` distinct names of lengths 1 to 255 bytes (the longest a name may be).
    static func variedNames(_ count: Int) -> [String] {
        (0..<count).map { index in
            let stem = String(index, radix: 36)  // no "_": the stem ends where the padding starts
            let length = max(stem.count, 1 + index % 255)
            return stem + String(repeating: "_", count: length - stem.count)
        }
    }

    @Test func aReaddirRecordEndingAPageIsReadWithoutRunningOffTheEnd() throws {
        // A record is only as long as its name: the last one in readdir's buffer can end right
        // before an unmapped page. Copying the 256-byte d_name field would fault there.
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let base = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        #expect(base != MAP_FAILED)
        defer { munmap(base, 2 * page) }
        #expect(mprotect(base + page, page, PROT_NONE) == 0)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let recordLength = (nameOffset + 3 + 7) & ~7  // "ab" and its NUL, rounded up like the kernel's
        let record = base + page - recordLength
        record.storeBytes(of: UInt16(recordLength), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!, as: UInt16.self)
        record.storeBytes(of: ino_t(42), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_ino)!, as: ino_t.self)
        for (index, byte) in "ab\0".utf8.enumerated() {
            record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self)
        }
        let entry = UnsafePointer(record.assumingMemoryBound(to: dirent.self))
        #expect(DirectoryEntry.name(of: entry) == "ab")
        #expect(DirectoryEntry.validatedName(of: entry) == "ab")
        #expect(DirectoryEntry.inode(of: entry) == 42)
    }

    @Test func aFolderOfFiveThousandNamesOfEveryLengthListsCompletely() throws {
        let directory = try fastTemporaryDirectory()
        let names = Self.variedNames(5_000)
        let fd = open(directory.url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        for name in names {
            let file = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            try #require(file >= 0, "creating \(name.count)-byte name: errno \(errno)")
            close(file)
        }
        let listed = try FileSystem.live.contentsOfDirectory(fd, name: directory.url.path, rejectingInvalidUTF8: true)
        #expect(listed.count == names.count)
        #expect(Set(listed) == Set(names))

        // Recovery lists the folder of every item read or saved; it finds its leftovers among them.
        let leftover = TemporaryName.prefix(for: names[0]) + "tmp-0123456789ab"
        #expect(mkdirat(fd, leftover, 0o755) == 0)
        let report = try InterruptedSaveRecovery(fileSystem: .live).run(in: fd, path: directory.url.path)
        #expect(report.removed == [leftover])
        #expect(Set(try FileSystem.live.contentsOfDirectory(fd, name: directory.url.path)) == Set(names))
    }

    @Test func aPackageOfFiveThousandMembersWithNamesOfEveryLengthSavesAndReadsBack() throws {
        let directory = try fastTemporaryDirectory()
        let url = directory.appending("Big.pkg")
        let names = Self.variedNames(5_000)
        var members: [String: FileWrapper] = [:]
        for name in names { members[name] = file(String(name.count)) }
        _ = try FileWrapper(directoryWithFileWrappers: members).write(to: url)

        var tree = try FileWrapper(contentsOf: url)
        #expect(Set(tree.fileWrappers?.keys ?? [:].keys) == Set(names))
        tree[names[7]] = file("changed")  // the others are shared with the new tree
        _ = try tree.write(to: url)
        let reread = try FileWrapper(contentsOf: url)
        #expect(reread.fileWrappers?.count == names.count)
        #expect(try reread[names[7]]?.regularFileContents == Data("changed".utf8))
        #expect(try reread[names[300]]?.regularFileContents == Data(String(names[300].count).utf8))
        #expect(litter(in: directory.url).isEmpty)
    }
}
