import CDocumentKitShims

/// File systems where inotify sees only this machine's writes: changes made by other machines
/// (an NFS server's other clients, the far side of sshfs, a Windows share) raise no event, so
/// presented items on them are polled as well as watched.
package enum RemoteFileSystems {
    /// `f_type` magic numbers (statfs(2), linux/magic.h) of network, cluster and FUSE file systems.
    static let magicNumbers: [UInt32: String] = [
        0x6969: "nfs",
        0x517B: "smb",
        0xFF53_4D42: "cifs",
        0xFE53_4D42: "smb2",
        0x6573_5546: "fuse",  // sshfs, rclone mount, s3fs, virtiofs, ...
        0x0102_1997: "9p",  // WSL, QEMU shared folders
        0x00C3_6400: "ceph",
        0x5346_414F: "afs",
        0x6B41_4653: "kafs",
        0x7375_7245: "coda",
        0x564C: "ncp",
        0x0116_1970: "gfs2",
        0x7461_636F: "ocfs2",
        0x0BD0_0BD0: "lustre",
        0x786F_4256: "vboxsf",
        0x2003_0528: "orangefs",
        0x4750_4653: "gpfs",
    ]

    /// The name of the remote file system holding `path`, or nil for a local one (or if statfs fails).
    package static func name(at path: String) -> String? {
        let type = dk_filesystem_type(path)
        guard type >= 0 else { return nil }
        return magicNumbers[UInt32(truncatingIfNeeded: type)]
    }
}
