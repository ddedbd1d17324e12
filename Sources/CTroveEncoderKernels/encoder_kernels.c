#include "CTroveEncoderKernels.h"

#include "gemm512.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define TROVE_ENC_X86 1
#include <immintrin.h>
#endif

#define PANEL TROVE_ENC_PANEL

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

// ---------------------------------------------------------------------------------------------
// Scalar math, the same polynomials as VectorMath.swift (Cephes exp, Abramowitz & Stegun 7.1.26
// erf), used by the portable paths.

static inline float scalar_exp(float value) {
    float x = value < -87.3f ? -87.3f : value;
    x = x > 88.7f ? 88.7f : x;
    float t = x * 1.44269504f + 12582912.0f;
    float n = t - 12582912.0f;
    int bits;
    memcpy(&bits, &t, sizeof bits);
    int nbits = bits - 0x4B400000;
    float r = x - n * 0.693359375f;
    r = r + n * 2.1219444e-4f;
    float p = 1.98756915e-4f;
    p = p * r + 1.39819995e-3f;
    p = p * r + 8.3334519e-3f;
    p = p * r + 4.16657959e-2f;
    p = p * r + 1.66666655e-1f;
    p = p * r + 5.00000012e-1f;
    float y = p * (r * r) + r + 1.0f;
    unsigned scale_bits = (unsigned)(nbits + 127) << 23;
    float scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return y * scale;
}

static inline float scalar_gelu(float x) {
    float z = x * 0.70710677f;
    float a = fabsf(z);
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    float y = 1.0f - p * t * scalar_exp(-a * a);
    float e = z < 0 ? -y : y;
    return 0.5f * x * (1.0f + e);
}

// ---------------------------------------------------------------------------------------------
// Packing (shared by both paths).

size_t trove_enc_packed_count(size_t n, size_t k) { return (n + PANEL - 1) / PANEL * PANEL * k; }

void trove_enc_pack(const float *b, size_t ldb, int transposed, size_t n, size_t k, float *packed) {
    size_t panels = (n + PANEL - 1) / PANEL;
    for (size_t p = 0; p < panels; p++) {
        float *dst = packed + p * k * PANEL;
        size_t j0 = p * PANEL, width = min_size(PANEL, n - j0);
        if (transposed) {
            // Row j of B is output column j: read each row once, scatter into the panel.
            for (size_t j = 0; j < PANEL; j++) {
                if (j < width) {
                    const float *row = b + (j0 + j) * ldb;
                    for (size_t kk = 0; kk < k; kk++) dst[kk * PANEL + j] = row[kk];
                } else {
                    for (size_t kk = 0; kk < k; kk++) dst[kk * PANEL + j] = 0;
                }
            }
        } else {
            for (size_t kk = 0; kk < k; kk++) {
                const float *row = b + kk * ldb + j0;
                for (size_t j = 0; j < PANEL; j++) dst[kk * PANEL + j] = j < width ? row[j] : 0;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Portable versions: plain loops (vectorised by the compiler where the baseline allows).

static void portable_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed,
                          float *c, size_t ldc, const float *bias, const float *residual, size_t ldr,
                          int flags, size_t panel_begin, size_t panel_end) {
    for (size_t p = panel_begin; p < panel_end; p++) {
        const float *bp = packed + p * k * PANEL;
        size_t j0 = p * PANEL, width = min_size(PANEL, n - j0);
        for (size_t i = 0; i < m; i++) {
            float acc[PANEL] = {0};
            const float *row = a + i * lda;
            for (size_t kk = 0; kk < k; kk++) {
                float x = row[kk];
                for (size_t j = 0; j < PANEL; j++) acc[j] += x * bp[kk * PANEL + j];
            }
            float *out = c + i * ldc + j0;
            for (size_t j = 0; j < width; j++) {
                float y = acc[j];
                if (flags & TROVE_ENC_ACCUMULATE) y = out[j] + y;
                if (bias) y += bias[j0 + j];
                if (residual) y += residual[i * ldr + j0 + j];
                if (flags & TROVE_ENC_GELU) y = scalar_gelu(y);
                out[j] = y;
            }
        }
    }
}

static void portable_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                               size_t d, float scale, float *scratch, float *out, size_t ldo) {
    float *s = scratch;
    for (size_t i = 0; i < length; i++) {
        const float *qi = q + i * ld;
        float maximum = -INFINITY;
        for (size_t j = 0; j < length; j++) {
            const float *kj = k + j * ld;
            float dot = 0;
            for (size_t dd = 0; dd < d; dd++) dot += qi[dd] * kj[dd];
            s[j] = dot * scale;
            if (s[j] > maximum) maximum = s[j];
        }
        float total = 0;
        for (size_t j = 0; j < length; j++) {
            s[j] = scalar_exp(s[j] - maximum);
            total += s[j];
        }
        float inverse = 1.0f / total;
        float *o = out + i * ldo;
        for (size_t dd = 0; dd < d; dd++) o[dd] = 0;
        for (size_t j = 0; j < length; j++) {
            const float *vj = v + j * ld;
            float w = s[j];
            for (size_t dd = 0; dd < d; dd++) o[dd] += w * vj[dd];
        }
        for (size_t dd = 0; dd < d; dd++) o[dd] *= inverse;
    }
}

static void portable_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b,
                                float eps, float *out) {
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * width;
        float *o = out + r * width;
        float sum = 0;
        for (size_t j = 0; j < width; j++) sum += row[j];
        float mean = sum / (float)width;
        float var = 0;
        for (size_t j = 0; j < width; j++) var += (row[j] - mean) * (row[j] - mean);
        float inverse = 1.0f / sqrtf(var / (float)width + eps);
        for (size_t j = 0; j < width; j++) o[j] = (row[j] - mean) * inverse * w[j] + b[j];
    }
}

