#if canImport(Glibc)
import Glibc
#endif
import CDispatch  // Glibc's `stat` comes through it once `notes` (with SwiftNIO) is imported by another file of these tests
import DocumentKitTesting
import Foundation
import Testing

/// Issue #13 §1: another local user attacks the victim's per-user state, as a real second user
/// (`dk-neighbour`, through `setpriv`), in a sticky `1777` folder of the test's that both use as
/// `TMPDIR`, with `XDG_RUNTIME_DIR` and `XDG_STATE_HOME` unset and no usable home: the fallback
/// folders `$TMPDIR/documentkit-<uid>` and `$TMPDIR/DocumentKit-drafts-<uid>`. The victim is
/// root running `notes` or `dk-coordination-child`.
@Suite(.enabled(if: Neighbour.isAvailable, Neighbour.reason), .serialized)
struct PerUserStateTests {
    let shared: TemporaryDirectory
    /// The sticky folder: `TMPDIR` of the victim and the neighbour.
    let tmp: URL
    let notes: NotesRunner

    init() throws {
        shared = try TemporaryDirectory(prefix: "dk-per-user")
        #expect(chmod(shared.url.path, 0o755) == 0)
        tmp = shared.appending("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: false)
        #expect(chmod(tmp.path, 0o1777) == 0)
        notes = NotesRunner(library: tmp.appendingPathComponent("library"))
        try notes.ok(["init"])
    }

    /// The victim's environment: only the fallback folders are left.
    var victimEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["XDG_RUNTIME_DIR", "XDG_STATE_HOME", "DOCUMENTKIT_COORDINATION_DIR", "NOTES_LIBRARY"] {
            environment.removeValue(forKey: name)
        }
        environment["TMPDIR"] = tmp.path
        environment["HOME"] = "/nonexistent-dk-home"
        return environment
    }

    /// The victim's default namespace folder.
    var namespaceFolder: String { tmp.path + "/documentkit-\(geteuid())" }

    /// Runs `notes ARGS` as the victim (killed if it takes 20 s: a hang).
    fileprivate func victim(_ arguments: [String]) throws -> Spawned.Result {
        try Spawned(
            NotesRunner.executable.path, arguments + ["--library", notes.library.path], environment: victimEnvironment,
            folder: shared.url
        ).finish(killingAfter: 20)
    }

