// Encoder kernels in C for the BERT forward pass (TroveEmbeddings, the `.native` backend).
//
// Why C: on x86-64 the default Swift target is SSE2 only and a package cannot pass -mavx2 to
// its users' builds. These functions carry AVX2/FMA, AVX-512 and AVX-512 VNNI code behind
// per-function target attributes and pick it at run time (`__builtin_cpu_supports`), so a plain
// `swift build -c release` uses the wide units where the CPU has them. Elsewhere (arm64, CPUs without AVX2) they run portable
// C, correct but not tuned: there the encoder prefers the platform BLAS.
//
// The matrix multiply works on weights packed once (at model load) into panels of 16 output
// columns, k-major: no packing per call, and bias, residual and GELU applied while the output
// tile is still in registers.
#ifndef C_TROVE_ENCODER_KERNELS_H
#define C_TROVE_ENCODER_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Output columns per packed panel.
#define TROVE_ENC_PANEL 16

/// 1 when the AVX2+FMA paths are in use (x86-64 CPUs that have them), else 0.
int trove_enc_wide(void);

/// 1 when trove_enc_gemm runs its AVX-512 kernel (avx512f/dq/bw/vl; gemm512.c), bit-identical to
/// the AVX2 one, else 0.
int trove_enc_avx512(void);

/// Floats needed to pack an n×k operand: ceil(n / 16) · 16 · k.
size_t trove_enc_packed_count(size_t n, size_t k);

/// Packs op(B) (k rows × n columns) into panels: packed[(p·k + kk)·16 + j] = op(B)[kk][16p + j],
/// zero past column n. `transposed`: B is n×k with row stride ldb (a PyTorch `Linear` weight,
/// op(B) = Bᵀ); otherwise B is k×n with row stride ldb.
void trove_enc_pack(const float *b, size_t ldb, int transposed, size_t n, size_t k, float *packed);

/// Flags for trove_enc_gemm.
enum {
    /// C += A·op(B) instead of C = A·op(B).
    TROVE_ENC_ACCUMULATE = 1,
    /// GELU (erf form) applied to every output element last.
    TROVE_ENC_GELU = 2,
};

/// C[m × n] = A[m × k] · op(B) (+ C if TROVE_ENC_ACCUMULATE) (+ bias[j]) (+ residual[i][j]),
/// then GELU if TROVE_ENC_GELU; op(B) packed by trove_enc_pack. Only the columns of panels
/// [panel_begin, panel_end) are computed (pass 0 and ceil(n/16) for all), so threads can share
/// one multiply by panels. bias and residual may be NULL; lda, ldc, ldr are row strides.
void trove_enc_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed,
                    float *c, size_t ldc, const float *bias, const float *residual, size_t ldr, int flags,
                    size_t panel_begin, size_t panel_end);

/// Scratch floats trove_enc_attention needs for a sequence of `length` tokens.
size_t trove_enc_attention_scratch(size_t length, size_t head_size);

/// One head of self-attention over one sequence: out = softmax(scale · Q·Kᵀ) · V, where Q, K, V
/// are `length × head_size` with row stride ld and out has row stride ldo. scratch holds
/// trove_enc_attention_scratch(length, head_size) floats.
void trove_enc_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                         size_t head_size, float scale, float *scratch, float *out, size_t ldo);

/// LayerNorm of each of `rows` rows of x (row stride width): (x - mean) / sqrt(var + eps) · w + b,
/// written to out (which may be x).
void trove_enc_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b,
                          float eps, float *out);

/// GELU (erf form) in place over n floats.
void trove_enc_gelu(float *x, size_t n);

/// The portable paths of trove_enc_gemm, trove_enc_attention and trove_enc_layer_norm, whatever
/// the CPU: exported so tests hold them to the same reference on x86-64 too.
void trove_enc_portable_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed,
                             float *c, size_t ldc, const float *bias, const float *residual, size_t ldr,
                             int flags, size_t panel_begin, size_t panel_end);
/// The AVX2 path of trove_enc_gemm whatever wider units the CPU has (portable without AVX2/FMA):
/// the tests' reference for the AVX-512 kernel, which must match it bit for bit.
void trove_enc_avx2_gemm(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *packed,
                         float *c, size_t ldc, const float *bias, const float *residual, size_t ldr, int flags,
                         size_t panel_begin, size_t panel_end);
void trove_enc_portable_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                                  size_t head_size, float scale, float *scratch, float *out, size_t ldo);
void trove_enc_portable_layer_norm(const float *x, size_t rows, size_t width, const float *w, const float *b,
                                   float eps, float *out);


// ---------------------------------------------------------------------------------------------
// 4-bit weights (q4_kernels.c): the multilingual-e5-small encoder keeps its weights as Q4_0
// blocks in memory and multiplies them against activations quantized to Q8_0 blocks, with
// integer multiply-adds (AVX2 `vpmaddubsw` where the CPU has it, portable C elsewhere).

/// Weights per block, in both formats.
#define TROVE_Q4_BLOCK 32
/// Bytes of one Q4_0 block: an IEEE half-precision scale d, then 16 bytes of 4-bit codes q;
/// byte j holds weight j in its low nibble and weight j + 16 in its high nibble, and weight i
/// is d · (q_i − 8).
#define TROVE_Q4_BLOCK_BYTES 18

