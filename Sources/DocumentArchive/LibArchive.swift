import CArchive

/// The libarchive library DocumentKit's archive support is built on.
public enum LibArchive {
    /// The version of the libarchive linked into the process, such as "libarchive 3.6.2".
    public static var version: String { String(cString: archive_version_string()) }
}
