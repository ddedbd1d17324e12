// Kernels for loading index snapshots: the checksum of HNSW snapshot version 4 and the check
// that vectors are finite, both run on each piece of a snapshot right after it is copied, while
// the piece is still in the core's cache.
#include "CTroveKernels.h"
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define TROVE_X86 1
#include <immintrin.h>
#endif

// The first 32 outputs of splitmix64 from the state 0x54524F5648534E57 ("TROVHNSW"): 0-22 per
// stripe and lane, 24-31 per lane between blocks (23 unused).
static const uint64_t checksum_keys[32] = {
    0xB742CDF47E797ED6ULL, 0x21391428FBD13C81ULL, 0x1DA9EEC7708E6D4CULL, 0x544E88F86F939DC9ULL,
    0xE0F1B3538C382DE6ULL, 0x09B19535538128F2ULL, 0x807919D1F35F2C84ULL, 0x49C84AE8C95337A2ULL,
    0xA3E38C5CE36DA180ULL, 0x85BA247A8E1815A0ULL, 0x3B1D773E354CA863ULL, 0x988A4583EC59F676ULL,
    0x2E93747D2FCDFAE7ULL, 0x74F40B928C30B7ABULL, 0x276C84CCB16C7D8BULL, 0xDAB7E4AE200FE483ULL,
    0xA65A65E7B6034A87ULL, 0x675B4105E313391DULL, 0xAECA3A8055C372B7ULL, 0x66DD8E06D66729F4ULL,
    0xE93EC62945E9A9D1ULL, 0x546220E28C0D5A4DULL, 0x7DBEF05597BD8F78ULL, 0x1F95B3CB208D2AC5ULL,
    0xC40CF7036BFAC448ULL, 0x9D1138E34740544EULL, 0xF3A85B5F2EFD33AAULL, 0x36973FF10FB0B57CULL,
    0xC7F8B5E96E02C84AULL, 0x34A7C3CC9B728AB6ULL, 0x0630D392F09E8392ULL, 0x964D2EE293C8A497ULL,
};

static void portable_checksum_blocks(uint64_t acc[8], const unsigned char *p, size_t blocks) {
    uint64_t a[8];
    memcpy(a, acc, sizeof a);
    for (size_t b = 0; b < blocks; b++, p += 1024) {
        for (int s = 0; s < 16; s++) {
            for (int j = 0; j < 8; j++) {
                uint64_t w;
                memcpy(&w, p + s * 64 + j * 8, 8);
                uint64_t k = w ^ checksum_keys[s + j];
                a[j] += (k & 0xFFFFFFFFULL) * (k >> 32) + w;
            }
        }
        for (int j = 0; j < 8; j++) {
            uint64_t x = a[j];
            x ^= x >> 47;
            x ^= checksum_keys[24 + j];
            a[j] = x * 0x9E3779B1ULL;
        }
    }
    memcpy(acc, a, sizeof a);
}

#ifdef TROVE_X86
#define WIDE __attribute__((target("avx2")))

WIDE static void wide_checksum_blocks(uint64_t acc[8], const unsigned char *p, size_t blocks) {
    __m256i a0 = _mm256_loadu_si256((const __m256i *)acc), a1 = _mm256_loadu_si256((const __m256i *)(acc + 4));
    const __m256i prime = _mm256_set1_epi64x(0x9E3779B1LL);
    const __m256i s0 = _mm256_loadu_si256((const __m256i *)(checksum_keys + 24));
    const __m256i s1 = _mm256_loadu_si256((const __m256i *)(checksum_keys + 28));
    for (size_t b = 0; b < blocks; b++, p += 1024) {
        for (int s = 0; s < 16; s++) {
            __m256i w0 = _mm256_loadu_si256((const __m256i *)(p + s * 64));
            __m256i w1 = _mm256_loadu_si256((const __m256i *)(p + s * 64 + 32));
            __m256i k0 = _mm256_xor_si256(w0, _mm256_loadu_si256((const __m256i *)(checksum_keys + s)));
            __m256i k1 = _mm256_xor_si256(w1, _mm256_loadu_si256((const __m256i *)(checksum_keys + s + 4)));
            a0 = _mm256_add_epi64(a0, _mm256_add_epi64(_mm256_mul_epu32(k0, _mm256_srli_epi64(k0, 32)), w0));
            a1 = _mm256_add_epi64(a1, _mm256_add_epi64(_mm256_mul_epu32(k1, _mm256_srli_epi64(k1, 32)), w1));
        }
        // x * 0x9E3779B1 mod 2^64 from 32 × 32-bit products: lo(x) * P + (hi(x) * P << 32).
        __m256i x0 = _mm256_xor_si256(_mm256_xor_si256(a0, _mm256_srli_epi64(a0, 47)), s0);
        __m256i x1 = _mm256_xor_si256(_mm256_xor_si256(a1, _mm256_srli_epi64(a1, 47)), s1);
        a0 = _mm256_add_epi64(_mm256_mul_epu32(x0, prime), _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x0, 32), prime), 32));
        a1 = _mm256_add_epi64(_mm256_mul_epu32(x1, prime), _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x1, 32), prime), 32));
    }
    _mm256_storeu_si256((__m256i *)acc, a0);
    _mm256_storeu_si256((__m256i *)(acc + 4), a1);
}

static int checksum_wide = -1;

static inline int use_avx2(void) {
    int w = __atomic_load_n(&checksum_wide, __ATOMIC_RELAXED);
    if (w < 0) {
        __builtin_cpu_init();
        w = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&checksum_wide, w, __ATOMIC_RELAXED);
    }
    return w;
}
#endif

void trove_checksum_blocks(uint64_t acc[8], const void *data, size_t blocks) {
#ifdef TROVE_X86
    if (use_avx2()) {
        wide_checksum_blocks(acc, (const unsigned char *)data, blocks);
        return;
    }
#endif
    portable_checksum_blocks(acc, (const unsigned char *)data, blocks);
}

void trove_checksum_blocks_portable(uint64_t acc[8], const void *data, size_t blocks) {
    portable_checksum_blocks(acc, (const unsigned char *)data, blocks);
}

ptrdiff_t trove_first_nonfinite(const float *values, size_t count) {
    // Exponent bits all ones (infinite or NaN) carry into bit 31 when 1 is added to the exponent.
    size_t i = 0;
    while (i < count) {
        size_t end = count - i > 1024 ? i + 1024 : count;
        uint32_t any = 0;
        for (size_t j = i; j < end; j++) {
            uint32_t bits;
            memcpy(&bits, values + j, 4);
            any |= (bits & 0x7F800000u) + 0x00800000u;
        }
        if (any & 0x80000000u) {
            for (size_t j = i; j < end; j++) {
                uint32_t bits;
                memcpy(&bits, values + j, 4);
                if ((bits & 0x7F800000u) == 0x7F800000u) return (ptrdiff_t)j;
            }
        }
        i = end;
    }
    return -1;
}