#ifdef TROVE_ENC_X86
// ---------------------------------------------------------------------------------------------
// AVX2 + FMA versions, compiled for those units only inside these functions.

#define WIDE __attribute__((target("avx2,fma")))

WIDE static inline __m256 wide_exp(__m256 value) {
    __m256 x = _mm256_min_ps(_mm256_max_ps(value, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.7f));
    __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504f), magic);
    __m256 n = _mm256_sub_ps(t, magic);
    __m256i nbits = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000));
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.1219444e-4f), r);
    __m256 p = _mm256_set1_ps(1.98756915e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.39819995e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16657959e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666655e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.00000012e-1f));
    __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(nbits, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(y, scale);
}

WIDE static inline __m256 wide_gelu(__m256 x) {
    __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 z = _mm256_mul_ps(x, _mm256_set1_ps(0.70710677f));
    __m256 a = _mm256_andnot_ps(sign, z);
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(a, _mm256_set1_ps(0.3275911f), one));
    __m256 p = _mm256_set1_ps(1.061405429f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    __m256 e = wide_exp(_mm256_xor_ps(_mm256_mul_ps(a, a), sign));
    __m256 y = _mm256_fnmadd_ps(_mm256_mul_ps(p, t), e, one);
    __m256 erf = _mm256_or_ps(y, _mm256_and_ps(z, sign));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(one, erf));
}

WIDE static inline float wide_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

