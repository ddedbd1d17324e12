// Fuzz target for the encrypted-page codec (Sources/CTroveCipher/page.c) with OpenSSL's AES-GCM.
//
// Each input picks a page size, file kind, page number and readable head, then:
//  1. decodes the input itself as a sealed page: must not crash, and (the input being random to
//     a key it never saw) must be refused;
//  2. seals the input as a plaintext page and opens it again: must round-trip exactly, with the
//     reserved bytes zeroed;
//  3. flips one bit of the sealed page (position from the input) or changes one field of the
//     authenticated data: must be refused.
#include "CTroveCipher.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t file_id[16] = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                                    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf};
static uint8_t page[65536], sealed[65536], opened[65536];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 12) return 0;
    size_t page_size = (size_t)512 << (data[0] % 8);
    int file = 1 + data[1] % 3;
    uint32_t page_number = ((uint32_t)data[2] << 24) | ((uint32_t)data[3] << 16) | ((uint32_t)data[4] << 8) | data[5];
    size_t head = (data[6] & 1) ? 100 : 0;
    size_t flip = (((size_t)data[7] << 8) | data[8]) % page_size;
    const uint8_t *extra = data + 9;  // 3 bytes of "salts", padded below
    uint8_t salts[8] = {extra[0], extra[1], extra[2], 0, 0, 0, 0, 0};
    const uint8_t *body = data + 12;
    size_t body_size = size - 12;
    memset(page, 0, page_size);
    memcpy(page, body, body_size < page_size ? body_size : page_size);

    // 1. The raw input as a sealed page.
    memcpy(opened, page, page_size);
    if (trove_cipher_open_page(key, file_id, file, page_number, salts, 8, opened, page_size, head) == 0) abort();
    for (size_t i = page_size - TROVE_CIPHER_RESERVE; i < page_size; i++)
        if (opened[i] != 0) abort();

    // 2. Round trip (SQLite hands the VFS pages whose reserved bytes are zero).
    memset(page + page_size - TROVE_CIPHER_RESERVE, 0, TROVE_CIPHER_RESERVE);
    memcpy(sealed, page, page_size);
    if (trove_cipher_seal_page(key, file_id, file, page_number, salts, 8, sealed, page_size, head) != 0) abort();
    if (memcmp(sealed, page, head) != 0) abort();
    memcpy(opened, sealed, page_size);
    if (trove_cipher_open_page(key, file_id, file, page_number, salts, 8, opened, page_size, head) != 0) abort();
    if (memcmp(opened, page, page_size) != 0) abort();

    // 3. One flipped bit, or another page number / kind / salt.
    memcpy(opened, sealed, page_size);
    if (flip >= page_size - 4) flip = 0;  // the last 4 reserved bytes are not authenticated (always zero)
    opened[flip] ^= (uint8_t)(1u << (data[8] % 8));
    if (trove_cipher_open_page(key, file_id, file, page_number, salts, 8, opened, page_size, head) == 0) abort();
    memcpy(opened, sealed, page_size);
    if (trove_cipher_open_page(key, file_id, file, page_number + 1, salts, 8, opened, page_size, head) == 0) abort();
    memcpy(opened, sealed, page_size);
    if (trove_cipher_open_page(key, file_id, 1 + file % 3, page_number, salts, 8, opened, page_size, head) == 0) abort();
    memcpy(opened, sealed, page_size);
    salts[7] ^= 1;
    if (trove_cipher_open_page(key, file_id, file, page_number, salts, 8, opened, page_size, head) == 0) abort();
    return 0;
}
