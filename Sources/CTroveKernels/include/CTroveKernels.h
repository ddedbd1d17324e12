// Distance kernels in C for one reason: on x86-64 the default Swift target is SSE2 only, and
// a package cannot pass -mavx2 to its users' builds. These functions carry AVX2/FMA code behind
// per-function target attributes and pick it at run time (`__builtin_cpu_supports`), so a plain
// `swift build -c release` still uses the wide units where the CPU has them. Elsewhere (arm64,
// CPUs without AVX2) they fall back to portable C. The Swift kernels in TroveVectors remain the
// reference the tests hold these to.
#ifndef C_TROVE_KERNELS_H
#define C_TROVE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when the AVX2+FMA paths are in use (x86-64 CPUs that have them), else 0.
int trove_kernels_wide(void);

/// Σ a[i] b[i] over n floats.
float trove_dot(const float *a, const float *b, size_t n);

/// Σ (a[i] - b[i])² over n floats.
float trove_l2sq(const float *a, const float *b, size_t n);

/// out[r] = Σ q[i] rows[r*n + i] for r in 0..<count (contiguous row-major rows).
void trove_dot_rows(const float *q, const float *rows, size_t count, size_t n, float *out);

/// out[r] = Σ (q[i] - rows[r*n + i])² for r in 0..<count.
void trove_l2sq_rows(const float *q, const float *rows, size_t count, size_t n, float *out);

/// out[j*count + r] = Σ q[i] rows[(j*stride + r)*n + i] for j in 0..<streams, r in 0..<count:
/// `streams` runs of rows `stride` rows apart, read side by side (one core reaches a higher
/// memory bandwidth with several sequential streams in flight than with one).
void trove_dot_rows_streams(const float *q, const float *rows, size_t count, size_t stride, size_t streams,
                            size_t n, float *out);

/// out[j*count + r] = Σ (q[i] - rows[(j*stride + r)*n + i])², laid out as trove_dot_rows_streams.
void trove_l2sq_rows_streams(const float *q, const float *rows, size_t count, size_t stride, size_t streams,
                             size_t n, float *out);

/// out[j*count + r] = Σ q[i] base[slots[j*stride + r]*n + i] for j in 0..<streams, r in 0..<count:
/// rows picked by slot (filtered scans), `streams` runs of the slot list side by side; rows a
/// few slots ahead are prefetched, since the hardware cannot predict the jumps.
void trove_dot_gather(const float *q, const float *base, const uint32_t *slots, size_t count, size_t stride,
                      size_t streams, size_t n, float *out);

/// out[j*count + r] = Σ (q[i] - base[slots[j*stride + r]*n + i])², laid out as trove_dot_gather.
void trove_l2sq_gather(const float *q, const float *base, const uint32_t *slots, size_t count, size_t stride,
                       size_t streams, size_t n, float *out);

/// Σ a[i] b[i] over n signed bytes (int8 scalar quantization), exact in int32.
int32_t trove_dot_i8(const int8_t *a, const int8_t *b, size_t n);

/// Hamming distance between two bit strings of `words` 64-bit words.
uint32_t trove_hamming(const uint64_t *a, const uint64_t *b, size_t words);

/// Snapshot checksum (HNSW snapshot version 4), the bulk of it: folds `blocks` blocks of 1,024
/// bytes at `data` (any alignment, little-endian words) into the eight lane accumulators `acc`.
/// Per 8-byte word w of stripe s (64 bytes) and lane j: k = w ^ key[s + j],
/// acc[j] += lo32(k) * hi32(k) + w; after each block every lane is scrambled
/// (x ^= x >> 47, x ^= key[24 + j], x *= 0x9E3779B1), so words do not commute across blocks.
/// The 32 × 32-bit products of XXH3's long-input loop: four lanes per AVX2 instruction, where a
/// chain of 64-bit multiply-rotate rounds (versions 1-3) waits on itself.
void trove_checksum_blocks(uint64_t acc[8], const void *data, size_t blocks);

/// trove_checksum_blocks without vector instructions (what CPUs without AVX2 run), for tests to
/// hold the two to the same result: a snapshot must load on any machine.
void trove_checksum_blocks_portable(uint64_t acc[8], const void *data, size_t blocks);

/// The index of the first of `count` floats that is infinite or NaN, or -1 when all are finite
/// (checked as bits, several floats per instruction).
ptrdiff_t trove_first_nonfinite(const float *values, size_t count);

/// A hint that `p` will be read soon (graph walks touch vectors in random order).
static inline void trove_prefetch(const void *p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 0, 3);
#else
    (void)p;
#endif
}

/// A hint that the `bytes` bytes from `p` will be read soon, one prefetch per 64-byte line (a
/// graph walk about to score a whole vector it reached in random order; one line is not enough
/// for the hardware prefetchers to fetch the rest in time).
static inline void trove_prefetch_bytes(const void *p, size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch((const char *)p + off, 0, 3);
#else
    (void)p;
    (void)bytes;
#endif
}

#ifdef __cplusplus
}
#endif

#endif