WIDE static inline float wide_hmax(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The 6×16 register tile: 12 accumulators + 2 panel vectors + 1 broadcast of the 16 ymm
// registers. Per step of k: 2 loads of the packed panel (one cache line), 6 broadcasts, 12 FMAs.
// `ap` is a packed sliver of A (6 floats per step of k, one sequential stream); `load_c` starts
// from C instead of zero; with `epilogue`, bias (16 floats), residual rows (stride ldr) and GELU
// are applied before storing.
WIDE static void wide_kernel_6x16(size_t kc, const float *ap, const float *b, float *c, size_t ldc,
                                  int load_c, int epilogue, const float *bias, const float *res, size_t ldr,
                                  int gelu) {
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (load_c) {
        c00 = _mm256_loadu_ps(c + 0 * ldc), c01 = _mm256_loadu_ps(c + 0 * ldc + 8);
        c10 = _mm256_loadu_ps(c + 1 * ldc), c11 = _mm256_loadu_ps(c + 1 * ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    } else {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    }
    for (size_t p = 0; p < kc; p++, ap += 6, b += PANEL) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
        __m256 x;
        x = _mm256_broadcast_ss(ap + 0);
        c00 = _mm256_fmadd_ps(x, b0, c00), c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(ap + 1);
        c10 = _mm256_fmadd_ps(x, b0, c10), c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(ap + 2);
        c20 = _mm256_fmadd_ps(x, b0, c20), c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(ap + 3);
        c30 = _mm256_fmadd_ps(x, b0, c30), c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(ap + 4);
        c40 = _mm256_fmadd_ps(x, b0, c40), c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(ap + 5);
        c50 = _mm256_fmadd_ps(x, b0, c50), c51 = _mm256_fmadd_ps(x, b1, c51);
    }
    if (epilogue) {
        if (bias) {
            __m256 b0 = _mm256_loadu_ps(bias), b1 = _mm256_loadu_ps(bias + 8);
            c00 = _mm256_add_ps(c00, b0), c01 = _mm256_add_ps(c01, b1);
            c10 = _mm256_add_ps(c10, b0), c11 = _mm256_add_ps(c11, b1);
            c20 = _mm256_add_ps(c20, b0), c21 = _mm256_add_ps(c21, b1);
            c30 = _mm256_add_ps(c30, b0), c31 = _mm256_add_ps(c31, b1);
            c40 = _mm256_add_ps(c40, b0), c41 = _mm256_add_ps(c41, b1);
            c50 = _mm256_add_ps(c50, b0), c51 = _mm256_add_ps(c51, b1);
        }
        if (res) {
            c00 = _mm256_add_ps(c00, _mm256_loadu_ps(res + 0 * ldr)), c01 = _mm256_add_ps(c01, _mm256_loadu_ps(res + 0 * ldr + 8));
            c10 = _mm256_add_ps(c10, _mm256_loadu_ps(res + 1 * ldr)), c11 = _mm256_add_ps(c11, _mm256_loadu_ps(res + 1 * ldr + 8));
            c20 = _mm256_add_ps(c20, _mm256_loadu_ps(res + 2 * ldr)), c21 = _mm256_add_ps(c21, _mm256_loadu_ps(res + 2 * ldr + 8));
            c30 = _mm256_add_ps(c30, _mm256_loadu_ps(res + 3 * ldr)), c31 = _mm256_add_ps(c31, _mm256_loadu_ps(res + 3 * ldr + 8));
            c40 = _mm256_add_ps(c40, _mm256_loadu_ps(res + 4 * ldr)), c41 = _mm256_add_ps(c41, _mm256_loadu_ps(res + 4 * ldr + 8));
            c50 = _mm256_add_ps(c50, _mm256_loadu_ps(res + 5 * ldr)), c51 = _mm256_add_ps(c51, _mm256_loadu_ps(res + 5 * ldr + 8));
        }
        if (gelu) {
            c00 = wide_gelu(c00), c01 = wide_gelu(c01), c10 = wide_gelu(c10), c11 = wide_gelu(c11);
            c20 = wide_gelu(c20), c21 = wide_gelu(c21), c30 = wide_gelu(c30), c31 = wide_gelu(c31);
            c40 = wide_gelu(c40), c41 = wide_gelu(c41), c50 = wide_gelu(c50), c51 = wide_gelu(c51);
        }
    }
    _mm256_storeu_ps(c + 0 * ldc, c00), _mm256_storeu_ps(c + 0 * ldc + 8, c01);
    _mm256_storeu_ps(c + 1 * ldc, c10), _mm256_storeu_ps(c + 1 * ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

// Blocking: KC steps of k keep one panel slice (KC·16 floats, 16 KB) in L1 while it is reused by
// the MC/6 row slivers of A. An MC-row block of A is packed once into 6-row slivers, k-major
// (MC·k floats, at most 295 KB for k = 1536, in L2), and meets every panel from there: the
// micro-kernel then reads A as one sequential stream. Sizes from measurements on Zen 3 with the
// shapes of the MiniLM layers: KC 128 lost 20-25%, MC 96 lost up to 25%; KC 256 and 384 and MC
// 24 and 48 were within the noise of a shared machine.
#define WIDE_KC 256
#define WIDE_MC 48

WIDE static void wide_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed,
                           float *c, size_t ldc, const float *bias, const float *residual, size_t ldr, int flags,
                           size_t panel_begin, size_t panel_end, float *apack) {
    int accumulate = (flags & TROVE_ENC_ACCUMULATE) != 0, gelu = (flags & TROVE_ENC_GELU) != 0;
    for (size_t i0 = 0; i0 < m; i0 += WIDE_MC) {
        size_t mc = min_size(WIDE_MC, m - i0);
        // apack[sliver][kk][r] = A[i0 + 6·sliver + r][kk]; rows past m are zero (computed, never stored).
        for (size_t ir = 0; ir < mc; ir += 6) {
            float *dst = apack + ir * k;
            if (ir + 6 <= mc) {
                const float *r0 = a + (i0 + ir) * lda;
                for (size_t kk = 0; kk < k; kk++, dst += 6) {
                    dst[0] = r0[kk], dst[1] = r0[lda + kk], dst[2] = r0[2 * lda + kk];
                    dst[3] = r0[3 * lda + kk], dst[4] = r0[4 * lda + kk], dst[5] = r0[5 * lda + kk];
                }
                continue;
            }
            for (size_t kk = 0; kk < k; kk++) {
                for (size_t r = 0; r < 6; r++) dst[kk * 6 + r] = ir + r < mc ? a[(i0 + ir + r) * lda + kk] : 0;
            }
        }
        for (size_t p = panel_begin; p < panel_end; p++) {
            const float *bp = packed + p * k * PANEL;
            size_t j0 = p * PANEL, width = min_size(PANEL, n - j0);
            size_t k0 = 0;
            do {
                size_t kc = min_size(WIDE_KC, k - k0);
                int first = k0 == 0, last = k0 + kc == k;
                int load_c = !first || accumulate;
                for (size_t ir = 0; ir < mc; ir += 6) {
                    size_t i = i0 + ir, mr = min_size(6, m - i);
                    const float *ap = apack + ir * k + k0 * 6;
                    const float *tile_bias = last && bias ? bias + j0 : NULL;
                    const float *tile_res = last && residual ? residual + i * ldr + j0 : NULL;
                    float *out = c + i * ldc + j0;
                    if (mr == 6 && width == PANEL) {
                        wide_kernel_6x16(kc, ap, bp + k0 * PANEL, out, ldc, load_c, last, tile_bias, tile_res, ldr,
                                         gelu && last);
                        continue;
                    }
                    // Edge tile: the same kernel on a padded copy, so edge rows get bit-identical
                    // arithmetic (a text's vector must not depend on where it sits in a batch).
                    float tile[6 * PANEL], tres[6 * PANEL], tbias[PANEL];
                    for (size_t r = 0; r < 6; r++) {
                        for (size_t j = 0; j < PANEL; j++) {
                            int valid = r < mr && j < width;
                            tile[r * PANEL + j] = valid && load_c ? out[r * ldc + j] : 0;
                            tres[r * PANEL + j] = valid && tile_res ? tile_res[r * ldr + j] : 0;
                        }
                    }
                    for (size_t j = 0; j < PANEL; j++) tbias[j] = j < width && tile_bias ? tile_bias[j] : 0;
                    wide_kernel_6x16(kc, ap, bp + k0 * PANEL, tile, PANEL, 1, last, tile_bias ? tbias : NULL,
                                     tile_res ? tres : NULL, PANEL, gelu && last);
                    for (size_t r = 0; r < mr; r++) memcpy(out + r * ldc, tile + r * PANEL, width * sizeof(float));
                }
                k0 += kc;
            } while (k0 < k);
        }
    }
}

WIDE static void wide_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                                size_t d, float scale, float *scratch, float *out, size_t ldo) {
    size_t lp = (length + 15) & ~(size_t)15;
    // kt: Kᵀ (d × lp, zero past length) so 16 keys' scores come from two FMAs per dimension;
    // s: 6 rows of scores, then probabilities (unnormalised).
    float *kt = scratch, *s = scratch + d * lp;
    // Blocks of 8 keys × 8 dimensions transposed in registers (d is a multiple of 8 here);
    // element-wise strided stores took a tenth of the kernel.
    size_t full = length & ~(size_t)7;
    for (size_t j0 = 0; j0 < full; j0 += 8) {
        for (size_t d0 = 0; d0 < d; d0 += 8) {
            __m256 r0 = _mm256_loadu_ps(k + (j0 + 0) * ld + d0), r1 = _mm256_loadu_ps(k + (j0 + 1) * ld + d0);
            __m256 r2 = _mm256_loadu_ps(k + (j0 + 2) * ld + d0), r3 = _mm256_loadu_ps(k + (j0 + 3) * ld + d0);
            __m256 r4 = _mm256_loadu_ps(k + (j0 + 4) * ld + d0), r5 = _mm256_loadu_ps(k + (j0 + 5) * ld + d0);
            __m256 r6 = _mm256_loadu_ps(k + (j0 + 6) * ld + d0), r7 = _mm256_loadu_ps(k + (j0 + 7) * ld + d0);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *dst = kt + d0 * lp + j0;
            _mm256_storeu_ps(dst + 0 * lp, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(dst + 1 * lp, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(dst + 2 * lp, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(dst + 3 * lp, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(dst + 4 * lp, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(dst + 5 * lp, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(dst + 6 * lp, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(dst + 7 * lp, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    }
    for (size_t j = full; j < lp; j++) {
        if (j < length) {
            const float *kj = k + j * ld;
            for (size_t dd = 0; dd < d; dd++) kt[dd * lp + j] = kj[dd];
        } else {
            for (size_t dd = 0; dd < d; dd++) kt[dd * lp + j] = 0;
        }
    }
    __m256 vscale = _mm256_set1_ps(scale);
    for (size_t i0 = 0; i0 < length; i0 += 6) {
        size_t rows = min_size(6, length - i0);
        // Rows past the end alias the last row: computed, never stored.
        const float *qr[6];
        for (size_t r = 0; r < 6; r++) qr[r] = q + (i0 + (r < rows ? r : rows - 1)) * ld;
        // Scores: a 6 × 16 register tile per block of keys, as in the matrix multiply.
        for (size_t jc = 0; jc < lp; jc += 16) {
            __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
            __m256 a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
            for (size_t dd = 0; dd < d; dd++) {
                __m256 k0 = _mm256_loadu_ps(kt + dd * lp + jc), k1 = _mm256_loadu_ps(kt + dd * lp + jc + 8);
                __m256 x;
                x = _mm256_broadcast_ss(qr[0] + dd), a00 = _mm256_fmadd_ps(x, k0, a00), a01 = _mm256_fmadd_ps(x, k1, a01);
                x = _mm256_broadcast_ss(qr[1] + dd), a10 = _mm256_fmadd_ps(x, k0, a10), a11 = _mm256_fmadd_ps(x, k1, a11);
                x = _mm256_broadcast_ss(qr[2] + dd), a20 = _mm256_fmadd_ps(x, k0, a20), a21 = _mm256_fmadd_ps(x, k1, a21);
                x = _mm256_broadcast_ss(qr[3] + dd), a30 = _mm256_fmadd_ps(x, k0, a30), a31 = _mm256_fmadd_ps(x, k1, a31);
                x = _mm256_broadcast_ss(qr[4] + dd), a40 = _mm256_fmadd_ps(x, k0, a40), a41 = _mm256_fmadd_ps(x, k1, a41);
                x = _mm256_broadcast_ss(qr[5] + dd), a50 = _mm256_fmadd_ps(x, k0, a50), a51 = _mm256_fmadd_ps(x, k1, a51);
            }
            float *sj = s + jc;
            _mm256_storeu_ps(sj + 0 * lp, _mm256_mul_ps(a00, vscale)), _mm256_storeu_ps(sj + 0 * lp + 8, _mm256_mul_ps(a01, vscale));
            _mm256_storeu_ps(sj + 1 * lp, _mm256_mul_ps(a10, vscale)), _mm256_storeu_ps(sj + 1 * lp + 8, _mm256_mul_ps(a11, vscale));
            _mm256_storeu_ps(sj + 2 * lp, _mm256_mul_ps(a20, vscale)), _mm256_storeu_ps(sj + 2 * lp + 8, _mm256_mul_ps(a21, vscale));
            _mm256_storeu_ps(sj + 3 * lp, _mm256_mul_ps(a30, vscale)), _mm256_storeu_ps(sj + 3 * lp + 8, _mm256_mul_ps(a31, vscale));
            _mm256_storeu_ps(sj + 4 * lp, _mm256_mul_ps(a40, vscale)), _mm256_storeu_ps(sj + 4 * lp + 8, _mm256_mul_ps(a41, vscale));
            _mm256_storeu_ps(sj + 5 * lp, _mm256_mul_ps(a50, vscale)), _mm256_storeu_ps(sj + 5 * lp + 8, _mm256_mul_ps(a51, vscale));
        }
        float inverse[6] = {0};
        for (size_t r = 0; r < rows; r++) {
            float *row = s + r * lp;
            for (size_t j = length; j < lp; j++) row[j] = -INFINITY;
            __m256 vmax = _mm256_set1_ps(-INFINITY);
            for (size_t jc = 0; jc < lp; jc += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + jc));
            __m256 maximum = _mm256_set1_ps(wide_hmax(vmax));
            __m256 total = _mm256_setzero_ps();
            for (size_t jc = 0; jc < lp; jc += 8) {
                __m256 e = wide_exp(_mm256_sub_ps(_mm256_loadu_ps(row + jc), maximum));
                _mm256_storeu_ps(row + jc, e);
                total = _mm256_add_ps(total, e);
            }
            // Keys past the end weigh exactly zero (the clamped exp leaves ~1e-38 there).
            float tail = 0;
            for (size_t j = length; j < lp; j++) tail += row[j], row[j] = 0;
            inverse[r] = 1.0f / (wide_hsum(total) - tail);
        }
        // Context rows three at a time: 3 rows × 4 vectors of 8 columns = 12 accumulators.
        for (size_t r = 0; r < rows; r += 3) {
            size_t valid = min_size(3, rows - r);
            const float *p0 = s + r * lp, *p1 = s + (valid > 1 ? r + 1 : r) * lp, *p2 = s + (valid > 2 ? r + 2 : r) * lp;
            float *o0 = out + (i0 + r) * ldo, *o1 = o0 + ldo, *o2 = o0 + 2 * ldo;
            __m256 inv0 = _mm256_set1_ps(inverse[r]), inv1 = _mm256_set1_ps(inverse[r + 1]);
            __m256 inv2 = _mm256_set1_ps(inverse[r + 2]);
            size_t dc = 0;
            for (; dc + 32 <= d; dc += 32) {
                __m256 x0 = _mm256_setzero_ps(), x1 = x0, x2 = x0, x3 = x0, y0 = x0, y1 = x0, y2 = x0, y3 = x0;
                __m256 z0 = x0, z1 = x0, z2 = x0, z3 = x0;
                for (size_t j = 0; j < length; j++) {
                    const float *vj = v + j * ld + dc;
                    __m256 w0 = _mm256_broadcast_ss(p0 + j), w1 = _mm256_broadcast_ss(p1 + j);
                    __m256 w2 = _mm256_broadcast_ss(p2 + j), vv;
                    vv = _mm256_loadu_ps(vj);
                    x0 = _mm256_fmadd_ps(w0, vv, x0), y0 = _mm256_fmadd_ps(w1, vv, y0), z0 = _mm256_fmadd_ps(w2, vv, z0);
                    vv = _mm256_loadu_ps(vj + 8);
                    x1 = _mm256_fmadd_ps(w0, vv, x1), y1 = _mm256_fmadd_ps(w1, vv, y1), z1 = _mm256_fmadd_ps(w2, vv, z1);
                    vv = _mm256_loadu_ps(vj + 16);
                    x2 = _mm256_fmadd_ps(w0, vv, x2), y2 = _mm256_fmadd_ps(w1, vv, y2), z2 = _mm256_fmadd_ps(w2, vv, z2);
                    vv = _mm256_loadu_ps(vj + 24);
                    x3 = _mm256_fmadd_ps(w0, vv, x3), y3 = _mm256_fmadd_ps(w1, vv, y3), z3 = _mm256_fmadd_ps(w2, vv, z3);
                }
                _mm256_storeu_ps(o0 + dc, _mm256_mul_ps(x0, inv0)), _mm256_storeu_ps(o0 + dc + 8, _mm256_mul_ps(x1, inv0));
                _mm256_storeu_ps(o0 + dc + 16, _mm256_mul_ps(x2, inv0)), _mm256_storeu_ps(o0 + dc + 24, _mm256_mul_ps(x3, inv0));
                if (valid > 1) {
                    _mm256_storeu_ps(o1 + dc, _mm256_mul_ps(y0, inv1)), _mm256_storeu_ps(o1 + dc + 8, _mm256_mul_ps(y1, inv1));
                    _mm256_storeu_ps(o1 + dc + 16, _mm256_mul_ps(y2, inv1)), _mm256_storeu_ps(o1 + dc + 24, _mm256_mul_ps(y3, inv1));
                }
                if (valid > 2) {
                    _mm256_storeu_ps(o2 + dc, _mm256_mul_ps(z0, inv2)), _mm256_storeu_ps(o2 + dc + 8, _mm256_mul_ps(z1, inv2));
                    _mm256_storeu_ps(o2 + dc + 16, _mm256_mul_ps(z2, inv2)), _mm256_storeu_ps(o2 + dc + 24, _mm256_mul_ps(z3, inv2));
                }
            }
            for (; dc < d; dc += 8) {
                __m256 x0 = _mm256_setzero_ps(), y0 = x0, z0 = x0;
                for (size_t j = 0; j < length; j++) {
                    __m256 vv = _mm256_loadu_ps(v + j * ld + dc);
                    x0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p0 + j), vv, x0);
                    y0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p1 + j), vv, y0);
                    z0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p2 + j), vv, z0);
                }
                _mm256_storeu_ps(o0 + dc, _mm256_mul_ps(x0, inv0));
                if (valid > 1) _mm256_storeu_ps(o1 + dc, _mm256_mul_ps(y0, inv1));
                if (valid > 2) _mm256_storeu_ps(o2 + dc, _mm256_mul_ps(z0, inv2));
            }
        }
    }
}

WIDE static void wide_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b,
                                 float eps, float *out) {
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * width;
        float *o = out + r * width;
        size_t j = 0;
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        for (; j + 16 <= width; j += 16) {
            s0 = _mm256_add_ps(s0, _mm256_loadu_ps(row + j));
            s1 = _mm256_add_ps(s1, _mm256_loadu_ps(row + j + 8));
        }
        for (; j + 8 <= width; j += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(row + j));
        float sum = wide_hsum(_mm256_add_ps(s0, s1));
        for (; j < width; j++) sum += row[j];
        float mean = sum / (float)width;
        __m256 vmean = _mm256_set1_ps(mean);
        s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        for (j = 0; j + 16 <= width; j += 16) {
            __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(row + j), vmean);
            __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(row + j + 8), vmean);
            s0 = _mm256_fmadd_ps(d0, d0, s0);
            s1 = _mm256_fmadd_ps(d1, d1, s1);
        }
        for (; j + 8 <= width; j += 8) {
            __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(row + j), vmean);
            s0 = _mm256_fmadd_ps(d0, d0, s0);
        }
        float var = wide_hsum(_mm256_add_ps(s0, s1));
        for (; j < width; j++) var += (row[j] - mean) * (row[j] - mean);
        float inverse = 1.0f / sqrtf(var / (float)width + eps);
        __m256 vinv = _mm256_set1_ps(inverse);
        for (j = 0; j + 8 <= width; j += 8) {
            __m256 y = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(row + j), vmean), vinv);
            _mm256_storeu_ps(o + j, _mm256_fmadd_ps(y, _mm256_loadu_ps(w + j), _mm256_loadu_ps(b + j)));
        }
        for (; j < width; j++) o[j] = (row[j] - mean) * inverse * w[j] + b[j];
    }
}

