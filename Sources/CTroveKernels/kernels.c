#include "CTroveKernels.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define TROVE_X86 1
#include <immintrin.h>
#endif

// ---------------------------------------------------------------------------------------------
// Portable versions: plain loops with several accumulators (vectorised by the compiler where the
// baseline allows: SSE2 on x86-64, NEON on arm64).

static float portable_dot(const float *a, const float *b, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static float portable_l2sq(const float *a, const float *b, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1], d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
    }
    for (; i < n; i++) {
        float d = a[i] - b[i];
        s0 += d * d;
    }
    return (s0 + s1) + (s2 + s3);
}

static int32_t portable_dot_i8(const int8_t *a, const int8_t *b, size_t n) {
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

static uint32_t portable_hamming(const uint64_t *a, const uint64_t *b, size_t words) {
    uint32_t s = 0;
    for (size_t i = 0; i < words; i++) s += (uint32_t)__builtin_popcountll(a[i] ^ b[i]);
    return s;
}

#ifdef TROVE_X86
// ---------------------------------------------------------------------------------------------
// AVX2 + FMA versions, compiled for those units only inside these functions.

#define WIDE __attribute__((target("avx2,fma,popcnt")))

WIDE static inline float hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

WIDE static float wide_dot(const float *a, const float *b, size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

WIDE static float wide_l2sq(const float *a, const float *b, size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
        __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        s1 = _mm256_fmadd_ps(d1, d1, s1);
        s2 = _mm256_fmadd_ps(d2, d2, s2);
        s3 = _mm256_fmadd_ps(d3, d3, s3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        s0 = _mm256_fmadd_ps(d, d, s0);
    }
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) {
        float d = a[i] - b[i];
        s += d * d;
    }
    return s;
}

// Streaming many contiguous rows, no software prefetch: the hardware prefetchers follow forward
// streams, and measured on Zen 3 (BENCHMARKS.md) prefetching a few rows ahead made the DRAM-bound
// scan slower, not faster. What does raise one core's bandwidth is reading several streams far
// apart at once (each gets its own prefetch stream, so more cache lines are in flight): see the
// _streams variants below. Keeping the buffer in 2 MB pages helps too (RowBuffer.swift).
WIDE static void wide_dot_rows(const float *q, const float *rows, size_t count, size_t n, float *out) {
    for (size_t r = 0; r < count; r++) out[r] = wide_dot(q, rows + r * n, n);
}

WIDE static void wide_l2sq_rows(const float *q, const float *rows, size_t count, size_t n, float *out) {
    for (size_t r = 0; r < count; r++) out[r] = wide_l2sq(q, rows + r * n, n);
}

// `streams` runs of `count` rows, `stride` rows apart, visited row by row in turn.
WIDE static void wide_dot_rows_streams(const float *q, const float *rows, size_t count, size_t stride,
                                       size_t streams, size_t n, float *out) {
    for (size_t r = 0; r < count; r++)
        for (size_t j = 0; j < streams; j++) out[j * count + r] = wide_dot(q, rows + (j * stride + r) * n, n);
}

WIDE static void wide_l2sq_rows_streams(const float *q, const float *rows, size_t count, size_t stride,
                                        size_t streams, size_t n, float *out) {
    for (size_t r = 0; r < count; r++)
        for (size_t j = 0; j < streams; j++) out[j * count + r] = wide_l2sq(q, rows + (j * stride + r) * n, n);
}

// Rows picked by slot (a filtered scan): the addresses jump, so the hardware cannot guess the
// next row; prefetch the row a few slots ahead in each run, all of its cache lines. Measured with
// cold caches on Zen 3: one run with 4 rows ahead is best for sparse lists (1-25% of the rows);
// for dense lists (50%) four runs side by side with 2 ahead are ~25% faster, as for the full scan.
WIDE static inline void prefetch_row(const float *row, size_t n) {
    const char *p = (const char *)row;
    for (size_t off = 0; off < n * sizeof(float); off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

static inline size_t gather_ahead(size_t streams) { return streams > 1 ? 2 : 4; }

WIDE static void wide_dot_gather(const float *q, const float *base, const uint32_t *slots, size_t count,
                                 size_t stride, size_t streams, size_t n, float *out) {
    size_t ahead = gather_ahead(streams);
    for (size_t r = 0; r < count; r++) {
        for (size_t j = 0; j < streams; j++) {
            const uint32_t *run = slots + j * stride;
            if (r + ahead < count) prefetch_row(base + (size_t)run[r + ahead] * n, n);
            out[j * count + r] = wide_dot(q, base + (size_t)run[r] * n, n);
        }
    }
}

WIDE static void wide_l2sq_gather(const float *q, const float *base, const uint32_t *slots, size_t count,
                                  size_t stride, size_t streams, size_t n, float *out) {
    size_t ahead = gather_ahead(streams);
    for (size_t r = 0; r < count; r++) {
        for (size_t j = 0; j < streams; j++) {
            const uint32_t *run = slots + j * stride;
            if (r + ahead < count) prefetch_row(base + (size_t)run[r + ahead] * n, n);
            out[j * count + r] = wide_l2sq(q, base + (size_t)run[r] * n, n);
        }
    }
}

WIDE static int32_t wide_dot_i8(const int8_t *a, const int8_t *b, size_t n) {
    __m256i s = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        // Sign-extend 16 bytes to 16-bit lanes, multiply-add pairs into 32-bit lanes: exact.
        __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(x, y));
    }
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
    int32_t total = _mm_cvtsi128_si32(t);
    for (; i < n; i++) total += (int32_t)a[i] * (int32_t)b[i];
    return total;
}

WIDE static uint32_t wide_hamming(const uint64_t *a, const uint64_t *b, size_t words) {
    uint64_t s = 0;
    for (size_t i = 0; i < words; i++) s += (uint64_t)_mm_popcnt_u64(a[i] ^ b[i]);
    return (uint32_t)s;
}

// -1 = not yet probed. A benign race: every thread computes the same answer.
static int wide_state = -1;

static inline int use_wide(void) {
    int w = __atomic_load_n(&wide_state, __ATOMIC_RELAXED);
    if (w < 0) {
        __builtin_cpu_init();
        w = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
        __atomic_store_n(&wide_state, w, __ATOMIC_RELAXED);
    }
    return w;
}
#else
static inline int use_wide(void) { return 0; }
#endif

// The portable batch loops, in the wide kernels' layout: out[j * count + r] scores row
// (j * stride + r), or the row at slots[j * stride + r].
typedef float (*distance_fn)(const float *, const float *, size_t);

static void portable_rows(distance_fn distance, const float *q, const float *rows, size_t count, size_t stride,
                          size_t streams, size_t n, float *out) {
    for (size_t r = 0; r < count; r++)
        for (size_t j = 0; j < streams; j++) out[j * count + r] = distance(q, rows + (j * stride + r) * n, n);
}

static void portable_gather(distance_fn distance, const float *q, const float *base, const uint32_t *slots,
                            size_t count, size_t stride, size_t streams, size_t n, float *out) {
    for (size_t r = 0; r < count; r++) {
        for (size_t j = 0; j < streams; j++) {
            const uint32_t *run = slots + j * stride;
            if (r + 4 < count) __builtin_prefetch(base + (size_t)run[r + 4] * n, 0, 3);
            out[j * count + r] = distance(q, base + (size_t)run[r] * n, n);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Public entry points: dispatch once per call (a predictable branch).

int trove_kernels_wide(void) { return use_wide(); }

float trove_dot(const float *a, const float *b, size_t n) {
#ifdef TROVE_X86
    if (use_wide()) return wide_dot(a, b, n);
#endif
    return portable_dot(a, b, n);
}

float trove_l2sq(const float *a, const float *b, size_t n) {
#ifdef TROVE_X86
    if (use_wide()) return wide_l2sq(a, b, n);
#endif
    return portable_l2sq(a, b, n);
}

void trove_dot_rows(const float *q, const float *rows, size_t count, size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_dot_rows(q, rows, count, n, out);
        return;
    }
#endif
    portable_rows(portable_dot, q, rows, count, 0, 1, n, out);
}

void trove_l2sq_rows(const float *q, const float *rows, size_t count, size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_l2sq_rows(q, rows, count, n, out);
        return;
    }
#endif
    portable_rows(portable_l2sq, q, rows, count, 0, 1, n, out);
}

void trove_dot_rows_streams(const float *q, const float *rows, size_t count, size_t stride, size_t streams,
                            size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_dot_rows_streams(q, rows, count, stride, streams, n, out);
        return;
    }
#endif
    portable_rows(portable_dot, q, rows, count, stride, streams, n, out);
}

void trove_l2sq_rows_streams(const float *q, const float *rows, size_t count, size_t stride, size_t streams,
                             size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_l2sq_rows_streams(q, rows, count, stride, streams, n, out);
        return;
    }
#endif
    portable_rows(portable_l2sq, q, rows, count, stride, streams, n, out);
}

void trove_dot_gather(const float *q, const float *base, const uint32_t *slots, size_t count, size_t stride,
                      size_t streams, size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_dot_gather(q, base, slots, count, stride, streams, n, out);
        return;
    }
#endif
    portable_gather(portable_dot, q, base, slots, count, stride, streams, n, out);
}

void trove_l2sq_gather(const float *q, const float *base, const uint32_t *slots, size_t count, size_t stride,
                       size_t streams, size_t n, float *out) {
#ifdef TROVE_X86
    if (use_wide()) {
        wide_l2sq_gather(q, base, slots, count, stride, streams, n, out);
        return;
    }
#endif
    portable_gather(portable_l2sq, q, base, slots, count, stride, streams, n, out);
}

int32_t trove_dot_i8(const int8_t *a, const int8_t *b, size_t n) {
#ifdef TROVE_X86
    if (use_wide()) return wide_dot_i8(a, b, n);
#endif
    return portable_dot_i8(a, b, n);
}

uint32_t trove_hamming(const uint64_t *a, const uint64_t *b, size_t words) {
#ifdef TROVE_X86
    if (use_wide()) return wide_hamming(a, b, words);
#endif
    return portable_hamming(a, b, words);
}
