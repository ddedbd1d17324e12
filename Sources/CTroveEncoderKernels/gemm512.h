// Internal to CTroveEncoderKernels: the AVX-512 matrix multiply (gemm512.c) that trove_enc_gemm
// dispatches to. Not part of the module's public header.
#ifndef TROVE_GEMM512_H
#define TROVE_GEMM512_H

#include <stddef.h>

/// 1 when the CPU has avx512f/dq/bw/vl (probed once).
int trove_gemm512_available(void);

/// trove_enc_gemm's contract for the panel range given (already clamped, non-empty), bit-identical
/// to the AVX2 path. Only call when trove_gemm512_available().
void trove_gemm512(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed, float *c,
                   size_t ldc, const float *bias, const float *residual, size_t ldr, int flags, size_t panel_begin,
                   size_t panel_end);

#endif
