// Q4_0 × Q8_0 matrix multiply for 4-bit encoder weights; see CTroveEncoderKernels.h.
//
// The product of a block is computed in integers: the 4-bit codes (0…15) times the 8-bit
// activation codes, summed, minus 8 × the activation codes' sum (the codes' offset of 8), then
// scaled once by d_w · d_x. The AVX2 path does 32 products per `vpmaddubsw` (unsigned × signed
// bytes, pairs summed to 16 bits: at most 2 · 15 · 128, no saturation).

#include "CTroveEncoderKernels.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define TROVE_Q4_X86 1
#include <immintrin.h>
#endif

#define QB TROVE_Q4_BLOCK
#define QBYTES TROVE_Q4_BLOCK_BYTES
// Output rows computed together: each activation block is loaded once for all of them.
#define ROWS 4

float trove_q4_half_to_float(unsigned short h) {
    unsigned sign = (unsigned)(h & 0x8000) << 16;
    unsigned exponent = (h >> 10) & 0x1F;
    unsigned mantissa = h & 0x3FF;
    unsigned bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                mantissa <<= 1;
                e++;
            } while (!(mantissa & 0x400));
            bits = sign | (unsigned)(127 - 15 - e) << 23 | (mantissa & 0x3FF) << 13;
        }
    } else if (exponent == 31) {
        bits = sign | 0x7F800000u | mantissa << 13;
    } else {
        bits = sign | (exponent - 15 + 127) << 23 | mantissa << 13;
    }
    float out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

static inline float block_scale(const unsigned char *block) {
    unsigned short half;
    memcpy(&half, block, sizeof half);
    return trove_q4_half_to_float(half);
}

void trove_q4_dequantize(const unsigned char *blocks, size_t n, float *out) {
    for (size_t b = 0; b < n / QB; b++) {
        const unsigned char *block = blocks + b * QBYTES;
        float d = block_scale(block);
        for (int j = 0; j < 16; j++) {
            out[b * QB + j] = (float)((block[2 + j] & 0x0F) - 8) * d;
            out[b * QB + j + 16] = (float)((block[2 + j] >> 4) - 8) * d;
        }
    }
}

void trove_q8_portable_quantize(const float *x, size_t rows, size_t n, signed char *q, float *d, int *s) {
    size_t blocks = n / QB;
    for (size_t r = 0; r < rows; r++) {
        for (size_t b = 0; b < blocks; b++) {
            const float *v = x + r * n + b * QB;
            float largest = 0;
            for (int j = 0; j < QB; j++) largest = fmaxf(largest, fabsf(v[j]));
            float scale = largest / 127.0f;
            float inverse = scale > 0 ? 1.0f / scale : 0.0f;
            signed char *codes = q + r * n + b * QB;
            int sum = 0;
            for (int j = 0; j < QB; j++) {
                // Round half to even, as lrintf in the default rounding mode.
                long code = lrintf(v[j] * inverse);
                code = code > 127 ? 127 : code < -128 ? -128 : code;
                codes[j] = (signed char)code;
                sum += (int)code;
            }
            d[r * blocks + b] = scale;
            s[r * blocks + b] = sum;
        }
    }
}

// Largest nin the unpacked row buffers hold (the e5 feed-forward width is 1536).
#define MAX_NIN 4096

void trove_q4_portable_matmul(const unsigned char *weights, const float *bias, const signed char *q, const float *d,
                              const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y,
                              size_t ldy) {
    size_t blocks = nin / QB;
    for (size_t o = out_begin; o < out_end; o++) {
        const unsigned char *row = weights + o * blocks * QBYTES;
        for (size_t t = 0; t < rows; t++) {
            float acc = 0;
            for (size_t b = 0; b < blocks; b++) {
                const unsigned char *block = row + b * QBYTES;
                const signed char *x = q + t * nin + b * QB;
                int dot = 0;
                for (int j = 0; j < 16; j++) {
                    dot += (block[2 + j] & 0x0F) * x[j] + (block[2 + j] >> 4) * x[j + 16];
                }
                acc += block_scale(block) * d[t * blocks + b] * (float)(dot - 8 * s[t * blocks + b]);
            }
            y[t * ldy + o] = (bias ? bias[o] : 0.0f) + acc;
        }
    }
}

