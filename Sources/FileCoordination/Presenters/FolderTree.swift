#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem

/// What the presenter of a folder or package knows of what is inside it, by paths relative to
/// the presented item ("" is the item itself): the entries of every plain folder at any depth,
/// and the folders of every package (watched, so that changes inside are seen; a package is
/// fingerprinted whole, as one entry of its folder).
///
/// Looking again is scoped: an event in one folder rescans that folder's named entries only.
struct FolderTree: Sendable {
    typealias Child = ItemSnapshot.Child

    /// The entries of each plain folder.
    private(set) var entries: [String: [String: Child]] = [:]
    /// The folders of each package, by the package's path (the package included).
    private(set) var packages: [String: [String]] = [:]

    /// Which entries of a folder to look at again.
    enum Names: Sendable {
        case all
        case some(Set<String>)

        mutating func formUnion(_ other: Names) {
            if case .some(let mine) = self, case .some(let theirs) = other { self = .some(mine.union(theirs)) } else { self = .all }
        }
    }

    /// How the tree reaches the disk and the watcher.
    struct Context {
        /// The presented item's path.
        let root: String
        let isPackageName: (String) -> Bool
        /// Starts watching the folder at a relative path; called before it is listed, so that
        /// nothing created meanwhile is missed.
        let watch: (String) -> Void
        /// Whether the file at an absolute path is being written (looked at once it is closed).
        var isBeingWritten: (String) -> Bool = { _ in false }

        func absolute(_ path: String) -> String { FolderTree.absolute(path, in: root) }
    }

    /// Every folder in the tree (plain folders and package folders), relative.
    var folders: [String] { Array(entries.keys) + packages.values.joined() }

    /// Every item in the tree.
    func items(_ isPackageName: (String) -> Bool) -> [TreeChanges.Item] {
        entries.flatMap { folder, listing in
            listing.map { TreeChanges.Item(path: Self.path(folder, $0.key), child: $0.value, isPackage: isPackageName($0.key)) }
        }
    }

    static func path(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }

    /// The absolute path of the relative `path` in the presented item at `root`.
    static func absolute(_ path: String, in root: String) -> String { path.isEmpty ? root : root + "/" + path }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    // MARK: Reading

    /// The tree of the plain folder at `context.root`, every folder in it watched; everything
    /// in it is recorded in `changes` as appeared.
    static func folder(_ context: Context, _ changes: inout TreeChanges) -> FolderTree {
        var tree = FolderTree()
        tree.addFolder("", context, &changes)
        return tree
    }

    /// The tree of the package at `context.root`, every folder in it watched.
    static func package(_ context: Context) -> FolderTree {
        var tree = FolderTree()
        tree.addPackage("", context)
        return tree
    }

    /// Reads the package at `root` again (its folders may have changed): returns the folders it no longer has.
    @discardableResult
    mutating func rereadPackage(_ root: String, _ context: Context) -> [String] {
        let before = packages[root] ?? []
        addPackage(root, context)
        let after = Set(packages[root] ?? [])
        return before.filter { !after.contains($0) }
    }

    /// The folder and the entries to look at again for an event in the folder `folder` about
    /// `names`: the folder itself, or for a folder inside a package, the package in its folder.
    /// Nil if the folder is not (or no longer) in the tree.
    func target(ofEventIn folder: String, names: Names) -> (folder: String, names: Names)? {
        if entries[folder] != nil { return (folder, names) }
        guard let root = packageRoot(of: folder), !root.isEmpty else { return nil }
        let (parent, package) = Self.split(root)
        return (parent, .some([package]))
    }

    /// The package a folder belongs to (the outermost one).
    private func packageRoot(of folder: String) -> String? {
        if packages[""] != nil { return "" }
        var prefix = ""
        for component in folder.split(separator: "/", omittingEmptySubsequences: false) {
            prefix = Self.path(prefix, String(component))
            if packages[prefix] != nil { return prefix }
        }
        return nil
    }

    // MARK: Looking again

