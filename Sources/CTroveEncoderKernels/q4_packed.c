// Q4_0 × Q8_0 on weights repacked for AVX-512 VNNI; see CTroveEncoderKernels.h.
//
// Why a second layout: in the file's layout (a row's blocks one after another) a vector
// multiply-add runs along k and every output needs a horizontal sum at the end. Repacked, one
// 512-bit `vpdpbusd` multiplies 4 codes of 16 output rows by the same 4 activation codes (a
// broadcast) and leaves 16 row sums in its 16 lanes: no horizontal sums, no shuffles, and each
// weight vector, unpacked once per block, serves a tile of up to 8 tokens from registers.
//
// Packed layout, per group of 16 output rows and per block of 32 inputs (288 bytes, as many as
// 16 file blocks): the 16 rows' fp16 scales (32 bytes), then 4 chunks of 64 bytes; byte 4i + c
// of chunk p is byte 4p + c of row i's 16 code bytes, so its low nibble is weight 4p + c and its
// high nibble weight 16 + 4p + c. Rows past nout are zero. Every value is computed as the
// portable kernel computes it (the same integer dot, the same float operations in the same
// order), so the results are bit-identical to trove_q4_portable_matmul.

#include "CTroveEncoderKernels.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define TROVE_Q4P_X86 1
#include <immintrin.h>
#endif

#define QB TROVE_Q4_BLOCK
#define QBYTES TROVE_Q4_BLOCK_BYTES
#define GROUP TROVE_Q4_PACKED_ROWS
// Bytes of one group's block: 16 scales of 2 bytes and 16 · 16 code bytes.
#define GBYTES (GROUP * QBYTES)

static inline size_t groups_of(size_t nout) { return (nout + GROUP - 1) / GROUP; }

size_t trove_q4_packed_bytes(size_t nout, size_t nin) { return groups_of(nout) * (nin / QB) * GBYTES; }

void trove_q4_pack(const unsigned char *weights, size_t nout, size_t nin, unsigned char *packed) {
    size_t blocks = nin / QB;
    for (size_t g = 0; g < groups_of(nout); g++) {
        for (size_t b = 0; b < blocks; b++) {
            unsigned char *dst = packed + (g * blocks + b) * GBYTES;
            memset(dst, 0, GBYTES);
            for (size_t i = 0; i < GROUP && g * GROUP + i < nout; i++) {
                const unsigned char *block = weights + ((g * GROUP + i) * blocks + b) * QBYTES;
                memcpy(dst + 2 * i, block, 2);
                for (size_t p = 0; p < 4; p++) memcpy(dst + 2 * GROUP + 64 * p + 4 * i, block + 2 + 4 * p, 4);
            }
        }
    }
}

static inline float half_at(const unsigned char *bytes) {
    unsigned short half;
    memcpy(&half, bytes, sizeof half);
    return trove_q4_half_to_float(half);
}

void trove_q4_packed_portable_matmul(const unsigned char *packed, const float *bias, const signed char *q,
                                     const float *d, const int *s, size_t rows, size_t nin, size_t out_begin,
                                     size_t out_end, float *y, size_t ldy) {
    size_t blocks = nin / QB;
    for (size_t o = out_begin; o < out_end; o++) {
        size_t g = o / GROUP, i = o % GROUP;
        for (size_t t = 0; t < rows; t++) {
            float acc = 0;
            for (size_t b = 0; b < blocks; b++) {
                const unsigned char *group = packed + (g * blocks + b) * GBYTES;
                const signed char *x = q + t * nin + b * QB;
                int dot = 0;
                for (int p = 0; p < 4; p++) {
                    for (int c = 0; c < 4; c++) {
                        unsigned char byte = group[2 * GROUP + 64 * p + 4 * i + c];
                        dot += (byte & 0x0F) * x[4 * p + c] + (byte >> 4) * x[16 + 4 * p + c];
                    }
                }
                acc += half_at(group + 2 * i) * d[t * blocks + b] * (float)(dot - 8 * s[t * blocks + b]);
            }
            y[t * ldy + o] = (bias ? bias[o] : 0.0f) + acc;
        }
    }
}

#ifdef TROVE_Q4P_X86
#define VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c,fma")))
#define INLINE inline __attribute__((always_inline))
// Tokens per register tile: 8 unpacked weight vectors + 8 accumulators + 4 temporaries.
#define TILE 8

static inline int load_code_word(const signed char *x) {
    int word;
    memcpy(&word, x, sizeof word);
    return word;
}

