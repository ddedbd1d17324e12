#ifndef TROVE_CCRYPTO_SHIM_H
#define TROVE_CCRYPTO_SHIM_H

// OpenSSL's libcrypto (Debian: libssl-dev): AES-256-GCM, PBKDF2 and the random generator behind
// Trove's encryption on Linux, and X25519 and HKDF behind sync's device keys. Only CTroveCipher
// uses it; Apple platforms use CryptoKit instead.
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#endif
