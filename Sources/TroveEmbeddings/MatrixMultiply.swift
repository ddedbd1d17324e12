import CTroveEncoderKernels
import Foundation

#if canImport(Accelerate)
    import Accelerate
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which implementation runs the encoder's matrix multiplies.
///
/// ```swift
/// let encoder = try BERTEmbedder(modelDirectory: dir, backend: .swift)  // force the fallback
/// ```
public enum MatrixBackend: String, Sendable, CaseIterable {
    /// Trove's own C kernels with AVX2/FMA (AVX-512 where present, with the same results), chosen
    /// at run time on x86-64 CPUs that have them:
    /// the dense layers' weights are packed once at load for the matrix-multiply micro-kernel
    /// (no packing per call), bias, residual and GELU are applied in its epilogue, and each
    /// attention head runs as one fused kernel. Elsewhere the same code runs as portable C, which
    /// is why ``preferred`` picks it only where ``isNativeAccelerated`` is true.
    case native
    /// The platform BLAS: Accelerate on Apple platforms, OpenBLAS (`libopenblas.so.0`, loaded
    /// at run time) on Linux.
    case blas
    /// The portable blocked matrix multiply written in Swift; always available.
    case swift

    /// The backend used when none is asked for: ``native`` where it has AVX2/FMA
    /// (``isNativeAccelerated``), else ``blas`` when it can be loaded, else ``swift``.
    /// The environment variable `TROVE_BLAS=none` forces ``swift``; `TROVE_BLAS=blas` forces
    /// ``blas`` (when present).
    public static var preferred: MatrixBackend {
        let value = ProcessInfo.processInfo.environment["TROVE_BLAS"]?.lowercased()
        if let value, ["none", "swift", "off", "0"].contains(value) { return .swift }
        if let value, ["blas", "openblas", "accelerate"].contains(value) {
            return isBLASAvailable ? .blas : .swift
        }
        if isNativeAccelerated { return .native }
        return isBLASAvailable ? .blas : .swift
    }

    /// Whether ``native`` runs its AVX2/FMA kernels on this CPU (x86-64 with AVX2 and FMA).
    public static var isNativeAccelerated: Bool { trove_enc_wide() != 0 }

    /// The vector units ``native``'s matrix multiply uses on this CPU, for logs and benchmarks.
    ///
    /// ```swift
    /// print(MatrixBackend.nativeKernels)  // "AVX-512" (same bits as "AVX2/FMA"), or "portable C"
    /// ```
    public static var nativeKernels: String {
        trove_enc_avx512() != 0 ? "AVX-512" : isNativeAccelerated ? "AVX2/FMA" : "portable C"
    }

    /// Whether a platform BLAS was found on this machine.
    public static var isBLASAvailable: Bool {
        #if canImport(Accelerate)
            return true
        #else
            return OpenBLAS.shared != nil
        #endif
    }

    /// A short description of what ``blas`` resolves to here, for logs and benchmarks.
    public static var blasDescription: String {
        #if canImport(Accelerate)
            return "Accelerate"
        #else
            guard let blas = OpenBLAS.shared else { return "none (libopenblas.so.0 not found)" }
            return blas.configuration
        #endif
    }
}

/// OpenBLAS functions looked up at run time with `dlopen`/`dlsym`.
///
/// Why not a system-library target: loading at run time lets the package build and run on a
/// machine without OpenBLAS (falling back to Swift), and keeps `-lopenblas` out of every app that
/// links Trove. The cost is one `dlsym` per process. See Documentation/ARCHITECTURE.md.
struct OpenBLAS: @unchecked Sendable {
    // @unchecked Sendable: plain C function pointers into a library that is never unloaded;
    // cblas_sgemm is thread-safe in OpenBLAS >= 0.3.7 (Debian 12 ships 0.3.21).
    typealias SGEMM =
        @convention(c) (
            Int32, Int32, Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32,
            UnsafePointer<Float>?, Int32, Float, UnsafeMutablePointer<Float>?, Int32
        ) -> Void
    typealias SetThreads = @convention(c) (Int32) -> Void
    typealias GetThreads = @convention(c) () -> Int32
    typealias GetConfig = @convention(c) () -> UnsafePointer<CChar>?