    /// Creates the note `title` through a namespace of the victim's own (not the default one).
    func makeNote(_ title: String) throws {
        var environment = victimEnvironment
        environment["DOCUMENTKIT_COORDINATION_DIR"] = shared.appending("setup-namespace").path
        let result = try Spawned(
            NotesRunner.executable.path, ["new", title, "--body", "secret", "--library", notes.library.path],
            environment: environment, folder: shared.url
        ).finish(killingAfter: 20)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("A namespace folder another user made (mode 0777) is refused at once, naming it, and nothing is written there")
    func plantedNamespaceFolderIsRefused() throws {
        try #require(Neighbour.shell("mkdir -m 0777 \(namespaceFolder)", tmp: tmp).status == 0)
        let result = try victim(["new", "Diary", "--body", "secret"])
        #expect(!result.hung)
        #expect(result.status == 77, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains(namespaceFolder) && result.stderr.contains("owned by dk-neighbour (uid \(Neighbour.ids!.uid))"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: namespaceFolder).isEmpty)
        // The same folder named explicitly is verified the same way.
        var environment = victimEnvironment
        environment["DOCUMENTKIT_COORDINATION_DIR"] = namespaceFolder
        let explicit = try Spawned(
            NotesRunner.executable.path, ["new", "Diary", "--library", notes.library.path], environment: environment, folder: shared.url
        ).finish(killingAfter: 20)
        #expect(explicit.status == 77 && explicit.stderr.contains(namespaceFolder), "\(explicit.status) \(explicit.stderr)")
    }

    @Test("A namespace folder that is a symbolic link to another user's folder is refused, and nothing is written there")
    func symbolicLinkNamespaceIsRefused() throws {
        let theirs = tmp.path + "/neighbours-folder"
        try #require(Neighbour.shell("mkdir -m 0777 \(theirs) && ln -s \(theirs) \(namespaceFolder)", tmp: tmp).status == 0)
        let result = try victim(["new", "Diary", "--body", "secret"])
        #expect(result.status == 77, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains(namespaceFolder) && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)
    }

    @Test("A lock another user holds on a planted lock file can't hang the victim: it is refused while the lock is still held")
    func plantedLockFileCantHang() throws {
        let locks = namespaceFolder + "/locks"
        try #require(Neighbour.shell("mkdir -m 0777 \(namespaceFolder) && touch \(locks) && chmod 0666 \(locks)", tmp: tmp).status == 0)
        let holder = try Neighbour.spawn([NotesRunner.coordinationChild.path, "lock-file", locks], tmp: tmp, folder: shared.url)
        defer { _ = holder.finish(killingAfter: 0) }
        try #require(holder.waitForLine("locked", seconds: 20), "the neighbour's lock: \(holder.output)")
        let result = try victim(["new", "Diary", "--body", "secret"])
        #expect(!result.hung, "the victim waited for the neighbour's lock")
        #expect(holder.isRunning, "the neighbour's lock ended before the victim did")
        #expect(result.status == 77 && result.stderr.contains(namespaceFolder), "\(result.status) \(result.stderr)")
    }

    @Test("Another user can't rename the victim's lock file away, nor the namespace folder")
    func lockFileCantBeRenamedAway() throws {
        // The attack: the neighbour makes the folder first, the victim uses it, the neighbour renames `locks`.
        try #require(Neighbour.shell("mkdir -m 0777 \(namespaceFolder)", tmp: tmp).status == 0)
        _ = try victim(["new", "Diary", "--body", "secret"])
        #expect(Neighbour.shell("mv \(namespaceFolder)/locks \(tmp.path)/stolen", tmp: tmp).status != 0)
        // The victim's own folder, once the neighbour's is gone.
        try #require(Neighbour.shell("rmdir \(namespaceFolder)", tmp: tmp).status == 0)
        let result = try victim(["new", "Diary", "--body", "secret"])
        #expect(result.status == 0, "\(result.stderr)")
        var status = stat()
        #expect(stat(namespaceFolder, &status) == 0 && status.st_uid == geteuid() && status.st_mode & 0o7777 == 0o700)
        #expect(Neighbour.shell("mv \(namespaceFolder)/locks \(tmp.path)/stolen", tmp: tmp).status != 0)
        #expect(Neighbour.shell("mv \(namespaceFolder) \(tmp.path)/stolen-folder", tmp: tmp).status != 0)
        #expect(FileManager.default.fileExists(atPath: namespaceFolder + "/locks"))
    }

    @Test("A presenter another user planted in the namespace hears nothing of the victim's notes")
    func plantedPresenterHearsNothing() throws {
        try makeNote("Diary")
        let note = notes.library.appendingPathComponent("diary.note").path
        try #require(FileManager.default.fileExists(atPath: note))
        // The neighbour's own folder (0755, theirs): their process accepts it as its namespace.
        try #require(Neighbour.shell("mkdir -m 0755 \(namespaceFolder)", tmp: tmp).status == 0)
        let presenter = try Neighbour.spawn(
            [NotesRunner.coordinationChild.path, "present", namespaceFolder, "note", note, "log"], tmp: tmp, folder: shared.url)
        defer { _ = presenter.finish(killingAfter: 0) }
        try #require(presenter.waitForLine("ready", seconds: 20), "the planted presenter: \(presenter.output) \(presenter.errors)")
        let result = try victim(["edit", "Diary", "--set", "more secrets"])
        #expect(result.status == 77 && result.stderr.contains(namespaceFolder), "\(result.status) \(result.stderr)")
        presenter.closeInput()
        _ = presenter.finish(killingAfter: 10)
        let heard = presenter.output.split(separator: "\n").filter { !$0.hasPrefix("ready") }
        #expect(heard.isEmpty, "the planted presenter heard: \(heard)")
    }

    @Test("In a namespace a group shares (2770, set explicitly), a presenter of one user hears another user's coordinated write")
    func groupSharedNamespaceReachesOtherUsersPresenters() throws {
        let group = Neighbour.ids!.gid
        // The folder a shared library needs: root's, of the group both users are in, 2770.
        let namespace = shared.appending("group-namespace").path
        try #require(mkdir(namespace, 0o700) == 0 && chown(namespace, 0, group) == 0 && chmod(namespace, 0o2770) == 0)
        let items = shared.appending("items")
        try FileManager.default.createDirectory(at: items, withIntermediateDirectories: false)
        try #require(chmod(items.path, 0o755) == 0)
        let item = items.appendingPathComponent("note.txt").path
        try #require(FileManager.default.createFile(atPath: item, contents: Data("shared".utf8)))
        // The victim (root, in the group) presents the item first: it makes `presenters/`.
        let presenter = try Spawned(
            "/usr/bin/setpriv", ["--groups=\(group)", "--", NotesRunner.coordinationChild.path, "present", namespace, "-", item, "log"],
            environment: victimEnvironment, folder: shared.url)
        defer { _ = presenter.finish(killingAfter: 0) }
        try #require(presenter.waitForLine("ready", seconds: 20), "the presenter: \(presenter.output) \(presenter.errors)")
        // The neighbour writes the item through the same namespace.
        let writer = try Neighbour.spawn(
            [NotesRunner.coordinationChild.path, "hold", namespace, "-", "write", item, "50"], tmp: tmp, folder: shared.url)
        let wrote = writer.finish(killingAfter: 20)
        #expect(wrote.status == 0 && wrote.stdout.contains("released"), "the neighbour's write: \(wrote.status) \(wrote.stdout) \(wrote.stderr)")
        presenter.closeInput()
        let heard = presenter.finish(killingAfter: 10).stdout.split(separator: "\n").map(String.init)
        #expect(heard.contains("relinquish-writer"), "the victim's presenter heard: \(heard)")
        // What the namespace made inside is the group's: the neighbour could list it and connect.
        var status = stat()
        #expect(stat(namespace + "/presenters", &status) == 0 && status.st_mode & 0o7777 == 0o2770 && status.st_gid == group)
    }

    @Test("Another user can't read the note `notes edit --editor` gives the editor")
    func editorFileIsPrivate() throws {
        try makeNote("Diary")
        let (uid, gid) = Neighbour.ids!
        let out = shared.appending("editor")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let script = shared.appending("editor.sh")
        try Data(
            """
            #!/bin/sh
            /usr/bin/setpriv --reuid=\(uid) --regid=\(gid) --clear-groups -- /bin/cat "$1" >/dev/null 2>&1; echo $? > \(out.path)/read
            stat -c %a "$(dirname "$1")" > \(out.path)/mode
            """.utf8
        ).write(to: script)
        #expect(chmod(script.path, 0o755) == 0)
        var environment = victimEnvironment
        environment["EDITOR"] = script.path
        let result = try Spawned(
            NotesRunner.executable.path, ["edit", "Diary", "--editor", "--library", notes.library.path], environment: environment,
            folder: shared.url
        ).finish(killingAfter: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOf: out.appendingPathComponent("mode"), encoding: .utf8) == "700\n")
        #expect(try String(contentsOf: out.appendingPathComponent("read"), encoding: .utf8) != "0\n", "the neighbour read the note")
    }

