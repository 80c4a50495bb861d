import DocumentKitSystem
import FilePackages
import Foundation

extension DocumentManifest {
    /// Reads a manifest from its JSON text.
    ///
    /// Strict and bounded: at most ``Limits/maximumSize`` bytes of UTF-8, known fields with their
    /// types and ranges, no duplicate keys, nesting at most ``Limits/maximumDepth`` deep. Missing
    /// `minReaderVersion` and `minWriterVersion` read as `formatVersion`; missing feature and
    /// migration lists as empty; a missing `members` as nil.
    ///
    /// - Parameters:
    ///   - data: The manifest's JSON text.
    ///   - path: The file to name in errors (the manifest, or the document holding it).
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `corruptData` naming `path` and the problem, with
    ///   its line and column.
    public init(jsonData data: Data, path: String) throws(DocumentKitError) {
        guard data.count <= Limits.maximumSize else { throw Self.tooLarge(Int64(data.count), path: path) }
        let bytes = [UInt8](data)
        var reader = ManifestReader(bytes)
        do { self = try reader.read() } catch {
            throw DocumentKitError(
                .corruptData, operation: .read, path: path, detail: "The manifest is malformed: \(error.located(in: bytes))")
        }
    }

    /// Reads the manifest member `manifestName` of a package.
    ///
    /// - Parameters:
    ///   - package: The package's tree.
    ///   - manifestName: The manifest member's name.
    ///   - packagePath: The package's path, for errors (they name the manifest inside it).
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `corruptData` if the member is missing, not a
    ///   regular file, too large or malformed; the system's error if it can't be read.
    public init(package: FileWrapper, manifestName: String, packagePath: String) throws(DocumentKitError) {
        let path = packagePath + "/" + manifestName
        guard package.isDirectory else {
            throw DocumentKitError(
                .corruptData, operation: .read, path: packagePath,
                detail: "The document is a single file, not a package with a manifest “\(manifestName)”.")
        }
        guard let member = package[manifestName] else {
            throw DocumentKitError(.corruptData, operation: .read, path: path, detail: "The package has no manifest.")
        }
        guard member.isRegularFile, let size = member.regularFileSize else {
            throw DocumentKitError(
                .corruptData, operation: .read, path: path, detail: "The manifest is a \(member.kind), not a file.")
        }
        guard size <= Limits.maximumSize else { throw Self.tooLarge(size, path: path) }
        try self.init(jsonData: member.regularFileContents, path: path)
    }

    private static func tooLarge(_ size: Int64, path: String) -> DocumentKitError {
        DocumentKitError(
            .corruptData, operation: .read, path: path,
            detail: "The manifest is \(size) bytes, more than the limit of \(Limits.maximumSize) (8 MiB).")
    }

