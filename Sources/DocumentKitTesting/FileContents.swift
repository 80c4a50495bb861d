import Foundation

/// Every regular file under `url` by relative path (the file itself as "" when `url` is a file).
public func contents(of url: URL) throws -> [String: Data] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [:] }
    guard isDirectory.boolValue else { return ["": try Data(contentsOf: url)] }
    var result: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: url.path)
    while let relative = enumerator?.nextObject() as? String {
        let member = url.appendingPathComponent(relative)
        var memberIsDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: member.path, isDirectory: &memberIsDirectory), !memberIsDirectory.boolValue {
            result[relative] = try Data(contentsOf: member)
        }
    }
    return result
}