    @Test("A drafts folder another user made is refused: the autosave fails loudly, naming it, and nothing is written there")
    func plantedDraftsFolderIsRefused() throws {
        let drafts = tmp.path + "/DocumentKit-drafts-\(geteuid())"
        try #require(Neighbour.shell("mkdir -m 0777 \(drafts)", tmp: tmp).status == 0)
        let child = try Spawned(
            NotesRunner.coordinationChild.path, ["draft", tmp.path + "/library/Untitled.txt", "unsaved secret"],
            environment: victimEnvironment, folder: shared.url)
        let result = child.finish(killingAfter: 20)
        #expect(result.stdout.contains("failed untrustedFolder \(drafts)"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("Autosave failed") && result.stderr.contains(drafts), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: drafts).isEmpty)
    }

    @Test("Another user can neither list the victim's drafts folder nor read a draft")
    func draftsArePrivate() throws {
        let child = try Spawned(
            NotesRunner.coordinationChild.path, ["draft", tmp.path + "/library/Untitled.txt", "unsaved secret"],
            environment: victimEnvironment, folder: shared.url)
        let result = child.finish(killingAfter: 20)
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("drafted ") }, "\(result.stdout) \(result.stderr)")
        let draft = String(line.dropFirst("drafted ".count))
        let entry = URL(fileURLWithPath: draft).deletingLastPathComponent()
        let drafts = entry.deletingLastPathComponent().path
        #expect(drafts == tmp.path + "/DocumentKit-drafts-\(geteuid())")
        #expect(try String(contentsOfFile: draft, encoding: .utf8) == "unsaved secret")
        #expect(Neighbour.shell("ls \(drafts)", tmp: tmp).status != 0)
        #expect(Neighbour.shell("cat \(draft)", tmp: tmp).status != 0)
        var status = stat()
        #expect(stat(drafts, &status) == 0 && status.st_mode & 0o7777 == 0o700)
        #expect(stat(entry.path, &status) == 0 && status.st_mode & 0o077 == 0)
        #expect(stat(entry.appendingPathComponent("draft.json").path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(stat(entry.appendingPathComponent("owner.lock").path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(stat(draft, &status) == 0 && status.st_mode & 0o777 == 0o600)
    }
}

