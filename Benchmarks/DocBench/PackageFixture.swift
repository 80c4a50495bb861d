#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Untimed: the package the `save` and `versions` benchmarks change, `name` in the folder
/// `parent` (at `path`, for messages): `count` files of `size` bytes named by `names`, filled with
/// `p` and each starting with its index.
func buildBenchPackage(
    named name: String = "pkg", in parent: CInt, path: String, count: Int, size: Int, names: NameTable
) throws(BenchError) {
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(size, 1), alignment: 64)
    defer { buffer.deallocate() }
    buffer.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "p"), count: Swift.max(size, 1))
    try check(mkdirat(parent, name, 0o755), "mkdir \(path)/\(name)")
    let package = try check(openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open \(path)/\(name)")
    defer { close(package) }
    for i in 0..<count {
        let fd = try check(openat(package, names[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644), "create member \(i)")
        defer { close(fd) }
        var index = UInt32(i)
        withUnsafeBytes(of: &index) { buffer.copyMemory(from: $0.baseAddress!, byteCount: Swift.min(4, size)) }
        try writeAll(fd, buffer, size, "write member \(i)")
    }
}
