// X25519 key agreement and HKDF-SHA256 for sync's device keys (Sources/TroveSync): OpenSSL's
// libcrypto on Linux. Apple platforms do not call these; TroveSQLite's KeyAgreement uses CryptoKit
// there, so the functions report failure.

#include "CTroveCipher.h"

#if defined(__linux__)
#include <openssl/evp.h>
#include <openssl/kdf.h>

int trove_cipher_x25519_public_key(const uint8_t *private_key, uint8_t *public_key) {
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, private_key, 32);
    if (!key) return -1;
    size_t length = 32;
    int rc = EVP_PKEY_get_raw_public_key(key, public_key, &length) == 1 && length == 32 ? 0 : -1;
    // Frees (and clears) the copy of the private key OpenSSL made.
    EVP_PKEY_free(key);
    return rc;
}

int trove_cipher_x25519(const uint8_t *private_key, const uint8_t *peer_public_key, uint8_t *shared) {
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, private_key, 32);
    EVP_PKEY *peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer_public_key, 32);
    EVP_PKEY_CTX *context = key ? EVP_PKEY_CTX_new(key, NULL) : NULL;
    size_t length = 32;
    // OpenSSL refuses a peer key of small order (an all-zero shared secret) in EVP_PKEY_derive.
    int rc = peer && context && EVP_PKEY_derive_init(context) == 1
                     && EVP_PKEY_derive_set_peer(context, peer) == 1
                     && EVP_PKEY_derive(context, shared, &length) == 1 && length == 32
                 ? 0
                 : -1;
    EVP_PKEY_CTX_free(context);
    EVP_PKEY_free(peer);
    EVP_PKEY_free(key);
    return rc;
}

int trove_cipher_hkdf_sha256(const uint8_t *secret, size_t secret_length, const uint8_t *salt,
                             size_t salt_length, const uint8_t *info, size_t info_length,
                             uint8_t *output, size_t output_length) {
    if (secret_length > 0x7fffffff || salt_length > 0x7fffffff || info_length > 0x7fffffff
        || output_length == 0 || output_length > 255 * 32)
        return -1;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t length = output_length;
    // OpenSSL takes empty salt and info as absent, which HKDF (RFC 5869) treats the same way.
    static const uint8_t empty = 0;
    int rc = context && EVP_PKEY_derive_init(context) == 1
                     && EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1
                     && EVP_PKEY_CTX_set1_hkdf_salt(context, salt_length ? salt : &empty,
                                                    (int)salt_length) == 1
                     && EVP_PKEY_CTX_set1_hkdf_key(context, secret_length ? secret : &empty,
                                                   (int)secret_length) == 1
                     && (info_length == 0
                         || EVP_PKEY_CTX_add1_hkdf_info(context, info, (int)info_length) == 1)
                     && EVP_PKEY_derive(context, output, &length) == 1 && length == output_length
                 ? 0
                 : -1;
    EVP_PKEY_CTX_free(context);
    return rc;
}
#else
int trove_cipher_x25519_public_key(const uint8_t *private_key, uint8_t *public_key) {
    (void)private_key;
    (void)public_key;
    return -1;
}

int trove_cipher_x25519(const uint8_t *private_key, const uint8_t *peer_public_key, uint8_t *shared) {
    (void)private_key;
    (void)peer_public_key;
    (void)shared;
    return -1;
}

int trove_cipher_hkdf_sha256(const uint8_t *secret, size_t secret_length, const uint8_t *salt,
                             size_t salt_length, const uint8_t *info, size_t info_length,
                             uint8_t *output, size_t output_length) {
    (void)secret, (void)secret_length, (void)salt, (void)salt_length, (void)info;
    (void)info_length, (void)output, (void)output_length;
    return -1;
}
#endif
