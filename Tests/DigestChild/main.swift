// A child process for the digest cache tests: verifies packages with a hasher that uses the
// member digest cache in a given folder, so that several processes record digests at once.
//
//     dk-digest-child CACHE-FOLDER MANIFEST-NAME PACKAGE...
//
// Prints "hashed N" (the members it read) and exits 0, or prints the error and exits 1.
import DocumentKit
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    print("usage: dk-digest-child CACHE-FOLDER MANIFEST-NAME PACKAGE...")
    exit(2)
}
let cache = PersistentMemberDigestCache(folderURL: URL(fileURLWithPath: arguments[1]))
var hashed = 0
do {
    for path in arguments[3...] {
        let tree = try FileWrapper(contentsOf: URL(fileURLWithPath: path))
        let manifest = try DocumentManifest(package: tree, manifestName: arguments[2], packagePath: path)
        var hasher = MemberHasher(digestCache: cache)
        try hasher.verify(tree, against: manifest, manifestName: arguments[2], packagePath: path).checkComplete()
        hashed += hasher.hashedFileCount
    }
} catch {
    print("error: \(error)")
    exit(1)
}
print("hashed \(hashed)")
if !cache.notices.isEmpty { print("notices: \(cache.notices)") }
