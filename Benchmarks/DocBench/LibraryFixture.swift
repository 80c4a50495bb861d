#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation

/// Generated notes libraries of N notes for `docbench library`, cached under
/// `<cache>/v<generator>-<N>` so that reruns don't write them again.
///
/// Every note is a valid package of the current notes format, as `notes new` writes it: the
/// generator has `notes new` write one note (the template) in a scratch library, then stamps
/// copies of its two members, `Info.json` and `body.json`, with another title, document
/// identifier, creation date, body, and the body's SHA-256. Every stamped value has the width of
/// the template's, so the sizes in the manifest stay right. Note `i` is titled
/// `Bench note 000042` (package `bench-note-000042.note`), tagged `bench`, its body one line
/// `Note 000042 of the bench library.` A sample of every library is checked with `notes check`.
struct LibraryFixture {
    /// Changes whenever the generated libraries change: a cached library of another version is
    /// not used.
    static let generatorVersion = 1
    static let titlePrefix = "Bench note "

    /// Where libraries are cached (`.build-bench/libraries` by default).
    let cacheFolder: String
    let notes: ChildProcess
    /// A scratch folder for the template and the samples.
    let scratch: String

    /// The title of note `i`.
    static func title(_ i: Int) -> String { titlePrefix + padded(i) }

    /// The body of note `i`, one line.
    static func body(_ i: Int) -> String { "Note \(padded(i)) of the bench library." }

