#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Strings compared by their UTF-8 bytes, as file systems and the manifest specification order
/// and tell names apart (`String`'s own `==` and `<` compare canonical equivalents).
package enum UTF8Order {
    /// Negative, zero or positive as `a`'s bytes come before, equal or after `b`'s.
    package static func compare(_ a: some StringProtocol, _ b: some StringProtocol) -> Int {
        let compared = a.utf8.withContiguousStorageIfAvailable { first in
            b.utf8.withContiguousStorageIfAvailable { second -> Int in
                let common = min(first.count, second.count)
                if common > 0, let x = first.baseAddress, let y = second.baseAddress {
                    let order = memcmp(x, y, common)
                    if order != 0 { return Int(order) }
                }
                return first.count - second.count
            }
        }
        if let compared, let compared { return compared }
        for (x, y) in zip(a.utf8, b.utf8) where x != y { return Int(x) - Int(y) }
        return a.utf8.count - b.utf8.count
    }
}
