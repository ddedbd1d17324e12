// The AES-256-GCM / PBKDF2 primitives behind the VFS and the key header: OpenSSL's libcrypto on
// Linux, or whatever Swift installed (CryptoKit and CommonCrypto on Apple platforms).

#include "CTroveCipher.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>

// The cipher, fetched once. The stateless calls (the key header's wrap, tests) use a context of
// their own, freed (and so cleared) before they return: an OpenSSL context keeps the key schedule
// after the operation, and a per-thread one would keep the last key until the thread exits. The
// VFS's pages go through trove_cipher_context, keyed once per open file.
static pthread_once_t cipher_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *aes_256_gcm;

static void fetch_cipher(void) { aes_256_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL); }

static const EVP_CIPHER *cipher(void) {
    pthread_once(&cipher_once, fetch_cipher);
    return aes_256_gcm;
}

// The GCM operation on a context already keyed: `key` NULL keeps the key schedule and only sets
// the nonce. (Passing the cipher again would make OpenSSL 3 free and rebuild the whole context.)
static int evp_seal(EVP_CIPHER_CTX *context, const EVP_CIPHER *cipher, const uint8_t *key, const uint8_t *nonce,
                    const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                    uint8_t *tag) {
    int written = 0;
    if (!context || length > 0x7fffffff || aad_length > 0x7fffffff) return -1;
    if (EVP_EncryptInit_ex(context, cipher, NULL, key, nonce) != 1) return -1;
    if (aad_length && EVP_EncryptUpdate(context, NULL, &written, aad, (int)aad_length) != 1) return -1;
    if (length && EVP_EncryptUpdate(context, output, &written, input, (int)length) != 1) return -1;
    if (EVP_EncryptFinal_ex(context, output + length, &written) != 1) return -1;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, TROVE_CIPHER_TAG_SIZE, tag) != 1) return -1;
    return 0;
}

static int evp_open(EVP_CIPHER_CTX *context, const EVP_CIPHER *cipher, const uint8_t *key, const uint8_t *nonce,
                    const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                    const uint8_t *tag) {
    int written = 0;
    uint8_t expected[TROVE_CIPHER_TAG_SIZE];
    if (!context || length > 0x7fffffff || aad_length > 0x7fffffff) return -1;
    if (EVP_DecryptInit_ex(context, cipher, NULL, key, nonce) != 1) return -1;
    if (aad_length && EVP_DecryptUpdate(context, NULL, &written, aad, (int)aad_length) != 1) return -1;
    if (length && EVP_DecryptUpdate(context, output, &written, input, (int)length) != 1) return -1;
    memcpy(expected, tag, sizeof expected);
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, TROVE_CIPHER_TAG_SIZE, expected) != 1) return -1;
    return EVP_DecryptFinal_ex(context, output + length, &written) == 1 ? 0 : -1;
}

static int openssl_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                        const uint8_t *input, size_t length, uint8_t *output, uint8_t *tag) {
    if (!cipher()) return -1;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    int rc = evp_seal(context, aes_256_gcm, key, nonce, aad, aad_length, input, length, output, tag);
    EVP_CIPHER_CTX_free(context);
    return rc;
}

