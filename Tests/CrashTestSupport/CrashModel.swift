import Foundation

/// What state `k` of the crash test's package holds: relative path to contents, for every
/// regular file. Shared by the child that saves the states and the test that checks them.
public enum CrashModel {
    /// The regular files of state `k`, by relative path.
    public static func files(forState k: Int) -> [String: Data] {
        var files: [String: Data] = [:]
        files["state.txt"] = Data("\(k)".utf8)
        let group = k / 5
        for i in 0..<20 {
            let name = "fixed/f" + (i < 10 ? "0\(i)" : "\(i)")
            files[name] = pattern("fixed \(i) group \(group)", size: 512 + i * 97 + group % 7)
        }
        let sizes = [
            17 + k % 13,
            4_096 + (k * 37) % 1_000,
            65_536 + (k * 131) % 9_000,
            70_000 + (k * 977) % 60_000,
            (k * 7_919) % 150_000,
        ]
        for (i, size) in sizes.enumerated() {
            files["changing/c\(i).bin"] = pattern("changing \(i) state \(k)", size: size)
        }
        files["nested/a/b/leaf.txt"] = Data("leaf of state \(k)\n".utf8)
        files["nested/a/info.txt"] = pattern("info \(k / 3)", size: 300 + k % 3)
        return files
    }

    /// `size` bytes: `seed` and a newline, repeated, then cut to `size`.
    public static func pattern(_ seed: String, size: Int) -> Data {
        let line = Array((seed + "\n").utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(size + line.count)
        while bytes.count < size { bytes.append(contentsOf: line) }
        return Data(bytes[0..<size])
    }

    /// The folders state `k` holds (every state has the same ones).
    public static func folders(forState k: Int) -> Set<String> {
        var folders: Set<String> = []
        for path in files(forState: k).keys {
            var components = path.split(separator: "/").dropLast()
            while !components.isEmpty {
                folders.insert(components.joined(separator: "/"))
                components = components.dropLast()
            }
        }
        return folders
    }
}
