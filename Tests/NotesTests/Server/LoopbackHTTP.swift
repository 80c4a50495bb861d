#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A minimal HTTP/1.1 client over a TCP socket to 127.0.0.1, for the server's tests: one
/// request per connection (`Connection: close`), bodies by `Content-Length` or chunked. Its
/// blocking socket calls run on a thread of their own, never on the concurrency pool. It sends
/// exactly the bytes it is given, so tests can also send requests no library would.
enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A response: status, headers (names lower-cased, in order), body.
    struct Response: Sendable {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: Data

        /// The first value of header `name` (any case).
        func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }
    }

    /// Runs `work` on a new thread and returns its result.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }

    /// A connected socket to 127.0.0.1:`port` (with a receive timeout of `timeout` seconds).
    static func connect(port: Int, timeout: Int = 60) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(fd)
            throw Failure("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return fd
    }

    static func sendAll(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let sent = send(fd, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw Failure("send: errno \(errno)") }
                done += sent
            }
        }
    }

    /// The head of a request: `METHOD PATH HTTP/1.1`, Host, the given headers, and
    /// `Content-Length` for a body.
    static func head(_ method: String, _ path: String, headers: [(String, String)], bodyLength: Int?) -> Data {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        return Data((text + "\r\n").utf8)
    }

    /// Sends one request and reads the whole response.
    static func request(
        port: Int, method: String, path: String, headers: [(String, String)] = [], body: Data? = nil, timeout: Int = 60
    ) async throws -> Response {
        try await offPool {
            let fd = try connect(port: port, timeout: timeout)
            defer { close(fd) }
            var message = head(method, path, headers: headers, bodyLength: body?.count ?? (["POST", "PUT"].contains(method) ? 0 : nil))
            if let body { message.append(body) }
            try sendAll(fd, message)
            let reader = ResponseReader(fd: fd)
            return try reader.readResponse(isHead: method == "HEAD")
        }
    }

    /// Sends raw bytes and reads the whole response (for requests no client library would send).
    static func raw(port: Int, _ bytes: Data, timeout: Int = 30) async throws -> Response {
        try await offPool {
            let fd = try connect(port: port, timeout: timeout)
            defer { close(fd) }
            try sendAll(fd, bytes)
            return try ResponseReader(fd: fd).readResponse(isHead: false)
        }
    }

    /// Reads a response from a socket, buffered.
    final class ResponseReader {
        let fd: Int32
        private var buffer = Data()

        init(fd: Int32) { self.fd = fd }

        /// More bytes into the buffer; false at the end of the stream.
        private func fill() throws -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 { throw Failure("recv: errno \(errno)") }
            if count == 0 { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }

        /// One line (without CRLF); nil at the end of the stream.
        func readLine() throws -> String? {
            while true {
                if let index = buffer.firstIndex(of: 0x0A) {
                    var line = buffer[buffer.startIndex..<index]
                    if line.last == 0x0D { line = line.dropLast() }
                    buffer = Data(buffer[buffer.index(after: index)...])
                    return String(decoding: line, as: UTF8.self)
                }
                guard try fill() else { return nil }
            }
        }

        func readBytes(_ count: Int) throws -> Data {
            while buffer.count < count {
                guard try fill() else { throw Failure("the body ended after \(buffer.count) of \(count) bytes") }
            }
            let bytes = Data(buffer.prefix(count))
            buffer = Data(buffer.dropFirst(count))
            return bytes
        }

        /// The status and headers.
        func readHead() throws -> (Int, [(name: String, value: String)]) {
            guard let status = try readLine() else { throw Failure("the connection closed before a response") }
            let parts = status.split(separator: " ")
            guard parts.count >= 2, let code = Int(parts[1]) else { throw Failure("not an HTTP status line: \(status)") }
            var headers: [(name: String, value: String)] = []
            while let line = try readLine(), !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            return (code, headers)
        }

        /// The chunks of a chunked body, each handed to `chunk` as it comes; false from `chunk` stops.
        func readChunks(_ chunk: (Data) -> Bool) throws {
            while let sizeLine = try readLine() {
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw Failure("bad chunk size \(sizeLine)") }
                if size == 0 {
                    while let trailer = try readLine(), !trailer.isEmpty {}
                    return
                }
                let data = try readBytes(size)
                _ = try readLine()
                guard chunk(data) else { return }
            }
        }

        func readResponse(isHead: Bool) throws -> Response {
            let (status, headers) = try readHead()
            func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
            var body = Data()
            if isHead || status == 204 || status == 304 {
            } else if header("transfer-encoding")?.lowercased().contains("chunked") == true {
                try readChunks { body.append($0); return true }
            } else if let length = header("content-length").flatMap(Int.init) {
                body = try readBytes(length)
            } else {
                while try fill() {}
                body = buffer
            }
            return Response(status: status, headers: headers, body: body)
        }
    }
}