#ifdef TROVE_Q4_X86
#define WIDE __attribute__((target("avx2,fma")))

WIDE static inline float hsum(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}

// Unpacks `count` rows' codes into bytes 0…15 (16 bytes → 32 codes per block: two AND/shift
// steps) and their block scales.
WIDE static void wide_unpack_rows(const unsigned char *weights, size_t nin, size_t first, size_t count,
                                  unsigned char *codes, float *scales) {
    size_t blocks = nin / QB;
    const __m128i low = _mm_set1_epi8(0x0F);
    for (size_t r = 0; r < count; r++) {
        const unsigned char *row = weights + (first + r) * blocks * QBYTES;
        for (size_t b = 0; b < blocks; b++) {
            const unsigned char *block = row + b * QBYTES;
            scales[r * blocks + b] = block_scale(block);
            __m128i bytes = _mm_loadu_si128((const __m128i *)(block + 2));
            _mm_store_si128((__m128i *)(codes + r * nin + b * QB), _mm_and_si128(bytes, low));
            _mm_store_si128((__m128i *)(codes + r * nin + b * QB + 16), _mm_and_si128(_mm_srli_epi16(bytes, 4), low));
        }
    }
}

// Two tokens against up to ROWS unpacked rows: each weight block is loaded once for both
// tokens, each activation block once for all rows.
WIDE static void wide_matmul(const unsigned char *weights, const float *bias, const signed char *q, const float *d,
                             const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y,
                             size_t ldy) {
    size_t blocks = nin / QB;
    // This call's unpacked rows: ROWS · MAX_NIN bytes and ROWS · MAX_NIN/32 scales (17 KB of stack).
    unsigned char codes[ROWS * MAX_NIN] __attribute__((aligned(32)));
    float scales[ROWS * (MAX_NIN / QB)];
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t o = out_begin; o < out_end; o += ROWS) {
        size_t count = out_end - o < ROWS ? out_end - o : ROWS;
        wide_unpack_rows(weights, nin, o, count, codes, scales);
        // Rows past `count` repeat the last real row; their results are not stored.
        const unsigned char *w[ROWS];
        const float *sw[ROWS];
        for (size_t r = 0; r < ROWS; r++) {
            size_t rr = r < count ? r : count - 1;
            w[r] = codes + rr * nin;
            sw[r] = scales + rr * blocks;
        }
        size_t t = 0;
        for (; t + 2 <= rows; t += 2) {
            const signed char *x0 = q + t * nin, *x1 = x0 + nin;
            const float *d0 = d + t * blocks, *d1 = d0 + blocks;
            const int *s0 = s + t * blocks, *s1 = s0 + blocks;
            __m256 a0[ROWS], a1[ROWS];
            float f0[ROWS] = {0}, f1[ROWS] = {0};
            for (size_t r = 0; r < ROWS; r++) a0[r] = a1[r] = _mm256_setzero_ps();
            for (size_t b = 0; b < blocks; b++) {
                __m256i xv0 = _mm256_loadu_si256((const __m256i *)(x0 + b * QB));
                __m256i xv1 = _mm256_loadu_si256((const __m256i *)(x1 + b * QB));
                float sum0 = (float)s0[b], sum1 = (float)s1[b];
                for (size_t r = 0; r < ROWS; r++) {
                    __m256i wv = _mm256_load_si256((const __m256i *)(w[r] + b * QB));
                    __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, xv0), ones);
                    __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, xv1), ones);
                    float scale0 = sw[r][b] * d0[b], scale1 = sw[r][b] * d1[b];
                    a0[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(scale0), a0[r]);
                    a1[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(scale1), a1[r]);
                    f0[r] += scale0 * sum0;
                    f1[r] += scale1 * sum1;
                }
            }
            for (size_t r = 0; r < count; r++) {
                float base = bias ? bias[o + r] : 0.0f;
                y[t * ldy + o + r] = base + hsum(a0[r]) - 8.0f * f0[r];
                y[(t + 1) * ldy + o + r] = base + hsum(a1[r]) - 8.0f * f1[r];
            }
        }
        for (; t < rows; t++) {
            const signed char *x0 = q + t * nin;
            const float *d0 = d + t * blocks;
            const int *s0 = s + t * blocks;
            __m256 a0[ROWS];
            float f0[ROWS] = {0};
            for (size_t r = 0; r < ROWS; r++) a0[r] = _mm256_setzero_ps();
            for (size_t b = 0; b < blocks; b++) {
                __m256i xv0 = _mm256_loadu_si256((const __m256i *)(x0 + b * QB));
                float sum0 = (float)s0[b];
                for (size_t r = 0; r < ROWS; r++) {
                    __m256i wv = _mm256_load_si256((const __m256i *)(w[r] + b * QB));
                    __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, xv0), ones);
                    float scale0 = sw[r][b] * d0[b];
                    a0[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(scale0), a0[r]);
                    f0[r] += scale0 * sum0;
                }
            }
            for (size_t r = 0; r < count; r++) {
                y[t * ldy + o + r] = (bias ? bias[o + r] : 0.0f) + hsum(a0[r]) - 8.0f * f0[r];
            }
        }
    }
}

