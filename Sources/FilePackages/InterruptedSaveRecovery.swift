#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Logging
import Synchronization

/// Finds what interrupted saves left in a folder and puts things right.
///
/// Every temporary item of a save is named `.<item>.dk-<purpose>-<random>` and is locked
/// (`flock`) by the process saving, for as long as it works on it. A crash, even `SIGKILL`,
/// releases the lock. So an unlocked temporary item is litter from a dead save: it is removed.
/// A rename intent (`.<item>.dk-intent`, written by the fallback swap on file systems without
/// `RENAME_EXCHANGE`) is completed first, so the item is never left missing.
///
/// An item still being created (`.<item>.dk-born-…`, see ``TemporaryItem``) is not locked yet: it
/// is left alone, not even locked for a moment (its owner's own lock would fail), until it is
/// older than ``TemporaryItem/bornItemGracePeriod``.
package struct InterruptedSaveRecovery {
    /// What a pass did.
    package struct Report: Sendable, Equatable {
        /// Temporary items removed.
        package var removed: [String] = []
        /// Items whose interrupted fallback swap was completed (rolled forward or back).
        package var recovered: [String] = []
        /// Temporary items left alone because a live process holds them.
        package var busy: [String] = []
    }

    package let fileSystem: FileSystem
    /// How old an unlocked item that is being created must be to be taken for litter.
    package let bornItemGracePeriod: Int64
    private static let logger = Logger(label: "DocumentKit.recovery")

    package init(fileSystem: FileSystem, bornItemGracePeriod: Int64 = TemporaryItem.bornItemGracePeriod) {
        self.fileSystem = fileSystem
        self.bornItemGracePeriod = bornItemGracePeriod
    }

    /// Whether `name` is one of DocumentKit's temporary names.
    package static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), let range = name.range(of: TemporaryName.marker, options: .backwards) else {
            return false
        }
        let rest = name[range.upperBound...]
        if rest == "intent" { return true }
        for purpose in ["new-", "old-", "tmp-", TemporaryItem.bornPurpose + "-"] where rest.hasPrefix(purpose) {
            return rest.count == purpose.count + 12
        }
        return false
    }

    /// Runs one pass over the folder `directory` (an open descriptor; `path` is for messages).
    /// `itemPath`, the item about to be read or saved, is what a failure to list the folder names.
    package func run(in directory: CInt, path: String, itemPath: String? = nil) throws(DocumentKitError) -> Report {
        var report = Report()
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(directory, name: path) } catch {
            throw DocumentKitError(
                error, operation: .recover, path: itemPath ?? path,
                step: itemPath == nil ? "listing the folder" : "listing its folder “\(path)” for interrupted saves")
        }
        let candidates = names.filter(Self.isTemporaryName)
        if candidates.isEmpty { return report }
        var protected: Set<String> = []
        for intent in candidates where intent.hasSuffix(TemporaryName.marker + "intent") {
            try completeIntent(
                intent, in: directory, path: path, candidates: candidates, report: &report, protected: &protected)
        }
        for name in candidates where !name.hasSuffix(TemporaryName.marker + "intent") && !protected.contains(name) {
            removeIfAbandoned(name, in: directory, path: path, report: &report)
        }
        if !report.removed.isEmpty || !report.recovered.isEmpty {
            Self.logger.notice("Cleaned up after interrupted saves in \(path): removed \(report.removed), recovered \(report.recovered)")
        }
        return report
    }

    /// Completes the interrupted fallback swap of the item `name` in `directory`, if its rename
    /// intent is there: one `fstatat` when it isn't. What an open or save of an item in a large
    /// folder does instead of a pass over the whole folder (see ``LeftoverCleaner``).
    package func completeIntent(ofItemNamed name: String, in directory: CInt, path: String) throws(DocumentKitError) -> Report {
        var report = Report()
        let intent = TemporaryName.prefix(for: name) + "intent"
        do { _ = try fileSystem.status(of: intent, in: directory) } catch {
            if error == .noSuchFileOrDirectory { return report }
            throw DocumentKitError(error, operation: .recover, path: path + "/" + name, step: "looking for its rename intent “\(intent)”")
        }
        var protected: Set<String> = []
        try completeIntent(intent, in: directory, path: path, candidates: [], report: &report, protected: &protected)
        if !report.recovered.isEmpty { Self.logger.notice("Completed an interrupted save in \(path): recovered \(report.recovered)") }
        return report
    }

    private func removeIfAbandoned(_ name: String, in directory: CInt, path: String, report: inout Report) {
        do {
            let fd = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            defer { Glibc.close(fd) }
            if Self.isBeingCreated(name), try isYoung(fd, name: name) {
                report.busy.append(name)
                return
            }
            do { try fileSystem.lockExclusivelyWithoutWaiting(fd, name: name) } catch {
                if error == .wouldBlock { report.busy.append(name); return }
                throw error
            }
            try removeItem(name, in: directory, using: fileSystem)
            report.removed.append(name)
        } catch .tooManySymbolicLinkLevels {
            // A temporary symbolic link (from saving a link): it cannot be locked; remove it.
            if (try? fileSystem.unlink(name, in: directory)) != nil { report.removed.append(name) }
        } catch .noSuchFileOrDirectory {
            // Someone else removed it first.
        } catch {
            Self.logger.warning("Could not remove leftover “\(path)/\(name)”: \(error)")
        }
    }

    /// Whether `name` is an item that is being created and is not locked yet (``TemporaryItem``).
    package static func isBeingCreated(_ name: String) -> Bool {
        name.range(of: TemporaryName.marker + TemporaryItem.bornPurpose + "-", options: .backwards) != nil
    }

    /// Whether the open item `fd` changed status less than ``bornItemGracePeriod`` ago.
    private func isYoung(_ fd: CInt, name: String) throws(Errno) -> Bool {
        let status = try fileSystem.status(of: fd, name: name)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nowNanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        // A time ahead of the clock (another machine's, a clock set back) counts as young.
        return nowNanoseconds < status.changeTime + bornItemGracePeriod
    }

    private func completeIntent(
        _ intent: String, in directory: CInt, path: String, candidates: [String], report: inout Report,
        protected: inout Set<String>
    ) throws(DocumentKitError) {
        let item = String(intent.dropFirst().dropLast((TemporaryName.marker + "intent").count))
        let itemPath = path + "/" + item
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .recover, path: itemPath, step: step)
        }
        let fd: CInt
        do { fd = try fileSystem.open(intent, in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error == .noSuchFileOrDirectory { return }
            throw fail(error, "opening the rename intent “\(intent)”")
        }
        defer { Glibc.close(fd) }
        do { try fileSystem.lockExclusivelyWithoutWaiting(fd, name: intent) } catch {
            if error == .wouldBlock {
                report.busy.append(intent)
                let prefix = TemporaryName.prefix(for: item)
                protected.formUnion(candidates.filter { $0.hasPrefix(prefix) })
                return
            }
            throw fail(error, "locking the rename intent “\(intent)”")
        }
        let record: RenameIntent
        do {
            let data = try readAll(fd, size: 256, name: intent, using: fileSystem)
            guard let parsed = RenameIntent(data: data, item: item) else {
                throw DocumentKitError(
                    .corruptData, operation: .recover, path: itemPath,
                    detail: "The rename intent “\(intent)” is malformed; remove it by hand after checking “\(item)”.")
            }
            record = parsed
        } catch let error as Errno { throw fail(error, "reading the rename intent “\(intent)”") }
        catch let error as DocumentKitError { throw error }
        catch { throw fail(.ioError, "reading the rename intent") }

        let exists = { (name: String) -> Bool in (try? self.fileSystem.status(of: name, in: directory)) != nil }
        do {
            // Whether the item at the name is another one than the intent's trees: one made after
            // a crash between the two renames (the old tree went aside, the new one never reached
            // the name), or one that took the name meanwhile. With the old tree still at the name
            // (a crash before the first rename) there are not both trees aside.
            var madeByOthers = exists(item) && exists(record.newName) && exists(record.oldName)
            if !exists(item) {
                // Interrupted between the two renames: the new tree is complete (it was built and
                // flushed before the intent was written), so roll forward; else roll back.
                let source = exists(record.newName) ? record.newName : exists(record.oldName) ? record.oldName : nil
                do {
                    if let source { try renameWithoutReplacing(source, to: item, in: directory) }
                    try fileSystem.synchronizeDirectory(directory, name: path)
                    report.recovered.append(item)
                } catch .fileExists {
                    madeByOthers = true
                }
            }
            if madeByOthers {
                // Both the intent's trees are kept, under visible names: the new one holds the
                // last save, the old one the version before it. Never removed.
                let kept = try keepUnderRecoveryNames(record, of: item, in: directory, path: path)
                try fileSystem.synchronizeDirectory(directory, name: path)
                Self.logger.warning(
                    "“\(itemPath)” was made again after a save of it was interrupted; that save's trees are kept as \(kept.map { "“\($0)”" }.joined(separator: " and "))")
                report.recovered.append(contentsOf: kept)
            }
            for leftover in [record.newName, record.oldName] where exists(leftover) {
                try removeItem(leftover, in: directory, using: fileSystem)
                report.removed.append(leftover)
            }
            try fileSystem.unlink(intent, in: directory)
            report.removed.append(intent)
        } catch {
            throw fail(error, "completing the interrupted save recorded in “\(intent)”")
        }
    }
}