    /// Looks again at `names` (or all entries) of the plain folder `folder`, recording what
    /// changed; folders that left the tree are added to `dropped` (to stop watching them).
    mutating func rescan(_ folder: String, _ names: Names, _ context: Context, _ changes: inout TreeChanges, dropped: inout [String]) {
        guard let old = entries[folder] else { return }
        let candidates: Set<String>
        switch names {
        case .all:
            guard let listed = ItemSnapshot.names(in: context.absolute(folder)) else { return }  // gone: its folder's rescan says so
            candidates = Set(listed).union(old.keys)
        case .some(let some):
            candidates = some
        }
        for name in candidates.sorted() where !ItemSnapshot.isTemporary(name) {
            let path = Self.path(folder, name)
            if context.isBeingWritten(context.absolute(path)) {
                changes.postponed.append(path)
                continue
            }
            let isPackage = context.isPackageName(name)
            let before = entries[folder]?[name]
            let now = ItemSnapshot.child(at: context.absolute(path), isPackage: isPackage)
            guard before != now else { continue }
            entries[folder]?[name] = now
            switch (before, now) {
            case (nil, let now?):
                changes.appeared.append(.init(path: path, child: now, isPackage: isPackage))
                addContents(path, now, isPackage: isPackage, context, &changes)
            case (let before?, nil):
                forget(path, before, isPackage: isPackage, context, &changes, dropped: &dropped)
            case (let before?, let now?):
                if before.isDirectory != now.isDirectory || (now.isDirectory && !isPackage && !now.isSameItem(as: before)) {
                    // Another item under the same name: the old one went, a new one came.
                    forget(path, before, isPackage: isPackage, context, &changes, dropped: &dropped)
                    changes.appeared.append(.init(path: path, child: now, isPackage: isPackage))
                    addContents(path, now, isPackage: isPackage, context, &changes)
                } else {
                    changes.changed.append(.init(path: path, child: now, isPackage: isPackage))
                    if isPackage && now.isDirectory { dropped += rereadPackage(path, context) }
                }
            case (nil, nil):
                break
            }
        }
    }

    /// Reads the plain folder `folder` and everything below it; everything found counts as appeared.
    private mutating func addFolder(_ folder: String, _ context: Context, _ changes: inout TreeChanges) {
        context.watch(folder)
        var listing: [String: Child] = [:]
        for name in ItemSnapshot.names(in: context.absolute(folder)) ?? [] where !ItemSnapshot.isTemporary(name) {
            listing[name] = ItemSnapshot.child(at: context.absolute(Self.path(folder, name)), isPackage: context.isPackageName(name))
        }
        entries[folder] = listing
        for name in listing.keys.sorted() {
            let path = Self.path(folder, name)
            changes.appeared.append(.init(path: path, child: listing[name]!, isPackage: context.isPackageName(name)))
            addContents(path, listing[name]!, isPackage: context.isPackageName(name), context, &changes)
        }
    }

    private mutating func addContents(_ path: String, _ child: Child, isPackage: Bool, _ context: Context, _ changes: inout TreeChanges) {
        // Folders nested deeper than a package may be are not entered: the walk stays bounded.
        guard child.isDirectory, TreeChanges.Item.depth(of: path) < TreeLimits.maximumDepth else { return }
        if isPackage { addPackage(path, context) } else { addFolder(path, context, &changes) }
    }

    /// Records the folders of the package at `root`, watching each.
    private mutating func addPackage(_ root: String, _ context: Context) {
        var folders: [String] = []
        var pending = [root]
        while let folder = pending.popLast() {
            context.watch(folder)
            folders.append(folder)
            for name in ItemSnapshot.names(in: context.absolute(folder)) ?? [] {
                let path = Self.path(folder, name)
                var status = stat()
                if lstat(context.absolute(path), &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR { pending.append(path) }
            }
        }
        packages[root] = folders
    }

    /// Forgets the item at `path` and, for a folder, everything in it, recording each as gone.
    private mutating func forget(
        _ path: String, _ child: Child, isPackage: Bool, _ context: Context, _ changes: inout TreeChanges, dropped: inout [String]
    ) {
        changes.gone.append(.init(path: path, child: child, isPackage: isPackage))
        guard child.isDirectory else { return }
        if isPackage {
            dropped += packages.removeValue(forKey: path) ?? []
        } else if let listing = entries.removeValue(forKey: path) {
            dropped.append(path)
            for (name, inner) in listing {
                forget(Self.path(path, name), inner, isPackage: context.isPackageName(name), context, &changes, dropped: &dropped)
            }
        }
    }
}