    static func padded(_ i: Int) -> String {
        let digits = String(i)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The package name of note `i`.
    static func packageName(_ i: Int) -> String { "bench-note-\(padded(i)).note" }

    /// The cached library of `count` notes, generated (and checked) first if missing.
    func library(count: Int) throws -> String {
        precondition(count >= 1 && count <= 999_999, "the generator numbers notes with six digits")
        let final = "\(cacheFolder)/v\(Self.generatorVersion)-\(count)"
        if access(final, F_OK) == 0 { return final }
        try FileManager.default.createDirectory(atPath: cacheFolder, withIntermediateDirectories: true)
        let building = final + ".building"
        try? FileManager.default.removeItem(atPath: building)
        let template = try makeTemplate()
        progress("docbench library: generating \(count) notes in \(final)")
        let started = now()
        try check(mkdir(building, 0o755), "mkdir \(building)")
        let folder = try check(open(building, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open \(building)")
        defer { close(folder) }
        for i in 0..<count {
            try template.write(note: i, into: folder, path: building)
            if i % 20_000 == 19_999 { progress("docbench library: \(i + 1) notes") }
        }
        _ = dk_syncfs(folder)
        progress("docbench library: \(count) notes written in \(formatDuration(now() - started))")
        try checkSample(of: building, count: count)
        try check(rename(building, final), "rename \(building)")
        return final
    }

    // MARK: The template

    /// The two members of note 0 as `notes new` wrote them, and where the per-note values sit.
    struct Template {
        let info: String
        let body: String
        let identifier: String
        let created: String
        let bodyDigest: String
        let packageMode: mode_t
        let memberMode: mode_t

        /// Writes note `i` into the folder `folder` (at `path`, for messages).
        func write(note i: Int, into folder: CInt, path: String) throws {
            let body = self.body.replacingOccurrences(of: LibraryFixture.body(0), with: LibraryFixture.body(i))
            let bodyBytes = Array(body.utf8)
            let digest = bodyBytes.withUnsafeBytes { MemberHasher.sha256(of: $0) }
            // Deterministic per note, so that a regenerated library is the same library.
            let identifier = String(format: "%08X-0000-4000-8000-%012X", LibraryFixture.generatorVersion, i)
            let created = String(format: "2026-01-01T%02d:%02d:%02dZ", (i / 3600) % 24, (i / 60) % 60, i % 60)
            let info = self.info
                .replacingOccurrences(of: "\"\(LibraryFixture.title(0))\"", with: "\"\(LibraryFixture.title(i))\"")
                .replacingOccurrences(of: self.identifier, with: identifier)
                .replacingOccurrences(of: "\"\(self.created)\"", with: "\"\(created)\"")
                .replacingOccurrences(of: bodyDigest, with: digest)
            let package = LibraryFixture.packageName(i)
            try check(mkdirat(folder, package, packageMode), "mkdir \(path)/\(package)")
            let packageFD = try check(openat(folder, package, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open \(path)/\(package)")
            defer { close(packageFD) }
            try Self.create(NoteMembers.blocks, bytes: bodyBytes, in: packageFD, mode: memberMode, path: path + "/" + package)
            try Self.create(NoteMembers.manifest, bytes: Array(info.utf8), in: packageFD, mode: memberMode, path: path + "/" + package)
        }

        private static func create(_ name: String, bytes: [UInt8], in folder: CInt, mode: mode_t, path: String) throws {
            let fd = try check(openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode), "create \(path)/\(name)")
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress!, raw.count) }
            guard written == bytes.count else { try check(-1, "write \(path)/\(name)"); return }
        }
    }

    /// Has `notes new` write note 0 in a scratch library and reads it back.
    func makeTemplate() throws -> Template {
        let library = scratch + "/template-library"
        try? FileManager.default.removeItem(atPath: library)
        try notes.run(["init", "--library", library])
        try notes.run(["new", LibraryFixture.title(0), "--library", library, "--body", LibraryFixture.body(0), "--tag", "bench"])
        let package = library + "/" + LibraryFixture.packageName(0)
        let names = try FileManager.default.contentsOfDirectory(atPath: package).sorted()
        guard names == [NoteMembers.manifest, NoteMembers.blocks].sorted() else {
            throw BenchError(description: "`notes new` wrote \(names) in \(package), not Info.json and body.json: update the generator")
        }
        let info = try String(contentsOfFile: package + "/" + NoteMembers.manifest, encoding: .utf8)
        let body = try String(contentsOfFile: package + "/" + NoteMembers.blocks, encoding: .utf8)
        guard let fields = try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any],
            let identifier = fields["documentIdentifier"] as? String, let created = fields["created"] as? String,
            fields["formatVersion"] as? Int == 3, fields["title"] as? String == LibraryFixture.title(0),
            let members = fields["members"] as? [String: Any], let bodyRecord = members[NoteMembers.blocks] as? [String: Any],
            let bodyDigest = bodyRecord["sha256"] as? String, bodyRecord["size"] as? Int == body.utf8.count,
            body.contains(LibraryFixture.body(0)), info.components(separatedBy: identifier).count == 2,
            info.components(separatedBy: bodyDigest).count == 2, created.count == 20
        else {
            throw BenchError(description: "the template note \(package) is not the format-3 note the generator expects:\n\(info)")
        }
        var packageStat = stat()
        var memberStat = stat()
        try check(stat(package, &packageStat), "stat \(package)")
        try check(stat(package + "/" + NoteMembers.blocks, &memberStat), "stat \(package)/\(NoteMembers.blocks)")
        return Template(
            info: info, body: body, identifier: identifier, created: created, bodyDigest: bodyDigest,
            packageMode: packageStat.st_mode & 0o7777, memberMode: memberStat.st_mode & 0o7777)
    }

    // MARK: Checking

    /// Runs `notes check --json` on a sample of the library (all of it up to 25 notes, else 25
    /// spread over it, hard-linked into a scratch library): every note must open read-write with
    /// its members matching its manifest.
    func checkSample(of library: String, count: Int) throws {
        let sampleSize = min(count, 25)
        let picked = Array(Set((0..<sampleSize).map { $0 * (count - 1) / max(1, sampleSize - 1) })).sorted()
        let sample = scratch + "/sample-\(count)"
        try? FileManager.default.removeItem(atPath: sample)
        try FileManager.default.createDirectory(atPath: sample, withIntermediateDirectories: true)
        for i in picked {
            let name = LibraryFixture.packageName(i)
            try check(mkdir(sample + "/" + name, 0o755), "mkdir \(sample)/\(name)")
            for member in [NoteMembers.manifest, NoteMembers.blocks] {
                try check(link("\(library)/\(name)/\(member)", "\(sample)/\(name)/\(member)"), "link \(name)/\(member)")
            }
        }
        let run = try notes.spawn(["check", "--json", "--library", sample], captureOutput: true)
        guard let checks = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]] else {
            throw BenchError(description: "`notes check --json` on \(sample) (exit \(run.status)): not a JSON array: \(run.output)\(run.errors)")
        }
        let good = checks.filter { check in
            let members = check["members"] as? [String: Any]
            return check["outcome"] as? String == "read-write" && members?["listed"] as? Int == 1 && members?["matching"] as? Int == 1
                && (members?["unlisted"] as? [Any])?.isEmpty == true
                && (check["title"] as? String).map { $0.hasPrefix(LibraryFixture.titlePrefix) } == true
        }
        guard run.status == 0, checks.count == picked.count, good.count == picked.count else {
            throw BenchError(description: "`notes check` refuses generated notes in \(sample) (exit \(run.status)):\n\(run.output)\(run.errors)")
        }
        progress("docbench library: `notes check` passes on \(picked.count) sampled notes of \(count)")
        try? FileManager.default.removeItem(atPath: sample)
    }
}

/// The names of the two members of a generated note, as the notes app spells them (docbench
/// can't import the app).
enum NoteMembers {
    static let manifest = "Info.json"
    static let blocks = "body.json"
}
