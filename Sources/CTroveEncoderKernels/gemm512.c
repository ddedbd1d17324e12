// The packed-panel matrix multiply of trove_enc_gemm with AVX-512 (MiniLM's fp32 layers); see
// CTroveEncoderKernels.h.
//
// The same panels of 16 columns as the AVX2 kernel, one zmm register per output row: a tile of
// up to 12 rows × 16 columns keeps 12 accumulators, one panel vector and broadcasts of A read in
// place (no packed copy of A, which cost the AVX2 path 15% of a lone query). Every output element
// is the same chain of fused multiply-adds over k, in the same order, as in the AVX2 6×16
// kernel, and the epilogue (bias, residual, GELU) the same operations, so the results are
// bit-identical to it: a text's vector still depends neither on its batch nor on the CPU's
// vector width. Tiles at the bottom edge are instantiated for their row count, and the last
// panel's missing columns are masked, so edge tiles need no padded copies.

#include "gemm512.h"

#include "CTroveEncoderKernels.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define W512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,fma")))
#define INLINE inline __attribute__((always_inline))
#define PANEL TROVE_ENC_PANEL
// Rows per tile; k steps per pass over a panel slice (its 16 KB stay in L1 for every tile of a
// row block, as in the AVX2 path); rows per block of A.
#define MR 12
#define KC 256
#define MC 48

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

// The AVX2 kernel's exp and GELU (encoder_kernels.c), operation for operation, 16 lanes wide.
W512 static INLINE __m512 w512_exp(__m512 value) {
    __m512 x = _mm512_min_ps(_mm512_max_ps(value, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.7f));
    __m512 magic = _mm512_set1_ps(12582912.0f);
    __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504f), magic);
    __m512 n = _mm512_sub_ps(t, magic);
    __m512i nbits = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4B400000));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.1219444e-4f), r);
    __m512 p = _mm512_set1_ps(1.98756915e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.39819995e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16657959e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666655e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.00000012e-1f));
    __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(nbits, _mm512_set1_epi32(127)), 23));
    return _mm512_mul_ps(y, scale);
}

W512 static INLINE __m512 w512_gelu(__m512 x) {
    __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710677f));
    __m512 a = _mm512_andnot_ps(sign, z);
    __m512 one = _mm512_set1_ps(1.0f);
    __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(a, _mm512_set1_ps(0.3275911f), one));
    __m512 p = _mm512_set1_ps(1.061405429f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
    __m512 e = w512_exp(_mm512_xor_ps(_mm512_mul_ps(a, a), sign));
    __m512 y = _mm512_fnmadd_ps(_mm512_mul_ps(p, t), e, one);
    __m512 erf = _mm512_or_ps(y, _mm512_and_ps(z, sign));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, erf));
}

// `rows` (a constant where inlined) rows of A from `a` (stride lda) times kc steps of a panel:
// C tile (stride ldc, lanes `mask`) = [C +] A·B, then with `epilogue` + bias + residual, GELU.
W512 static INLINE void tile(const int rows, size_t kc, const float *a, size_t lda, const float *b, float *c,
                             size_t ldc, __mmask16 mask, int load_c, int epilogue, const float *bias,
                             const float *res, size_t ldr, int gelu) {
    __m512 acc[MR];
    for (int r = 0; r < rows; r++) acc[r] = load_c ? _mm512_maskz_loadu_ps(mask, c + r * ldc) : _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p++, b += PANEL) {
        // The panel is one stream from L3 for a lone query (the weights exceed L2): fetch 2 KB ahead.
        _mm_prefetch((const char *)(b + 32 * PANEL), _MM_HINT_T0);
        __m512 bv = _mm512_loadu_ps(b);
        for (int r = 0; r < rows; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + p]), bv, acc[r]);
    }
    if (epilogue) {
        if (bias) {
            __m512 bv = _mm512_maskz_loadu_ps(mask, bias);
            for (int r = 0; r < rows; r++) acc[r] = _mm512_add_ps(acc[r], bv);
        }
        if (res) {
            for (int r = 0; r < rows; r++) acc[r] = _mm512_add_ps(acc[r], _mm512_maskz_loadu_ps(mask, res + r * ldr));
        }
        if (gelu) {
            for (int r = 0; r < rows; r++) acc[r] = w512_gelu(acc[r]);
        }
    }
    for (int r = 0; r < rows; r++) _mm512_mask_storeu_ps(c + r * ldc, mask, acc[r]);
}

W512 static void tile_rows(size_t rows, size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                           __mmask16 mask, int load_c, int epilogue, const float *bias, const float *res, size_t ldr,
                           int gelu) {
#define CASE(n)                                                                                                  \
    case n: tile(n, kc, a, lda, b, c, ldc, mask, load_c, epilogue, bias, res, ldr, gelu); break;
    switch (rows) {
        CASE(12) CASE(11) CASE(10) CASE(9) CASE(8) CASE(7) CASE(6) CASE(5) CASE(4) CASE(3) CASE(2) CASE(1)
    default: break;
    }
#undef CASE
}

W512 void trove_gemm512(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                        size_t ldc, const float *bias, const float *residual, size_t ldr, int flags,
                        size_t panel_begin, size_t panel_end) {
    int accumulate = (flags & TROVE_ENC_ACCUMULATE) != 0, gelu = (flags & TROVE_ENC_GELU) != 0;
    for (size_t i0 = 0; i0 < m; i0 += MC) {
        size_t mc = min_size(MC, m - i0);
        for (size_t p = panel_begin; p < panel_end; p++) {
            const float *bp = packed + p * k * PANEL;
            size_t j0 = p * PANEL, width = min_size(PANEL, n - j0);
            __mmask16 mask = (__mmask16)((1u << width) - 1);
            size_t k0 = 0;
            do {
                size_t kc = min_size(KC, k - k0);
                int first = k0 == 0, last = k0 + kc == k;
                int load_c = !first || accumulate;
                for (size_t ir = 0; ir < mc; ir += MR) {
                    size_t i = i0 + ir, rows = min_size(MR, mc - ir);
                    tile_rows(rows, kc, a + i * lda + k0, lda, bp + k0 * PANEL, c + i * ldc + j0, ldc, mask, load_c,
                              last, last && bias ? bias + j0 : NULL, last && residual ? residual + i * ldr + j0 : NULL,
                              ldr, gelu && last);
                }
                k0 += kc;
            } while (k0 < k);
        }
    }
}

// -1 = not yet probed. A benign race: every thread computes the same answer.
static int gemm512_state = -1;

int trove_gemm512_available(void) {
    int v = __atomic_load_n(&gemm512_state, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
        __atomic_store_n(&gemm512_state, v, __ATOMIC_RELAXED);
    }
    return v;
}
#else
int trove_gemm512_available(void) { return 0; }

void trove_gemm512(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                   size_t ldc, const float *bias, const float *residual, size_t ldr, int flags, size_t panel_begin,
                   size_t panel_end) {
    trove_enc_portable_gemm(m, n, k, a, lda, packed, c, ldc, bias, residual, ldr, flags, panel_begin, panel_end);
}
#endif
