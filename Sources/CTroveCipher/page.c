// Sealing and opening one page. The authenticated data binds a page to its place: which file
// (database, WAL, journal), which file identity (the random id in the key header), which page
// number, which page size, plus the readable head of page 1 (and optional extra bytes; the VFS
// passes none). A page copied to another position, another file or another database fails its tag.

#include "CTroveCipher.h"

#include <string.h>

#define AAD_FIXED 32  // "TRV1", file kind + 3 zero bytes, file id (16), page number, page size
#define AAD_MAX (AAD_FIXED + 16 + 100)

static size_t build_aad(uint8_t *aad, const uint8_t *file_id, int file, uint32_t page_number,
                        size_t page_size, const uint8_t *extra, size_t extra_length,
                        const uint8_t *head, size_t head_length) {
    size_t n = 0;
    memcpy(aad, "TRV1", 4);
    aad[4] = (uint8_t)file;
    aad[5] = aad[6] = aad[7] = 0;
    memcpy(aad + 8, file_id, TROVE_CIPHER_FILE_ID_SIZE);
    aad[24] = (uint8_t)(page_number >> 24);
    aad[25] = (uint8_t)(page_number >> 16);
    aad[26] = (uint8_t)(page_number >> 8);
    aad[27] = (uint8_t)page_number;
    aad[28] = (uint8_t)(page_size >> 24);
    aad[29] = (uint8_t)(page_size >> 16);
    aad[30] = (uint8_t)(page_size >> 8);
    aad[31] = (uint8_t)page_size;
    n = AAD_FIXED;
    if (extra_length > 16) extra_length = 16;
    if (extra && extra_length) {
        memcpy(aad + n, extra, extra_length);
        n += extra_length;
    }
    if (head_length) {
        memcpy(aad + n, head, head_length);
        n += head_length;
    }
    return n;
}

static int valid_geometry(size_t page_size, size_t plaintext_head) {
    return page_size >= 512 && page_size <= 65536 && plaintext_head <= 100
        && plaintext_head + TROVE_CIPHER_RESERVE < page_size;
}

int trove_cipher_seal_page_into(trove_cipher_context *cipher, const uint8_t *file_id, int file,
                                uint32_t page_number, const uint8_t *extra, size_t extra_length,
                                const uint8_t *input, uint8_t *output, size_t page_size, size_t plaintext_head) {
    uint8_t aad[AAD_MAX];
    if (!cipher || !valid_geometry(page_size, plaintext_head)) return -1;
    uint8_t *reserve = output + page_size - TROVE_CIPHER_RESERVE;
    if (output != input) memcpy(output, input, plaintext_head);
    // A fresh nonce per write, from the context's random start plus a counter (see
    // trove_cipher_context_nonce for why it repeats no more often than random 96-bit nonces).
    if (trove_cipher_context_nonce(cipher, reserve) != 0) return -1;
    memset(reserve + TROVE_CIPHER_NONCE_SIZE + TROVE_CIPHER_TAG_SIZE, 0,
           TROVE_CIPHER_RESERVE - TROVE_CIPHER_NONCE_SIZE - TROVE_CIPHER_TAG_SIZE);
    size_t aad_length = build_aad(aad, file_id, file, page_number, page_size, extra, extra_length,
                                  input, plaintext_head);
    size_t body = page_size - TROVE_CIPHER_RESERVE - plaintext_head;
    return trove_cipher_context_seal(cipher, reserve, aad, aad_length, input + plaintext_head, body,
                                     output + plaintext_head, reserve + TROVE_CIPHER_NONCE_SIZE);
}

int trove_cipher_open_page_into(trove_cipher_context *cipher, const uint8_t *file_id, int file,
                                uint32_t page_number, const uint8_t *extra, size_t extra_length,
                                const uint8_t *input, uint8_t *output, size_t page_size, size_t plaintext_head) {
    uint8_t aad[AAD_MAX];
    uint8_t nonce[TROVE_CIPHER_NONCE_SIZE];
    uint8_t tag[TROVE_CIPHER_TAG_SIZE];
    if (!cipher || !valid_geometry(page_size, plaintext_head)) return -1;
    const uint8_t *reserve = input + page_size - TROVE_CIPHER_RESERVE;
    memcpy(nonce, reserve, sizeof nonce);
    memcpy(tag, reserve + TROVE_CIPHER_NONCE_SIZE, sizeof tag);
    size_t aad_length = build_aad(aad, file_id, file, page_number, page_size, extra, extra_length,
                                  input, plaintext_head);
    if (output != input) memcpy(output, input, plaintext_head);
    size_t body = page_size - TROVE_CIPHER_RESERVE - plaintext_head;
    int rc = trove_cipher_context_open(cipher, nonce, aad, aad_length, input + plaintext_head, body,
                                       output + plaintext_head, tag);
    // SQLite never looks at the reserved bytes, but the WAL and journal checksums cover them:
    // SQLite wrote zeros there (pages come from these reads or are zero-filled), so return zeros.
    memset(output + page_size - TROVE_CIPHER_RESERVE, 0, TROVE_CIPHER_RESERVE);
    return rc;
}

// The one-shot forms key a context for a single page (tests, tools); the VFS keeps one per file.
int trove_cipher_seal_page(const uint8_t *key, const uint8_t *file_id, int file, uint32_t page_number,
                           const uint8_t *extra, size_t extra_length, uint8_t *page, size_t page_size,
                           size_t plaintext_head) {
    trove_cipher_context *cipher = trove_cipher_context_new(key);
    int rc = trove_cipher_seal_page_into(cipher, file_id, file, page_number, extra, extra_length, page, page,
                                         page_size, plaintext_head);
    trove_cipher_context_free(cipher);
    return rc;
}

int trove_cipher_open_page(const uint8_t *key, const uint8_t *file_id, int file, uint32_t page_number,
                           const uint8_t *extra, size_t extra_length, uint8_t *page, size_t page_size,
                           size_t plaintext_head) {
    trove_cipher_context *cipher = trove_cipher_context_new(key);
    int rc = trove_cipher_open_page_into(cipher, file_id, file, page_number, extra, extra_length, page, page,
                                         page_size, plaintext_head);
    trove_cipher_context_free(cipher);
    return rc;
}
