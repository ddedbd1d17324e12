import Foundation

/// SHA-256 (FIPS 180-4): the weights checksum in ``EmbeddingManifest``, and (package-wide) the
/// `trove` tool's file hashes and name-based record ids.
///
/// Foundation on Linux has no hash functions and Trove depends on nothing else, so this is the
/// one small portable implementation. Apps on Apple platforms get the same digest.
package struct SHA256 {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
        0x5be0_cd19
    )
    private var buffer: [UInt8] = []  // < 64 bytes not yet compressed
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
        0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7,
        0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc,
        0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351,
        0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e,
        0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585,
        0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f,
        0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
        0xc671_78f2,
    ]

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var index = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, bytes.count)
            buffer.append(contentsOf: bytes[0..<take])
            index = take
            if buffer.count == 64 {
                buffer.withUnsafeBytes { compress($0.baseAddress!) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        while index + 64 <= bytes.count {
            compress(bytes.baseAddress! + index)
            index += 64
        }
        if index < bytes.count { buffer.append(contentsOf: bytes[index...]) }
    }

    package mutating func update(_ data: some ContiguousBytes) {
        data.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits.
    package mutating func finalize() -> String {
        finalizeBytes().map { String(format: "%02x", $0) }.joined()
    }

    /// The digest's 32 bytes.
    package mutating func finalizeBytes() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        while (buffer.count + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedLength = length
        tail.withUnsafeBytes { update($0) }
        length = savedLength
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        return words.flatMap { word in
            (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) }
        }
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) {
            compress(block, schedule: $0)
        }
    }

    private mutating func compress(
        _ block: UnsafeRawPointer, schedule w: UnsafeMutableBufferPointer<UInt32>
    ) {
        for i in 0..<16 {
            w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
        }
        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
            (x >> n) | (x << (32 - n))
        }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        for i in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ choice &+ Self.k.withUnsafeBufferPointer { $0[i] } &+ w[i]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state = (
            state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f,
            state.6 &+ g, state.7 &+ h
        )
    }

    /// Hex digest of a file, read in 1 MiB chunks.
    package static func hexDigest(ofFile url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finalize()
    }

    /// The hex digest of bytes in memory.
    package static func hexDigest(_ data: some ContiguousBytes) -> String {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// The 32-byte digest of bytes in memory.
    package static func digest(_ data: some ContiguousBytes) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalizeBytes()
    }
}

extension SHA256 {
    /// A model file's SHA-256: from the `<file>.sha256` sidecar the model scripts write when it
    /// is not older than the file, else computed (both built-in models use it).
    static func weightsChecksum(_ weights: URL) throws -> String {
        let sidecar = weights.appendingPathExtension("sha256")
        let files = FileManager.default
        if let text = try? String(contentsOf: sidecar, encoding: .utf8),
            let digest = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first,
            digest.count == 64, digest.allSatisfy(\.isHexDigit),
            let sidecarDate = try? files.attributesOfItem(atPath: sidecar.path)[.modificationDate]
                as? Date,
            let weightsDate = try? files.attributesOfItem(atPath: weights.path)[.modificationDate]
                as? Date,
            sidecarDate >= weightsDate
        {
            return digest.lowercased()
        }
        do { return try SHA256.hexDigest(ofFile: weights) } catch {
            throw EmbeddingError.invalidModelFile(
                path: weights.path, reason: "cannot read: \(error)")
        }
    }
}