    let sgemm: SGEMM
    let setNumThreads: SetThreads?
    let getNumThreads: GetThreads?
    let configuration: String

    /// Loaded once per process; nil when the library or `cblas_sgemm` is missing.
    static let shared: OpenBLAS? = {
        #if canImport(Accelerate)
            return nil
        #else
            for name in ["libopenblas.so.0", "libopenblas.so"] {
                // RTLD_LOCAL: keep its symbols out of the global namespace of the host app.
                guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
                guard let sgemm = dlsym(handle, "cblas_sgemm") else {
                    dlclose(handle)
                    continue
                }
                let setThreads = dlsym(handle, "openblas_set_num_threads").map {
                    unsafeBitCast($0, to: SetThreads.self)
                }
                let getThreads = dlsym(handle, "openblas_get_num_threads").map {
                    unsafeBitCast($0, to: GetThreads.self)
                }
                var config = name
                if let get = dlsym(handle, "openblas_get_config").map({
                    unsafeBitCast($0, to: GetConfig.self)
                }),
                    let text = get()
                {
                    config = "OpenBLAS (\(String(cString: text)))"
                }
                return OpenBLAS(
                    sgemm: unsafeBitCast(sgemm, to: SGEMM.self), setNumThreads: setThreads,
                    getNumThreads: getThreads, configuration: config)
            }
            return nil
        #endif
    }()
}

/// Row-major single-precision matrix multiply, `C = A · op(B)`, through the chosen backend.
struct MatrixMultiplier: Sendable {
    let backend: MatrixBackend

    init(backend: MatrixBackend) {
        // Asking for BLAS where there is none falls back rather than failing: results agree.
        self.backend = backend == .blas && !MatrixBackend.isBLASAvailable ? .swift : backend
    }

