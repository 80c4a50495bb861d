#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// A page in a headless Chromium (Debian's `/usr/bin/chromium`), driven over the DevTools
/// protocol by `cdp_driver.py` beside this file (Python's standard library only). The browser
/// keeps its profile in the test's temporary folder and goes away with the driver, which goes
/// away when this object does (its stdin closes).
final class ChromiumPage: Sendable {
    static let executable = "/usr/bin/chromium"
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("cdp_driver.py")

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A console message, uncaught exception or browser log entry (`kind`: `console.error`,
    /// `exception`, `log.error`, …).
    struct ConsoleEntry: Decodable, Sendable, CustomStringConvertible {
        let kind: String
        let text: String
        var source: String?
        var url: String?
        var description: String { "\(kind) \(source ?? ""): \(text) \(url ?? "")" }
    }

    private let process: Process
    private let input: FileHandle
    private let outputPipe: Pipe
    private var output: Int32 { outputPipe.fileHandleForReading.fileDescriptor }
    /// What the driver wrote after the last answer read.
    private let pending = Mutex(Data())

    private init(process: Process, input: FileHandle, output: Pipe) {
        self.process = process
        self.input = input
        self.outputPipe = output
    }

    /// Starts Chromium with its profile in `folder`; fails with what to do when it isn't installed.
    static func launch(in folder: URL, width: Int = 1200, height: Int = 800) async throws -> ChromiumPage {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failure("\(executable) is missing: the web page's tests need Debian's chromium (Scripts/bootstrap.sh installs it: apt-get install chromium)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let profile = folder.appendingPathComponent("chromium-profile")
        process.arguments = ["-B", driver.path, executable, profile.path, "\(width)", "\(height)"]  // -B: no __pycache__ in the sources
        let (stdin, stdout) = (Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        NotesRunner.ignoreBrokenPipes()
        try process.run()
        let page = ChromiumPage(process: process, input: stdin.fileHandleForWriting, output: stdout)
        let ready = try await page.readAnswer(timeout: 60)
        guard ready.ok else { throw Failure(ready.error ?? "the driver did not start") }
        return page
    }

    private struct Answer<Value: Decodable>: Decodable {
        let ok: Bool
        let value: Value?
        let error: String?
    }

    /// Sends a command and decodes the value of its answer.
    private func send<Value: Decodable>(_ command: [String: Any], as type: Value.Type, timeout: Int = 60) async throws -> Value? {
        var line = try JSONSerialization.data(withJSONObject: command)
        line.append(0x0A)
        try input.write(contentsOf: line)
        let answer = try await readAnswer(Value.self, timeout: timeout)
        guard answer.ok else { throw Failure("\(command["op"] ?? "?"): \(answer.error ?? "failed")") }
        return answer.value
    }

    private func readAnswer(timeout: Int) async throws -> Answer<String> { try await readAnswer(String.self, timeout: timeout) }

    /// Reads one line of the driver's output (on a thread of its own), at most `timeout` seconds.
    private func readAnswer<Value: Decodable>(_ type: Value.Type, timeout: Int) async throws -> Answer<Value> {
        let line = try await LoopbackHTTP.offPool { [self] () throws -> Data in
            let fd = output
            let deadline = ContinuousClock.now + .seconds(timeout)
            var buffer = pending.withLock { $0 }
            while buffer.firstIndex(of: 0x0A) == nil {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard ContinuousClock.now < deadline else { throw Failure("the Chromium driver did not answer within \(timeout) s") }
                guard poll(&poller, 1, 200) >= 0 || errno == EINTR else { throw Failure("poll: errno \(errno)") }
                guard poller.revents != 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                let count = read(fd, &chunk, chunk.count)
                guard count > 0 else { throw Failure("the Chromium driver ended (see its messages above)") }
                buffer.append(contentsOf: chunk[0..<count])
            }
            let newline = buffer.firstIndex(of: 0x0A)!
            pending.withLock { $0 = Data(buffer[(newline + 1)...]) }
            return Data(buffer[..<newline])
        }
        return try JSONDecoder().decode(Answer<Value>.self, from: line)
    }

    /// Loads `url` and waits for its load event.
    func navigate(_ url: String) async throws { _ = try await send(["op": "navigate", "url": url], as: String.self) }

    /// The value of a JavaScript expression (promises awaited), decoded as `Value`.
    func evaluate<Value: Decodable>(_ expression: String, as type: Value.Type = String.self) async throws -> Value? {
        try await send(["op": "eval", "expression": expression], as: Value.self)
    }

    /// Waits until the expression is truthy; throws with it when it still isn't after `timeout` seconds.
    func wait(_ expression: String, timeout: Double = 10) async throws {
        _ = try await send(["op": "wait", "expression": expression, "timeout": timeout], as: AnyDecodable.self, timeout: Int(timeout) + 60)
    }

    /// A mouse click in the middle of the element (it must be visible and enabled).
    func click(_ selector: String) async throws { _ = try await send(["op": "click", "selector": selector], as: String.self) }

    /// Types `text` at the end of the text field, as from a keyboard.
    func type(_ text: String, into selector: String) async throws {
        _ = try await send(["op": "type", "selector": selector, "text": text], as: String.self)
    }

    /// Writes a PNG of the page to `url`.
    func screenshot(to url: URL) async throws { _ = try await send(["op": "screenshot", "path": url.path], as: String.self) }

    /// The page's console messages, uncaught exceptions and log entries (CSP reports among them) so far.
    func console() async throws -> [ConsoleEntry] { try await send(["op": "console"], as: [ConsoleEntry].self) ?? [] }

    /// Closes the browser and waits for the driver.
    func close() async throws {
        _ = try? await send(["op": "quit"], as: String.self, timeout: 15)
        try? input.close()
        let deadline = ContinuousClock.now + .seconds(15)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit {
        try? input.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Any JSON value, decoded and dropped (for answers whose value doesn't matter).
private struct AnyDecodable: Decodable {
    init(from decoder: any Decoder) throws {}
}
