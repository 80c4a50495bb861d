import DocumentKit
import Foundation

extension FormatMatrix {
    /// Checks every cell against the app, through `probe`, on a copy of each fixture (the
    /// fixtures folder is never written to).
    ///
    /// For each cell:
    /// - opening must give the cell's outcome (and message), and write nothing;
    /// - a read-only or refused document must refuse an edit, and stay byte for byte as it was;
    /// - a document that may be written must take an edit, and then open as read-write (no
    ///   longer migrated); members other than ``FormatProbe/editedMembers`` keep their bytes and
    ///   their records; manifest fields the reader reported it doesn't understand keep their
    ///   text; optional features, applied migrations and the versions stay (a migrated document
    ///   is then in the version it was migrated to);
    /// - with a round trip, the round-trip reader sees the document as it did before the edit.
    ///
    /// - Parameter fixtures: The folder the cells' fixture paths are relative to.
    public func run(fixtures: URL, probe: FormatProbe) async -> FormatMatrixReport {
        var report = FormatMatrixReport(checkedCells: 0, failures: [])
        for cell in cells {
            var problems: [String] = []
            do { try await check(cell, fixtures: fixtures, probe: probe, problems: &problems) } catch {
                problems.append("the check failed: \(error)")
            }
            report.checkedCells += 1
            report.failures += problems.map { FormatMatrixReport.Failure(cell: cell, problem: $0) }
        }
        return report
    }

    private func check(_ cell: Cell, fixtures: URL, probe: FormatProbe, problems: inout [String]) async throws {
        let work = try TemporaryDirectory(prefix: "format-matrix")
        let source = fixtures.appendingPathComponent(cell.fixture)
        let document = work.appending(source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: document)
        let original = try PackageSnapshot(document)

        let observed = try await probe.open(document, cell.readerVersion)
        guard observed.outcome == cell.outcome else {
            problems.append("expected \(cell.outcome), got \(observed)")
            return
        }
        if let message = cell.message, !observed.message.contains(message) {
            problems.append("the message doesn't contain “\(message)”: \(observed.message)")
        }
        if try PackageSnapshot(document) != original { problems.append("opening it wrote to it") }

        guard cell.outcome.allowsWriting else {
            if (try? await probe.edit(document, cell.readerVersion)) != nil { problems.append("an edit was saved") }
            if try PackageSnapshot(document) != original { problems.append("the refused edit changed it") }
            return
        }
        let viewBefore = try await cell.roundTripReaderVersion.asyncMap { try await probe.view(document, $0) }
        do { try await probe.edit(document, cell.readerVersion) } catch {
            problems.append("the edit failed: \(error)")
            return
        }
        let reopened = try await probe.open(document, cell.readerVersion)
        if reopened.outcome != .readWrite && reopened.outcome != .readWritePreservingUnknown {
            problems.append("after the edit it opens as \(reopened), not read-write")
        }
        problems += try preservationProblems(
            cell, original: original, edited: PackageSnapshot(document), observed: observed, probe: probe, path: document.path)
        if let version = cell.roundTripReaderVersion, let viewBefore {
            let viewAfter = try await probe.view(document, version)
            if viewAfter != viewBefore {
                problems.append("the reader of version \(version) sees it differently after the edit:\nbefore: \(viewBefore)\nafter:  \(viewAfter)")
            }
        }
    }

    /// What an edit lost of what the document held.
    private func preservationProblems(
        _ cell: Cell, original: PackageSnapshot, edited: PackageSnapshot, observed: FormatProbe.Observation,
        probe: FormatProbe, path: String
    ) throws -> [String] {
        var problems: [String] = []
        let before = try original.manifest(named: probe.manifestName, path: path)
        let after = try edited.manifest(named: probe.manifestName, path: path)
        if case .migrated(let version) = cell.outcome {
            if after.formatVersion != version { problems.append("it was saved in format \(after.formatVersion), not \(version)") }
            if !after.appliedMigrations.starts(with: before.appliedMigrations) {
                problems.append("the applied migrations \(before.appliedMigrations) became \(after.appliedMigrations)")
            }
            return problems
        }
        let changeable = probe.editedMembers(cell.readerVersion).union([probe.manifestName])
        for (member, bytes) in original.files where !changeable.contains(member) {
            guard edited.files[member] == bytes else {
                problems.append("the member “\(member)” was \(edited.files[member] == nil ? "removed" : "changed")")
                continue
            }
            if let record = before.members?[member], after.members?[member] != record {
                problems.append("the record of “\(member)” changed: \(String(describing: after.members?[member]))")
            }
        }
        for field in observed.unrecognizedFields where after.additionalFields[field] != before.additionalFields[field] {
            problems.append("the field “\(field)” it doesn't understand became \(after.additionalFields[field]?.jsonText ?? "nothing")")
        }
        if !after.optionalFeatures.isSuperset(of: before.optionalFeatures) {
            problems.append("optional features were lost: \(before.optionalFeatures.subtracting(after.optionalFeatures).sorted())")
        }
        if after.appliedMigrations != before.appliedMigrations {
            problems.append("the applied migrations \(before.appliedMigrations) became \(after.appliedMigrations)")
        }
        if (after.formatVersion, after.minimumReaderVersion, after.minimumWriterVersion)
            != (before.formatVersion, before.minimumReaderVersion, before.minimumWriterVersion)
        {
            problems.append(
                "the versions (format, reader, writer) changed from \((before.formatVersion, before.minimumReaderVersion, before.minimumWriterVersion)) "
                    + "to \((after.formatVersion, after.minimumReaderVersion, after.minimumWriterVersion))")
        }
        return problems
    }
}

/// Every regular file of a document (a package, or a single file as ""), with its bytes.
struct PackageSnapshot: Equatable {
    var files: [String: Data] = [:]

    init(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else {
            files[""] = try Data(contentsOf: url)
            return
        }
        let root = url.standardizedFileURL.path + "/"
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = enumerator?.nextObject() as? URL {
            guard try item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            files[String(item.standardizedFileURL.path.dropFirst(root.count))] = try Data(contentsOf: item)
        }
    }

    /// The package's manifest.
    func manifest(named name: String, path: String) throws -> DocumentManifest {
        guard let data = files[name] else {
            throw FormatMatrixError(path: path, line: nil, problem: "the document has no manifest “\(name)”")
        }
        return try DocumentManifest(jsonData: data, path: path + "/" + name)
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
