import CLibCrypto

/// SHA-256 through OpenSSL's libcrypto (its EVP digest interface), fed in pieces.
///
/// libcrypto rather than swift-crypto: see docs/decisions.md ("SHA-256 of package members").
struct SHA256: ~Copyable {
    private let context: OpaquePointer

    /// A digest with nothing fed yet.
    init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not set up a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds `bytes`.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else { fatalError("libcrypto failed to hash") }
    }

    /// The digest of everything fed, as 64 lower-case hexadecimal digits.
    consuming func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = EVP_DigestFinal_ex(context, &digest, &length)
        EVP_MD_CTX_free(context)
        discard self
        guard status == 1, length == 32 else { fatalError("libcrypto failed to finish a SHA-256 digest") }
        return Self.hexadecimal(digest[..<32])
    }

    /// The SHA-256 digest of `bytes` in hexadecimal.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> String {
        let digest = SHA256()
        digest.update(bytes)
        return digest.finalize()
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hexadecimal(_ bytes: ArraySlice<UInt8>) -> String {
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