static int openssl_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_length,
                        const uint8_t *input, size_t length, uint8_t *output, const uint8_t *tag) {
    if (!cipher()) return -1;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    int rc = evp_open(context, aes_256_gcm, key, nonce, aad, aad_length, input, length, output, tag);
    EVP_CIPHER_CTX_free(context);
    return rc;
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

// MARK: Keyed contexts

int trove_cipher_vaes_enabled(void) {
    static int enabled = -1;
    int known = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (known < 0) {
        const char *setting = getenv("TROVE_CIPHER_VAES");
        known = trove_gcm_vaes_available() && !(setting && strcmp(setting, "0") == 0);
        __atomic_store_n(&enabled, known, __ATOMIC_RELAXED);
    }
    return known;
}

struct trove_cipher_context {
#if defined(__linux__)
    // Keyed once (AES key schedule and GCM's hash key); each page only sets its nonce. NULL when
    // another backend was installed, which then gets `key` on every call.
    EVP_CIPHER_CTX *encrypt, *decrypt;
    // The same key for gcm_vaes.c, when the CPU has VAES and VPCLMULQDQ (NULL otherwise, or
    // with TROVE_CIPHER_VAES=0): pages go through it, 2.7x OpenSSL 3.0's speed here.
    trove_gcm_key *fast;
#endif
    uint8_t key[TROVE_CIPHER_KEY_SIZE];
    int uses_key;
    // Nonces for sealing: a random 96-bit start, then +1 per page (in the low 64 bits). See
    // trove_cipher_context_nonce. `fork_generation` is the process's at the time of the draw.
    uint8_t nonce[TROVE_CIPHER_NONCE_SIZE];
    int nonce_ready;
    unsigned fork_generation;
};

// Bumped in a forked child, so a context inherited across fork() draws a new random start
// instead of repeating the parent's sequence (a repeated GCM nonce under one key is fatal).
static unsigned fork_generation;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void forked_child(void) { __atomic_fetch_add(&fork_generation, 1, __ATOMIC_RELAXED); }
static void watch_forks(void) { pthread_atfork(NULL, NULL, forked_child); }

int trove_cipher_context_nonce(trove_cipher_context *context, uint8_t *nonce) {
    unsigned generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
    if (!context->nonce_ready || context->fork_generation != generation) {
        pthread_once(&fork_once, watch_forks);
        generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
        if (trove_cipher_random(context->nonce, TROVE_CIPHER_NONCE_SIZE) != 0) return -1;
        context->nonce_ready = 1;
        context->fork_generation = generation;
    }
    memcpy(nonce, context->nonce, TROVE_CIPHER_NONCE_SIZE);
    for (int i = TROVE_CIPHER_NONCE_SIZE - 1; i >= 4; i--)
        if (++context->nonce[i] != 0) break;
    return 0;
}

trove_cipher_context *trove_cipher_context_new(const uint8_t *key) {
    trove_cipher_context *context = calloc(1, sizeof *context);
    if (!context) return NULL;
#if defined(__linux__)
    if (current.seal == openssl_seal && current.open == openssl_open) {
        context->encrypt = EVP_CIPHER_CTX_new();
        context->decrypt = EVP_CIPHER_CTX_new();
        if (!cipher() || !context->encrypt || !context->decrypt
            || EVP_EncryptInit_ex(context->encrypt, aes_256_gcm, NULL, key, NULL) != 1
            || EVP_DecryptInit_ex(context->decrypt, aes_256_gcm, NULL, key, NULL) != 1) {
            trove_cipher_context_free(context);
            return NULL;
        }
        if (trove_cipher_vaes_enabled()) context->fast = trove_gcm_vaes_key_new(key);
        return context;
    }
#endif
    memcpy(context->key, key, TROVE_CIPHER_KEY_SIZE);
    context->uses_key = 1;
    return context;
}

trove_cipher_context *trove_cipher_context_copy(const trove_cipher_context *source) {
    if (!source) return NULL;
    trove_cipher_context *context = calloc(1, sizeof *context);
    if (!context) return NULL;
#if defined(__linux__)
    if (!source->uses_key) {
        // EVP_CIPHER_CTX_copy duplicates the keyed state (AES key schedule, GCM hash key).
        context->encrypt = EVP_CIPHER_CTX_new();
        context->decrypt = EVP_CIPHER_CTX_new();
        if (!context->encrypt || !context->decrypt
            || EVP_CIPHER_CTX_copy(context->encrypt, source->encrypt) != 1
            || EVP_CIPHER_CTX_copy(context->decrypt, source->decrypt) != 1) {
            trove_cipher_context_free(context);
            return NULL;
        }
        if (source->fast && !(context->fast = trove_gcm_vaes_key_copy(source->fast))) {
            trove_cipher_context_free(context);
            return NULL;
        }
        return context;
    }
#endif
    memcpy(context->key, source->key, TROVE_CIPHER_KEY_SIZE);
    context->uses_key = 1;
    return context;
}

void trove_cipher_context_free(trove_cipher_context *context) {
    if (!context) return;
#if defined(__linux__)
    // OpenSSL clears the key schedule when it frees the GCM context (OPENSSL_clear_free).
    EVP_CIPHER_CTX_free(context->encrypt);
    EVP_CIPHER_CTX_free(context->decrypt);
    trove_gcm_vaes_key_free(context->fast);
#endif
    trove_cipher_zero(context, sizeof *context);
    free(context);
}

int trove_cipher_context_seal(trove_cipher_context *context, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                              uint8_t *tag) {
    if (context->uses_key) return trove_cipher_seal(context->key, nonce, aad, aad_length, input, length, output, tag);
#if defined(__linux__)
    if (context->fast) {
        trove_gcm_vaes_seal(context->fast, nonce, aad, aad_length, input, length, output, tag);
        return 0;
    }
    return evp_seal(context->encrypt, NULL, NULL, nonce, aad, aad_length, input, length, output, tag);
#else
    return -1;
#endif
}

int trove_cipher_context_open(trove_cipher_context *context, const uint8_t *nonce, const uint8_t *aad,
                              size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                              const uint8_t *tag) {
    if (context->uses_key) return trove_cipher_open(context->key, nonce, aad, aad_length, input, length, output, tag);
#if defined(__linux__)
    if (context->fast) return trove_gcm_vaes_open(context->fast, nonce, aad, aad_length, input, length, output, tag);
    return evp_open(context->decrypt, NULL, NULL, nonce, aad, aad_length, input, length, output, tag);
#else
    return -1;
#endif
}
