// The AES-256-GCM / PBKDF2 primitives behind the VFS and the key header: OpenSSL's libcrypto on
// Linux, or whatever Swift installed (CryptoKit and CommonCrypto on Apple platforms).

#include "CTroveCipher.h"

#include <string.h>

#if defined(__linux__)
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>

// One EVP context per thread, reused for every page: allocating and fetching the cipher for each
// 16 KB page cost more than the encryption itself. Freed when the thread exits.
static pthread_key_t context_key;
static pthread_once_t context_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *aes_256_gcm;

static void free_context(void *context) { EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)context); }

static void make_context_key(void) {
    pthread_key_create(&context_key, free_context);
    aes_256_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
}

static EVP_CIPHER_CTX *thread_context(void) {
    pthread_once(&context_once, make_context_key);
    if (!aes_256_gcm) return NULL;
    EVP_CIPHER_CTX *context = pthread_getspecific(context_key);
    if (!context) {
        context = EVP_CIPHER_CTX_new();
        if (!context) return NULL;
        pthread_setspecific(context_key, context);
    }
    return context;
}

static int openssl_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                        const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag) {
    EVP_CIPHER_CTX *context = thread_context();
    int written = 0;
    if (!context || length > 0x7fffffff || aad_length > 0x7fffffff) return -1;
    if (EVP_EncryptInit_ex(context, aes_256_gcm, NULL, key, nonce) != 1) return -1;
    if (aad_length && EVP_EncryptUpdate(context, NULL, &written, aad, (int)aad_length) != 1) return -1;
    if (length && EVP_EncryptUpdate(context, output, &written, input, (int)length) != 1) return -1;
    if (EVP_EncryptFinal_ex(context, output + length, &written) != 1) return -1;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, TROVE_CIPHER_TAG_SIZE, tag) != 1) return -1;
    return 0;
}

static int openssl_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                        const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag) {
    EVP_CIPHER_CTX *context = thread_context();
    int written = 0;
    uint8_t expected[TROVE_CIPHER_TAG_SIZE];
    if (!context || length > 0x7fffffff || aad_length > 0x7fffffff) return -1;
    if (EVP_DecryptInit_ex(context, aes_256_gcm, NULL, key, nonce) != 1) return -1;
    if (aad_length && EVP_DecryptUpdate(context, NULL, &written, aad, (int)aad_length) != 1) return -1;
    if (length && EVP_DecryptUpdate(context, output, &written, input, (int)length) != 1) return -1;
    memcpy(expected, tag, sizeof expected);
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, TROVE_CIPHER_TAG_SIZE, expected) != 1) return -1;
    return EVP_DecryptFinal_ex(context, output + length, &written) == 1 ? 0 : -1;
}

static int openssl_random(uint8_t *output, size_t length) {
    return length > 0x7fffffff || RAND_bytes(output, (int)length) != 1 ? -1 : 0;
}

static int openssl_pbkdf2(const uint8_t *password, size_t password_length, const uint8_t *salt,
                          size_t salt_length, uint32_t iterations, uint8_t *output, size_t output_length) {
    if (password_length > 0x7fffffff || salt_length > 0x7fffffff || output_length > 0x7fffffff
        || iterations == 0 || iterations > 0x7fffffff)
        return -1;
    return PKCS5_PBKDF2_HMAC((const char *)password, (int)password_length, salt, (int)salt_length,
                             (int)iterations, EVP_sha512(), (int)output_length, output) == 1 ? 0 : -1;
}

static trove_cipher_backend current = {openssl_seal, openssl_open, openssl_random, openssl_pbkdf2};
#else
static trove_cipher_backend current = {0, 0, 0, 0};
#endif

void trove_cipher_set_backend(const trove_cipher_backend *backend) { current = *backend; }

int trove_cipher_has_backend(void) {
    return current.seal && current.open && current.random && current.pbkdf2_sha512;
}

int trove_cipher_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                      const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag) {
    return current.seal ? current.seal(key, nonce, aad, aad_length, input, length, output, tag) : -1;
}

int trove_cipher_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                      const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag) {
    return current.open ? current.open(key, nonce, aad, aad_length, input, length, output, tag) : -1;
}

int trove_cipher_random(uint8_t *output, size_t length) {
    return current.random ? current.random(output, length) : -1;
}

int trove_cipher_pbkdf2_sha512(const uint8_t *password, size_t password_length, const uint8_t *salt,
                               size_t salt_length, uint32_t iterations, uint8_t *output,
                               size_t output_length) {
    return current.pbkdf2_sha512
        ? current.pbkdf2_sha512(password, password_length, salt, salt_length, iterations, output, output_length)
        : -1;
}

void trove_cipher_zero(void *pointer, size_t length) {
    volatile uint8_t *bytes = (volatile uint8_t *)pointer;
    while (length--) *bytes++ = 0;
}