// One group of 16 outputs (lanes `mask` stored, from y + o) for `count` tokens from token t0;
// `count` is a constant where this is inlined, so the tile lives in registers.
VNNI static INLINE void vnni_tile(const unsigned char *group, size_t blocks, const signed char *q, const float *d,
                                  const int *s, size_t nin, size_t t0, const int count, __m512 base,
                                  __mmask16 mask, float *y, size_t ldy) {
    const __m512i low = _mm512_set1_epi8(0x0F);
    __m512 acc[TILE];
    for (int t = 0; t < count; t++) acc[t] = _mm512_setzero_ps();
    for (size_t b = 0; b < blocks; b++) {
        const unsigned char *block = group + b * GBYTES;
        __m512 scales = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)block));
        __m512i w[8];
        for (int p = 0; p < 4; p++) {
            __m512i bytes = _mm512_loadu_si512((const void *)(block + 2 * GROUP + 64 * p));
            w[p] = _mm512_and_si512(bytes, low);
            w[p + 4] = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low);
        }
        for (int t = 0; t < count; t++) {
            size_t token = t0 + t;
            const signed char *x = q + token * nin + b * QB;
            // Two chains of 4 (shorter latency); the integer sum is exact either way.
            __m512i dot0 = _mm512_set1_epi32(-8 * s[token * blocks + b]), dot1 = _mm512_setzero_si512();
            dot0 = _mm512_dpbusd_epi32(dot0, w[0], _mm512_set1_epi32(load_code_word(x + 0)));
            dot1 = _mm512_dpbusd_epi32(dot1, w[1], _mm512_set1_epi32(load_code_word(x + 4)));
            dot0 = _mm512_dpbusd_epi32(dot0, w[2], _mm512_set1_epi32(load_code_word(x + 8)));
            dot1 = _mm512_dpbusd_epi32(dot1, w[3], _mm512_set1_epi32(load_code_word(x + 12)));
            dot0 = _mm512_dpbusd_epi32(dot0, w[4], _mm512_set1_epi32(load_code_word(x + 16)));
            dot1 = _mm512_dpbusd_epi32(dot1, w[5], _mm512_set1_epi32(load_code_word(x + 20)));
            dot0 = _mm512_dpbusd_epi32(dot0, w[6], _mm512_set1_epi32(load_code_word(x + 24)));
            dot1 = _mm512_dpbusd_epi32(dot1, w[7], _mm512_set1_epi32(load_code_word(x + 28)));
            __m512 scale = _mm512_mul_ps(scales, _mm512_set1_ps(d[token * blocks + b]));
            // (d_w · d_x) · dot, then added: the portable kernel's operations, no fused multiply-add.
            acc[t] = _mm512_add_ps(acc[t], _mm512_mul_ps(scale, _mm512_cvtepi32_ps(_mm512_add_epi32(dot0, dot1))));
        }
    }
    for (int t = 0; t < count; t++) _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, _mm512_add_ps(base, acc[t]));
}

VNNI static void vnni_matmul(const unsigned char *packed, const float *bias, const signed char *q, const float *d,
                             const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y,
                             size_t ldy) {
    size_t blocks = nin / QB;
    for (size_t g = out_begin / GROUP; g * GROUP < out_end; g++) {
        // The lanes of this group inside [out_begin, out_end).
        size_t first = g * GROUP < out_begin ? out_begin - g * GROUP : 0;
        size_t last = out_end - g * GROUP < GROUP ? out_end - g * GROUP : GROUP;
        __mmask16 mask = (__mmask16)(((1u << last) - 1) & ~((1u << first) - 1));
        __m512 base = bias ? _mm512_maskz_loadu_ps(mask, bias + g * GROUP) : _mm512_setzero_ps();
        const unsigned char *group = packed + g * blocks * GBYTES;
        float *out = y + g * GROUP;
        size_t t = 0;
        for (; t + TILE <= rows; t += TILE) vnni_tile(group, blocks, q, d, s, nin, t, TILE, base, mask, out, ldy);
        switch (rows - t) {
        case 7: vnni_tile(group, blocks, q, d, s, nin, t, 7, base, mask, out, ldy); break;
        case 6: vnni_tile(group, blocks, q, d, s, nin, t, 6, base, mask, out, ldy); break;
        case 5: vnni_tile(group, blocks, q, d, s, nin, t, 5, base, mask, out, ldy); break;
        case 4: vnni_tile(group, blocks, q, d, s, nin, t, 4, base, mask, out, ldy); break;
        case 3: vnni_tile(group, blocks, q, d, s, nin, t, 3, base, mask, out, ldy); break;
        case 2: vnni_tile(group, blocks, q, d, s, nin, t, 2, base, mask, out, ldy); break;
        case 1: vnni_tile(group, blocks, q, d, s, nin, t, 1, base, mask, out, ldy); break;
        default: break;
        }
    }
}

// -1 = not yet probed. A benign race: every thread computes the same answer.
static int vnni_state = -1;

static inline int use_vnni(void) {
    int v = __atomic_load_n(&vnni_state, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("f16c");
        __atomic_store_n(&vnni_state, v, __ATOMIC_RELAXED);
    }
    return v;
}
#else
static inline int use_vnni(void) { return 0; }
#endif

int trove_q4_packed_fast(void) { return use_vnni(); }

void trove_q4_packed_matmul(const unsigned char *packed, const float *bias, const signed char *q, const float *d,
                            const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y,
                            size_t ldy) {
    if (rows == 0 || out_begin >= out_end) return;
#ifdef TROVE_Q4P_X86
    if (use_vnni()) {
        vnni_matmul(packed, bias, q, d, s, rows, nin, out_begin, out_end, y, ldy);
        return;
    }
#endif
    trove_q4_packed_portable_matmul(packed, bias, q, d, s, rows, nin, out_begin, out_end, y, ldy);
}