extension InterruptedSaveRecovery {
    /// Renames the trees of `record` that exist to visible names beside `item` — `NAME (recovered
    /// DATE).EXT` for the new tree, `NAME (recovered DATE, previous).EXT` for the old one — never
    /// replacing anything. Returns the names given.
    fileprivate func keepUnderRecoveryNames(
        _ record: RenameIntent, of item: String, in directory: CInt, path: String
    ) throws(Errno) -> [String] {
        var kept: [String] = []
        let stamp = Self.recoveryStamp()
        for (tree, label) in [(record.newName, stamp), (record.oldName, stamp + ", previous")] {
            guard (try? fileSystem.status(of: tree, in: directory)) != nil else { continue }
            var attempt = 1
            while true {
                let name = Self.recoveryName(for: item, label: attempt == 1 ? label : "\(label) \(attempt)")
                do {
                    try renameWithoutReplacing(tree, to: name, in: directory)
                    kept.append(name)
                    break
                } catch .fileExists {
                    attempt += 1
                }
            }
        }
        return kept
    }

    /// Renames `name` to `newName` in `directory`, failing with `EEXIST` if `newName` exists
    /// (where `RENAME_NOREPLACE` is unsupported: checked first, then renamed).
    fileprivate func renameWithoutReplacing(_ name: String, to newName: String, in directory: CInt) throws(Errno) {
        do { try fileSystem.renameWithoutReplacing(name, in: directory, to: newName, in: directory) } catch {
            guard AtomicReplacement.isUnsupported(error) else { throw error }
            if (try? fileSystem.status(of: newName, in: directory)) != nil { throw .fileExists }
            try fileSystem.rename(name, in: directory, to: newName, in: directory)
        }
    }

