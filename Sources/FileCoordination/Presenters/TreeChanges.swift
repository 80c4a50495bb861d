import Foundation

/// What one look at a presented folder tree found (paths relative to the presented folder), and
/// the subitem callbacks that makes.
struct TreeChanges: Sendable {
    struct Item: Sendable {
        var path: String
        var child: ItemSnapshot.Child
        var isPackage: Bool

        var depth: Int { Self.depth(of: path) }

        static func depth(of path: String) -> Int { path.reduce(0) { $0 + ($1 == "/" ? 1 : 0) } }

        /// The same file, package or folder (perhaps changed).
        func isSameItem(as other: Item) -> Bool { child.isSameItem(as: other.child) && isPackage == other.isPackage }
    }

    /// Items that are new here, parents before what is in them.
    var appeared: [Item] = []
    /// Items no longer here (a folder's contents with it).
    var gone: [Item] = []
    /// Items changed in place (as they are now).
    var changed: [Item] = []
    /// Files being written, not looked at yet (relative paths).
    var postponed: [String] = []

    var isEmpty: Bool { appeared.isEmpty && gone.isEmpty && changed.isEmpty }

    /// The callbacks for these changes in the folder at `root`. An item gone from one place and
    /// new at another is one move when it is the same item, or when the watcher saw the rename
    /// (`renameDestination`, by absolute paths); what a moved folder carried along is part of its
    /// move. Order: new folders that moves lead into, moves, changes, deletions (deepest first),
    /// then what appeared (outermost first).
    func notices(in root: String, renameDestination: (String) -> String?) -> [PresenterNotice] {
        func url(_ path: String, _ item: Item) -> URL { URL(fileURLWithPath: FolderTree.absolute(path, in: root), isDirectory: item.child.isDirectory) }
        var taken = [Bool](repeating: false, count: appeared.count)
        var byPath: [String: Int] = [:]
        var byInode: [UInt64: [Int]] = [:]
        for (index, item) in appeared.enumerated() {
            byPath[item.path] = index
            byInode[item.child.inode, default: []].append(index)
        }
        var folderMoves: [(from: String, to: String)] = []
        var moves: [(from: String, to: Item)] = []
        var changes = changed
        var deletions: [Item] = []
        for item in gone.sorted(by: { ($0.depth, $0.path) < ($1.depth, $1.path) }) {
            var from = item.path
            if let carrier = folderMoves.filter({ item.path.hasPrefix($0.from + "/") }).max(by: { $0.from.count < $1.from.count }) {
                from = carrier.to + item.path.dropFirst(carrier.from.count)
                if let index = byPath[from], !taken[index], appeared[index].isSameItem(as: item) {
                    taken[index] = true  // carried along by its folder's move
                    if appeared[index].child.fingerprint != item.child.fingerprint { changes.append(appeared[index]) }
                    continue
                }
            }
            let destination = renameDestination(FolderTree.absolute(item.path, in: root)).flatMap { path in
                path.hasPrefix(root + "/") ? byPath[String(path.dropFirst(root.count + 1))] : nil
            }
            let sameItem = byInode[item.child.inode]?.first { !taken[$0] && appeared[$0].isSameItem(as: item) }
            let renamed = destination.flatMap { !taken[$0] && appeared[$0].isPackage == item.isPackage ? $0 : nil }
            guard let index = sameItem ?? renamed else {
                deletions.append(Item(path: from, child: item.child, isPackage: item.isPackage))
                continue
            }
            taken[index] = true
            moves.append((from, appeared[index]))
            if item.child.isDirectory && !item.isPackage { folderMoves.append((item.path, appeared[index].path)) }
        }
        let fresh = appeared.indices.filter { !taken[$0] }.map { appeared[$0] }.sorted { ($0.depth, $0.path) < ($1.depth, $1.path) }
        let leadsIntoMove = { (folder: Item) in moves.contains { $0.to.path.hasPrefix(folder.path + "/") } }
        return fresh.filter(leadsIntoMove).map { .subitemAppeared(url($0.path, $0)) }
            + moves.map { .subitemMoved(from: url($0.from, $0.to), to: url($0.to.path, $0.to)) }
            + changes.sorted { $0.path < $1.path }.map { .subitemChanged(url($0.path, $0)) }
            + deletions.sorted { (-$0.depth, $0.path) < (-$1.depth, $1.path) }.map { .subitemDeleted(url($0.path, $0)) }
            + fresh.filter { !leadsIntoMove($0) }.map { .subitemAppeared(url($0.path, $0)) }
    }
}