/// IEEE 754 half → single precision (every half value, subnormals, infinities and NaN included).
float trove_q4_half_to_float(unsigned short half);

/// Decodes n weights (n a multiple of 32) of Q4_0 blocks into floats.
void trove_q4_dequantize(const unsigned char *blocks, size_t n, float *out);

/// Quantizes `rows` rows of n floats (n a multiple of 32, row stride n) to Q8_0: per block of
/// 32, scale d = max|x| / 127 and codes q = round-to-nearest-even(x / d) in [−127, 127].
/// Writes q (rows · n bytes), d (rows · n/32 floats) and each block's code sum s (rows · n/32).
/// AVX2 where the CPU has it (the same results: the same rounding, by the vector unit).
void trove_q8_quantize(const float *x, size_t rows, size_t n, signed char *q, float *d, int *s);

/// y[t][o] = bias[o] + Σ_blocks d_w · d_x · (Σ_j q_w,j · q_x,j − 8 · s_x) for tokens t < rows
/// and outputs o in [out_begin, out_end): a `Linear` layer with Q4_0 weights (nout rows of nin
/// weights, nin/32 blocks each) on Q8_0 activations from trove_q8_quantize. y has row stride
/// ldy; bias may be NULL. Threads may share one product by disjoint output ranges.
void trove_q4_matmul(const unsigned char *weights, const float *bias, const signed char *q, const float *d,
                     const int *s, size_t rows, size_t nin, size_t out_begin, size_t out_end, float *y,
                     size_t ldy);

/// One head of self-attention, out = softmax(scale · Q·Kᵀ) · V, like trove_enc_attention but
/// with exp as accurate as the C library's expf (as the e5 reference; accurate_math.c): AVX-512
/// where the CPU has it and head_size is a multiple of 16, else libm's expf. scratch holds
/// trove_enc_attention_scratch(length, head_size) floats.
void trove_q4_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                        size_t head_size, float scale, float *scratch, float *out, size_t ldo);

/// GELU (erf form) in place with erf as accurate as the C library's erff (as the e5 reference
/// computes it): AVX-512 in double, rounded once, where the CPU has it; else libm's erff.
void trove_q4_gelu(float *x, size_t n);

/// 1 when trove_q4_gelu and trove_q4_attention run their AVX-512 paths (avx512f/dq/vl), else 0.
int trove_q4_accurate_wide(void);

/// The libm paths of trove_q4_gelu and trove_q4_attention, whatever the CPU (for the tests).
void trove_q4_portable_gelu(float *x, size_t n);
void trove_q4_portable_attention(const float *q, const float *k, const float *v, size_t ld, size_t length,
                                 size_t head_size, float scale, float *scratch, float *out, size_t ldo);

/// The portable paths of trove_q8_quantize and trove_q4_matmul (the tests' references), whatever
/// the CPU.
void trove_q8_portable_quantize(const float *x, size_t rows, size_t n, signed char *q, float *d, int *s);
void trove_q4_portable_matmul(const unsigned char *weights, const float *bias, const signed char *q,
                              const float *d, const int *s, size_t rows, size_t nin, size_t out_begin,
                              size_t out_end, float *y, size_t ldy);

// ---------------------------------------------------------------------------------------------
// Q4_0 weights repacked for AVX-512 VNNI (q4_packed.c): groups of 16 output rows interleaved so
// that one `vpdpbusd` yields 16 outputs' block dots. Packed once at model load, the same size as
// the file's blocks; the results are bit-identical to trove_q4_portable_matmul.

/// Output rows per packed group.
#define TROVE_Q4_PACKED_ROWS 16

/// 1 when trove_q4_packed_matmul runs the AVX-512 VNNI kernel (x86-64 CPUs with avx512f/bw/vl/dq
/// and avx512_vnni), else 0: then the file's layout with trove_q4_matmul is the faster choice.
int trove_q4_packed_fast(void);

/// Bytes trove_q4_pack writes for nout rows of nin weights: ceil(nout / 16) · 16 · nin/32 · 18.
size_t trove_q4_packed_bytes(size_t nout, size_t nin);

/// Repacks nout rows of Q4_0 blocks (nin a multiple of 32) into trove_q4_packed_bytes(nout, nin)
/// bytes for trove_q4_packed_matmul.
///
/// ```c
/// unsigned char *packed = malloc(trove_q4_packed_bytes(nout, nin));
/// trove_q4_pack(weights, nout, nin, packed);
/// trove_q4_packed_matmul(packed, bias, q, d, s, rows, nin, 0, nout, y, nout);
/// ```
void trove_q4_pack(const unsigned char *weights, size_t nout, size_t nin, unsigned char *packed);

/// trove_q4_matmul on packed weights: the same arguments and the same results, bit for bit.
/// Any output range works; ranges starting at multiples of 16 share no group between threads.
void trove_q4_packed_matmul(const unsigned char *packed, const float *bias, const signed char *q,
                            const float *d, const int *s, size_t rows, size_t nin, size_t out_begin,
                            size_t out_end, float *y, size_t ldy);

/// The portable path of trove_q4_packed_matmul, whatever the CPU (for the tests).
void trove_q4_packed_portable_matmul(const unsigned char *packed, const float *bias, const signed char *q,
                                     const float *d, const int *s, size_t rows, size_t nin, size_t out_begin,
                                     size_t out_end, float *y, size_t ldy);

#ifdef __cplusplus
}
#endif

#endif