extension NotesRunner {
    /// The built `dk-coordination-child`, beside `notes`.
    fileprivate static var coordinationChild: URL { executable.deletingLastPathComponent().appendingPathComponent("dk-coordination-child") }
}

/// The second user of the per-user state tests.
private enum Neighbour {
    static let name = "dk-neighbour"
    static let ids: (uid: uid_t, gid: gid_t)? = {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()
    static var isAvailable: Bool { geteuid() == 0 && ids != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }
    static let reason: Comment = """
        needs root, setpriv and the user dk-neighbour: run `Scripts/bootstrap.sh test` as root, or \
        `sudo useradd --system --no-create-home --shell /usr/sbin/nologin dk-neighbour`, and run the tests as root
        """

    static func environment(tmp: URL) -> [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": tmp.path, "HOME": "/nonexistent-dk-home"]
    }

    static func arguments(_ command: [String]) -> [String] {
        ["--reuid=\(ids!.uid)", "--regid=\(ids!.gid)", "--clear-groups", "--"] + command
    }

    /// Runs `script` with `sh -c` as the neighbour.
    static func shell(_ script: String, tmp: URL) -> Spawned.Result {
        do {
            return try Spawned("/usr/bin/setpriv", arguments(["/bin/sh", "-c", script]), environment: environment(tmp: tmp), folder: tmp.deletingLastPathComponent())
                .finish(killingAfter: 20)
        } catch {
            return Spawned.Result(status: -1, stdout: "", stderr: "\(error)", hung: false)
        }
    }

    /// Starts `command` as the neighbour.
    static func spawn(_ command: [String], tmp: URL, folder: URL) throws -> Spawned {
        try Spawned("/usr/bin/setpriv", arguments(command), environment: environment(tmp: tmp), folder: folder)
    }
}

/// A process whose output goes to files (read as they grow), with a pipe for its input.
private final class Spawned {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether it had to be killed.
        var hung: Bool
    }

    private let process = Process()
    private let input = Pipe()
    private let outputPath: String
    private let errorPath: String

    init(_ executable: String, _ arguments: [String], environment: [String: String], folder: URL) throws {
        let name = UUID().uuidString.prefix(8)
        outputPath = folder.appendingPathComponent("out-\(name)").path
        errorPath = folder.appendingPathComponent("err-\(name)").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        process.standardInput = input
        try process.run()
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
    var isRunning: Bool { process.isRunning }

    /// Waits until a line starting with `prefix` was printed; false if it exits or `seconds` pass first.
    func waitForLine(_ prefix: String, seconds: Int) -> Bool {
        for _ in 0..<(seconds * 100) {
            if output.split(separator: "\n").contains(where: { $0.hasPrefix(prefix) }) { return true }
            if !process.isRunning { return false }
            usleep(10_000)
        }
        return false
    }

    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Waits for the end (killing it after `seconds`: a hang, not a measure of speed).
    func finish(killingAfter seconds: Int) -> Result {
        closeInput()
        var hung = false
        var waited = 0
        while process.isRunning {
            if waited >= seconds * 100 {
                hung = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(10_000)
            waited += 1
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: output, stderr: errors, hung: hung)
    }
}