    /// Packs `op(B)` (k × n, see ``multiply``) for `trove_enc_gemm`: 64-byte aligned, owned by
    /// the caller (free with `deallocate()`), `trove_enc_packed_count(n, k)` floats.
    static func pack(
        _ b: UnsafePointer<Float>, ldb: Int, transposeB: Bool, n: Int, k: Int
    ) -> UnsafeMutablePointer<Float> {
        let count = max(trove_enc_packed_count(n, k), 1)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * 4, alignment: 64)
        let packed = raw.bindMemory(to: Float.self, capacity: count)
        trove_enc_pack(b, ldb, transposeB ? 1 : 0, n, k, packed)
        return packed
    }

    /// `C[m×n] = A[m×k] · op(B)` (or `C += A · op(B)` when `accumulate`), where `op(B) = B`
    /// (`B` is k×n) or `Bᵀ` (`B` is n×k, the PyTorch `Linear` weight layout). Leading
    /// dimensions are row strides, in elements.
    func multiply(
        m: Int, n: Int, k: Int,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int, transposeB: Bool,
        c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool = false
    ) {
        if m == 0 || n == 0 { return }
        switch backend {
        case .native:
            // The encoder packs its weights once; a one-off multiply packs here (attention and
            // tests only: the native encoder does not come through this path for its layers).
            let packed = Self.pack(b, ldb: ldb, transposeB: transposeB, n: n, k: k)
            defer { packed.deallocate() }
            trove_enc_gemm(
                m, n, k, a, lda, packed, c, ldc, nil, nil, 0,
                accumulate ? Int32(TROVE_ENC_ACCUMULATE) : 0, 0,
                (n + 15) / 16)
        case .blas:
            #if canImport(Accelerate)
                cblas_sgemm(
                    CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), 1, a, Int32(lda), b, Int32(ldb),
                    accumulate ? 1 : 0, c, Int32(ldc))
            #else
                // 101 = CblasRowMajor, 111 = CblasNoTrans, 112 = CblasTrans (cblas.h).
                OpenBLAS.shared!.sgemm(
                    101, 111, transposeB ? 112 : 111, Int32(m), Int32(n), Int32(k), 1, a,
                    Int32(lda),
                    b, Int32(ldb), accumulate ? 1 : 0, c, Int32(ldc))
            #endif
        case .swift:
            Self.swiftMultiply(
                m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, transposeB: transposeB, c: c,
                ldc: ldc,
                accumulate: accumulate)
        }
    }

    /// The portable fallback: B is packed into 8-column panels, and a 4×8 register tile of C is
    /// accumulated with SIMD8 (two SSE registers without AVX) per step of k.
    ///
    /// - Complexity: O(m·n·k) time; O(k·8) scratch for one panel.
    static func swiftMultiply(
        m: Int, n: Int, k: Int,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int, transposeB: Bool,
        c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool
    ) {
        // One k×8 panel of op(B), reused across all rows of A: k·32 bytes (48 KB for k = 1536).
        let panelRaw = UnsafeMutableRawPointer.allocate(
            byteCount: max(k, 1) * 32, alignment: MemoryLayout<SIMD8<Float>>.alignment)
        defer { panelRaw.deallocate() }
        let panel = panelRaw.bindMemory(to: Float.self, capacity: max(k, 1) * 8)
        var j0 = 0
        while j0 < n {
            let width = min(8, n - j0)
            if transposeB {
                for jj in 0..<8 {
                    if jj < width {
                        let row = b + (j0 + jj) * ldb
                        for p in 0..<k { panel[p * 8 + jj] = row[p] }
                    } else {
                        for p in 0..<k { panel[p * 8 + jj] = 0 }
                    }
                }
            } else {
                for p in 0..<k {
                    let row = b + p * ldb + j0
                    for jj in 0..<8 { panel[p * 8 + jj] = jj < width ? row[jj] : 0 }
                }
            }
            var i0 = 0
            while i0 < m {
                let rows = min(4, m - i0)
                // Rows past the end alias row 0 of the tile; their sums are computed and dropped.
                let a0 = a + i0 * lda
                let a1 = rows > 1 ? a0 + lda : a0
                let a2 = rows > 2 ? a0 + 2 * lda : a0
                let a3 = rows > 3 ? a0 + 3 * lda : a0
                var c0 = SIMD8<Float>()
                var c1 = SIMD8<Float>()
                var c2 = SIMD8<Float>()
                var c3 = SIMD8<Float>()
                for p in 0..<k {
                    let bv = panelRaw.load(fromByteOffset: p * 32, as: SIMD8<Float>.self)
                    c0 += a0[p] * bv
                    c1 += a1[p] * bv
                    c2 += a2[p] * bv
                    c3 += a3[p] * bv
                }
                let out = c + i0 * ldc + j0
                if width == 8 {
                    // Whole tile row: one unaligned vector load/store per row.
                    func put(_ v: SIMD8<Float>, _ row: Int) {
                        let p = UnsafeMutableRawPointer(out + row * ldc)
                        p.storeBytes(
                            of: accumulate ? v + p.loadUnaligned(as: SIMD8<Float>.self) : v,
                            as: SIMD8<Float>.self)
                    }
                    put(c0, 0)
                    if rows > 1 { put(c1, 1) }
                    if rows > 2 { put(c2, 2) }
                    if rows > 3 { put(c3, 3) }
                } else {
                    func put(_ v: SIMD8<Float>, _ row: Int) {
                        let p = out + row * ldc
                        for jj in 0..<width { p[jj] = (accumulate ? p[jj] : 0) + v[jj] }
                    }
                    put(c0, 0)
                    if rows > 1 { put(c1, 1) }
                    if rows > 2 { put(c2, 2) }
                    if rows > 3 { put(c3, 3) }
                }
                i0 += 4
            }
            j0 += 8
        }
    }
}
