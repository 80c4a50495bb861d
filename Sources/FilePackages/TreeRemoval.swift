#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage

/// Removes `name` in `directory` and, if it is a directory, everything in it, without following
/// symbolic links. Missing items count as removed. Trees of any depth are removed (see
/// ``removeContents(of:using:)``).
package func removeItem(_ name: String, in directory: CInt, using fileSystem: FileSystem) throws(Errno) {
    let status: FileStatus
    do { status = try fileSystem.status(of: name, in: directory) } catch {
        if error == .noSuchFileOrDirectory { return }
        throw error
    }
    guard status.kind == .directory else {
        do { try fileSystem.unlink(name, in: directory) } catch {
            if error != .noSuchFileOrDirectory { throw error }
        }
        return
    }
    let fd = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    defer { Glibc.close(fd) }
    try removeContents(of: fd, using: fileSystem)
    do { try fileSystem.removeDirectory(name, in: directory) } catch {
        if error != .noSuchFileOrDirectory { throw error }
    }
}

/// Removes everything inside the open directory `fd`.
///
/// Iterative: a damaged package nested thousands of levels deep (deeper than any walk may
/// recurse, and than `PATH_MAX` allows as a path) is removed too. The folders of the first
/// levels stay open while their contents are removed; deeper ones are left through `..`,
/// checked to be the folder they were entered from (device and inode), so that a subtree moved
/// away meanwhile is never mistaken for its old parent: the removal stops with `EBUSY` instead.
package func removeContents(of fd: CInt, using fileSystem: FileSystem) throws(Errno) {
    /// A folder entered below `fd`: its name in its parent, and the parent (open, or by identity).
    struct Entered {
        var name: String
        var parent: CInt?
        var parentDevice: UInt64 = 0
        var parentInode: UInt64 = 0
    }
    let openLevels = 32
    var entered: [Entered] = []
    var current = fd
    defer {
        if current != fd { Glibc.close(current) }
        for level in entered { if let parent = level.parent, parent != fd { Glibc.close(parent) } }
    }
    while true {
        var next: (name: String, fd: CInt)?
        for child in try fileSystem.contentsOfDirectory(current, name: ".") {
            // Most members are files: try unlink first, and look closer only at directories.
            do {
                try fileSystem.unlink(child, in: current)
                continue
            } catch {
                switch error {
                case .noSuchFileOrDirectory: continue
                case .isDirectory, .notPermitted: break
                default: throw error
                }
            }
            let status: FileStatus
            do { status = try fileSystem.status(of: child, in: current) } catch {
                if error == .noSuchFileOrDirectory { continue }
                throw error
            }
            guard status.kind == .directory else {
                do { try fileSystem.unlink(child, in: current) } catch {
                    if error != .noSuchFileOrDirectory { throw error }
                }
                continue
            }
            do { next = (child, try fileSystem.open(child, in: current, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
                if error == .noSuchFileOrDirectory { continue }
                throw error
            }
            break
        }
        if let next {
            // Go down into the folder.
            if entered.count < openLevels {
                entered.append(Entered(name: next.name, parent: current))
            } else {
                let here: FileStatus
                do { here = try fileSystem.status(of: current, name: ".") } catch {
                    Glibc.close(next.fd)
                    throw error
                }
                entered.append(Entered(name: next.name, parent: nil, parentDevice: here.device, parentInode: here.inode))
                Glibc.close(current)
            }
            current = next.fd
            continue
        }
        // `current` is empty: go back up and remove it.
        guard let level = entered.popLast() else { return }
        if let parent = level.parent {
            Glibc.close(current)
            current = parent
        } else {
            let parent = try fileSystem.open("..", in: current, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            Glibc.close(current)
            current = parent
            let status = try fileSystem.status(of: parent, name: "..")
            guard status.device == level.parentDevice, status.inode == level.parentInode else { throw .resourceBusy }
        }
        do { try fileSystem.removeDirectory(level.name, in: current) } catch {
            if error != .noSuchFileOrDirectory { throw error }
        }
    }
}