// Q8_0 quantization, 32 floats (4 vectors) per block: the same scale (largest / 127, the same
// division) and the same codes (`vcvtps2dq` rounds half to even in the default rounding mode,
// as lrintf; `vpackssdw`/`vpacksswb` saturate as the clamp does).
WIDE static void wide_quantize(const float *x, size_t rows, size_t n, signed char *q, float *d, int *s) {
    size_t blocks = n / QB;
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    // Undoes the lane interleaving of the two 128-bit halves in the packs.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (size_t r = 0; r < rows; r++) {
        for (size_t b = 0; b < blocks; b++) {
            const float *v = x + r * n + b * QB;
            __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8), v2 = _mm256_loadu_ps(v + 16);
            __m256 v3 = _mm256_loadu_ps(v + 24);
            __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, magnitude), _mm256_and_ps(v1, magnitude)),
                                     _mm256_max_ps(_mm256_and_ps(v2, magnitude), _mm256_and_ps(v3, magnitude)));
            __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            h = _mm_max_ps(h, _mm_movehl_ps(h, h));
            h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
            float scale = _mm_cvtss_f32(h) / 127.0f;
            __m256 inverse = _mm256_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
            __m256i c0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, inverse)), c1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, inverse));
            __m256i c2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, inverse)), c3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, inverse));
            __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(c0, c1), _mm256_packs_epi32(c2, c3));
            bytes = _mm256_permutevar8x32_epi32(bytes, order);
            _mm256_storeu_si256((__m256i *)(q + r * n + b * QB), bytes);
            // The sum of the stored (saturated) codes.
            __m256i wide = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), bytes), _mm256_set1_epi16(1));
            __m128i t = _mm_add_epi32(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
            d[r * blocks + b] = scale;
            s[r * blocks + b] = _mm_cvtsi128_si32(t);
        }
    }
}

static int q4_wide_state = -1;

static inline int q4_use_wide(void) {
    int w = __atomic_load_n(&q4_wide_state, __ATOMIC_RELAXED);
    if (w < 0) {
        __builtin_cpu_init();
        w = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&q4_wide_state, w, __ATOMIC_RELAXED);
    }
    return w;
}
#endif

void trove_q8_quantize(const float *x, size_t rows, size_t n, signed char *q, float *d, int *s) {
#ifdef TROVE_Q4_X86
    if (q4_use_wide()) {
        wide_quantize(x, rows, n, q, d, s);
        return;
    }
#endif
    trove_q8_portable_quantize(x, rows, n, q, d, s);
}

void trove_q4_matmul(const unsigned char *weights, const float *bias, const signed char *q, const float *d,
                     const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y, size_t ldy) {
#ifdef TROVE_Q4_X86
    if (nin <= MAX_NIN && q4_use_wide()) {
        wide_matmul(weights, bias, q, d, s, rows, nin, out_begin, out_end, y, ldy);
        return;
    }
#endif
    trove_q4_portable_matmul(weights, bias, q, d, s, rows, nin, out_begin, out_end, y, ldy);
}
