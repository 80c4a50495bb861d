#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H
// OpenSSL's libcrypto, for SHA-256 through the EVP digest interface (no deprecated calls).
#include <openssl/evp.h>
#endif
