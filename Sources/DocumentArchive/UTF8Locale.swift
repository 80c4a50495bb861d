#if canImport(Glibc)
import Glibc
#endif

/// Runs libarchive under a UTF-8 character type on the calling thread (`uselocale`), whatever the
/// process's locale: libarchive converts names through the locale, and a Swift process never sets
/// one, so in the "C" locale a non-ASCII name can't be converted (its tar writer then crashed, its
/// zip writer left the UTF-8 flag off). The process's locale and other threads are not touched.
enum UTF8Locale {
    /// `C.UTF-8` (glibc 2.35 and later have it built in), else nil: names then go as bytes.
    nonisolated(unsafe) private static let locale: locale_t? = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

    /// Runs `body` with the thread's character type set to UTF-8, then restores it.
    static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let locale else { return try body() }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        return try body()
    }
}