WIDE static void wide_gelu_array(float *x, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, wide_gelu(_mm256_loadu_ps(x + i)));
    for (; i < n; i++) x[i] = scalar_gelu(x[i]);
}

// -1 = not yet probed. A benign race: every thread computes the same answer.
static int wide_state = -1;

static inline int use_wide(void) {
    int w = __atomic_load_n(&wide_state, __ATOMIC_RELAXED);
    if (w < 0) {
        __builtin_cpu_init();
        w = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&wide_state, w, __ATOMIC_RELAXED);
    }
    return w;
}
#else
static inline int use_wide(void) { return 0; }
#endif

// ---------------------------------------------------------------------------------------------
// Public entry points: dispatch once per call (a predictable branch).

int trove_enc_wide(void) { return use_wide(); }

int trove_enc_avx512(void) { return use_wide() && trove_gemm512_available(); }

// The AVX2 path of trove_enc_gemm (0 if the CPU lacks AVX2/FMA or the scratch allocation fails).
static int avx2_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                     size_t ldc, const float *bias, const float *residual, size_t ldr, int flags, size_t panel_begin,
                     size_t panel_end) {
#ifdef TROVE_ENC_X86
    if (use_wide()) {
        // The packed block of A: 64-byte aligned, freed on return (at most 295 KB).
        float *apack = aligned_alloc(64, (WIDE_MC * (k ? k : 1) * sizeof(float) + 63) & ~(size_t)63);
        if (apack) {
            wide_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end, apack);
            free(apack);
            return 1;
        }
    }