    /// `Notes.note` → `Notes (recovered LABEL).note`; a name without extension gets none.
    static func recoveryName(for item: String, label: String) -> String {
        if let dot = item.lastIndex(of: "."), dot != item.startIndex {
            return "\(item[..<dot]) (recovered \(label))\(item[dot...])"
        }
        return "\(item) (recovered \(label))"
    }

    /// The current UTC time as `2026-11-24 211503`.
    static func recoveryStamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
    }
}

/// The record the fallback swap writes before it renames anything.
package struct RenameIntent: Equatable {
    package var newName: String
    package var oldName: String

    package init(newName: String, oldName: String) {
        self.newName = newName
        self.oldName = oldName
    }

    /// Parses the record; nil if it is malformed or names items that don't belong to `item`.
    package init?(data: Data, item: String) {
        let text = String(decoding: data, as: UTF8.self)
        var fields: [String: String] = [:]
        let lines = text.split(separator: "\n")
        guard lines.first.map(String.init) == Self.header else { return nil }
        for line in lines.dropFirst() {
            guard let equals = line.firstIndex(of: "=") else { return nil }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let newName = fields["new"], let oldName = fields["old"] else { return nil }
        let prefix = TemporaryName.prefix(for: item)
        guard newName.hasPrefix(prefix), oldName.hasPrefix(prefix), !newName.contains("/"), !oldName.contains("/")
        else { return nil }
        self.newName = newName
        self.oldName = oldName
    }

    static let header = "DocumentKit rename intent 1"

    /// The bytes written to disk.
    package var data: Data { Data("\(Self.header)\nnew=\(newName)\nold=\(oldName)\n".utf8) }
}