    /// The manifest as JSON text, written the one way the specification describes (sorted keys,
    /// stable layout), so that the same manifest always gives the same bytes.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `invalidArgument` if a value breaks the
    ///   specification's rules (a reader would refuse it), naming the value.
    public func jsonData() throws(DocumentKitError) -> Data {
        if let problem = valuesProblem ?? relationsProblem {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: "(manifest of \(documentIdentifier))",
                detail: "The manifest can't be written: \(problem).")
        }
        let bytes = JSONWriter.write(output)
        guard bytes.count <= Limits.maximumSize else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: "(manifest of \(documentIdentifier))",
                detail: "The manifest would be \(bytes.count) bytes, more than the limit of \(Limits.maximumSize).")
        }
        return Data(bytes)
    }

    private var output: JSONOutput {
        var fields = additionalFields.mapValues { JSONOutput.raw($0.jsonText) }
        fields["format"] = .string(formatIdentifier)
        fields["formatVersion"] = .integer(Int64(formatVersion))
        fields["minReaderVersion"] = .integer(Int64(minimumReaderVersion))
        fields["minWriterVersion"] = .integer(Int64(minimumWriterVersion))
        fields["requiredFeatures"] = Self.sortedList(requiredFeatures)
        fields["optionalFeatures"] = Self.sortedList(optionalFeatures)
        var writerFields = writer.additionalFields.mapValues { JSONOutput.raw($0.jsonText) }
        writerFields["name"] = .string(writer.name)
        writerFields["version"] = .string(writer.version)
        fields["writer"] = .object(writerFields)
        fields["documentIdentifier"] = .string(documentIdentifier)
        if let members {
            fields["members"] = .sortedObject(
                members.sorted { JSONWriter.precedes($0.key, $1.key) }.map { path, record in
                    guard record.additionalFields.isEmpty else {
                        var recordFields = record.additionalFields.mapValues { JSONOutput.raw($0.jsonText) }
                        recordFields["size"] = .integer(record.size)
                        recordFields["sha256"] = .string(record.sha256)
                        return (path, .object(recordFields))
                    }
                    // The common record, its two keys in their order ("sha256" < "size").
                    return (path, .sortedObject([("sha256", .string(record.sha256)), ("size", .integer(record.size))]))
                })
        }
        fields["appliedMigrations"] = .array(appliedMigrations.map { .string($0) })
        return .object(fields)
    }

    private static func sortedList(_ names: Set<String>) -> JSONOutput {
        .array(names.sorted(by: JSONWriter.precedes).map { .string($0) })
    }

    // MARK: Rules

    /// What is wrong with the relations between fields, or nil.
    var relationsProblem: String? {
        if minimumReaderVersion > formatVersion {
            return "“minReaderVersion” (\(minimumReaderVersion)) is higher than “formatVersion” (\(formatVersion))"
        }
        if minimumWriterVersion > formatVersion {
            return "“minWriterVersion” (\(minimumWriterVersion)) is higher than “formatVersion” (\(formatVersion))"
        }
        if minimumWriterVersion < minimumReaderVersion {
            return "“minWriterVersion” (\(minimumWriterVersion)) is lower than “minReaderVersion” (\(minimumReaderVersion))"
        }
        if let both = requiredFeatures.intersection(optionalFeatures).min() {
            return "the feature “\(excerpt(both))” is both required and optional"
        }
        return nil
    }

    /// What is wrong with a single value, or nil (the rules the reader applies while reading).
    var valuesProblem: String? {
        typealias Rules = ManifestRules
        var problems: [String?] = [
            Rules.formatIdentifierProblem(formatIdentifier).map { "“format” \($0)" },
            Rules.versionProblem(formatVersion).map { "“formatVersion” \($0)" },
            Rules.versionProblem(minimumReaderVersion).map { "“minReaderVersion” \($0)" },
            Rules.versionProblem(minimumWriterVersion).map { "“minWriterVersion” \($0)" },
            Rules.nameProblem(writer.name).map { "“writer.name” \($0)" },
            Rules.nameProblem(writer.version).map { "“writer.version” \($0)" },
            Rules.nameProblem(documentIdentifier).map { "“documentIdentifier” \($0)" },
        ]
        if requiredFeatures.count > Limits.maximumFeatures || optionalFeatures.count > Limits.maximumFeatures {
            problems.append("more than \(Limits.maximumFeatures) features in a list")
        }
        if appliedMigrations.count > Limits.maximumMigrations || Set(appliedMigrations).count != appliedMigrations.count {
            problems.append("“appliedMigrations” has duplicates or more than \(Limits.maximumMigrations) entries")
        }
        for name in requiredFeatures.union(optionalFeatures).union(appliedMigrations) {
            problems.append(Rules.nameProblem(name).map { "the feature or migration “\(excerpt(name))” \($0)" })
        }
        if additionalFields.count > Limits.maximumAdditionalFields {
            problems.append("more than \(Limits.maximumAdditionalFields) additional fields")
        }
        for key in additionalFields.keys {
            problems.append(Rules.additionalKeyProblem(key).map { "the field name “\(excerpt(key))” \($0)" })
        }
        if writer.additionalFields.keys.contains(where: { $0 == "name" || $0 == "version" }) {
            problems.append("“writer” has “name” or “version” among its additional fields")
        }
        if let members {
            if members.count > Limits.maximumMembers { problems.append("more than \(Limits.maximumMembers) members") }
            for (path, record) in members {
                problems.append(Rules.memberPathProblem(path).map { "the member path “\(excerpt(path))” \($0)" })
                problems.append(Rules.digestProblem(record.sha256).map { "the sha256 of “\(excerpt(path))” \($0)" })
                problems.append(Rules.sizeProblem(record.size).map { "the size of “\(excerpt(path))” \($0)" })
                if record.additionalFields.keys.contains(where: { $0 == "size" || $0 == "sha256" }) {
                    problems.append("the record of “\(excerpt(path))” has “size” or “sha256” among its additional fields")
                }
            }
        }
        return problems.lazy.compactMap { $0 }.first
    }
}