#endif
    return 0;
}

void trove_enc_avx2_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                         size_t ldc, const float *bias, const float *residual, size_t ldr, int flags, size_t panel_begin,
                         size_t panel_end) {
    size_t panels = (n + PANEL - 1) / PANEL;
    if (panel_end > panels) panel_end = panels;
    if (m == 0 || panel_begin >= panel_end) return;
    if (avx2_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end)) return;
    portable_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end);
}

void trove_enc_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                    size_t ldc, const float *bias, const float *residual, size_t ldr, int flags, size_t panel_begin,
                    size_t panel_end) {
    size_t panels = (n + PANEL - 1) / PANEL;
    if (panel_end > panels) panel_end = panels;
    if (m == 0 || panel_begin >= panel_end) return;
    // AVX-512 where the CPU has it (bit-identical to AVX2), else AVX2, else portable.
    if (trove_enc_avx512()) {
        trove_gemm512(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end);
        return;
    }
    trove_enc_avx2_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end);
}

size_t trove_enc_attention_scratch(size_t length, size_t head_size) {
    size_t lp = (length + 15) & ~(size_t)15;
    return head_size * lp + 6 * lp;
}

void trove_enc_attention(const float *q, const float *k, const float *v, size_t ld, size_t length, size_t head_size,
                         float scale, float *scratch, float *out, size_t ldo) {
    if (length == 0) return;
#ifdef TROVE_ENC_X86
    if (use_wide() && head_size % 8 == 0) {
        wide_attention(q, k, v, ld, length, head_size, scale, scratch, out, ldo);
        return;
    }
#endif
    portable_attention(q, k, v, ld, length, head_size, scale, scratch, out, ldo);
}

void trove_enc_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b, float eps,
                          float *out) {
#ifdef TROVE_ENC_X86
    if (use_wide()) {
        wide_layer_norm(x, rows, width, w, b, eps, out);
        return;
    }
#endif
    portable_layer_norm(x, rows, width, w, b, eps, out);
}

void trove_enc_gelu(float *x, size_t n) {
#ifdef TROVE_ENC_X86
    if (use_wide()) {
        wide_gelu_array(x, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) x[i] = scalar_gelu(x[i]);
}

void trove_enc_portable_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                             size_t ldc, const float *bias, const float *residual, size_t ldr, int flags,
                             size_t panel_begin, size_t panel_end) {
    size_t panels = (n + PANEL - 1) / PANEL;
    if (panel_end > panels) panel_end = panels;
    if (m == 0 || panel_begin >= panel_end) return;
    portable_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end);
}

void trove_enc_portable_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                                  size_t head_size, float scale, float *scratch, float *out, size_t ldo) {
    if (length == 0) return;
    portable_attention(q, k, v, ld, length, head_size, scale, scratch, out, ldo);
}

void trove_enc_portable_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b,
                                   float eps, float *out) {
    portable_layer_norm(x, rows, width, w, b, eps, out);
}
