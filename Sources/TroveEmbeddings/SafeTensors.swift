import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only, memory-mapped `.safetensors` file (the Hugging Face tensor format).
///
/// Layout: an 8-byte little-endian header length `N`, `N` bytes of JSON mapping each tensor name
/// to `{"dtype", "shape", "data_offsets": [begin, end]}` (plus an optional `__metadata__`), then
/// the tensor bytes, offsets relative to the end of the header. Everything is validated when the
/// file is opened: header length against the file size, every dtype, every shape against its
/// byte range, every range inside the data and not overlapping another. A malformed or truncated
/// file throws ``EmbeddingError/invalidSafeTensors(path:reason:)``; nothing reads out of bounds.
///
/// ```swift
/// let file = try SafeTensorsFile(url: modelDirectory.appendingPathComponent("model.safetensors"))
/// let bias = try file.floats("pooler.dense.bias", shape: [384])
/// ```
///
/// Tensor data is not copied: pages are read from the file by the kernel on first touch, so
/// opening costs only the header parse and resident memory grows only with what is used.
public final class SafeTensorsFile: @unchecked Sendable {
    // @unchecked Sendable: the mapping is PROT_READ, never written after init, and unmapped only
    // in deinit, when no other reference to this object (and so to its pointers) can exist.

    /// The element types the format defines, with their sizes in bytes.
    public enum DType: String, Sendable, CaseIterable {
        case f64 = "F64"
        case f32 = "F32"
        case f16 = "F16"
        case bf16 = "BF16"
        case i64 = "I64"
        case i32 = "I32"
        case i16 = "I16"
        case i8 = "I8"
        case u8 = "U8"
        case bool = "BOOL"
        case u16 = "U16"
        case u32 = "U32"
        case u64 = "U64"
        case f8e4m3 = "F8_E4M3"
        case f8e5m2 = "F8_E5M2"

        /// Bytes per element.
        public var size: Int {
            switch self {
            case .f64, .i64, .u64: return 8
            case .f32, .i32, .u32: return 4
            case .f16, .bf16, .i16, .u16: return 2
            case .i8, .u8, .bool, .f8e4m3, .f8e5m2: return 1
            }
        }
    }

    /// One tensor's description from the header.
    public struct TensorInfo: Sendable, Equatable {
        /// Element type.
        public let dtype: DType
        /// Dimensions, outermost first (row-major).
        public let shape: [Int]
        /// Byte range relative to the start of the data section.
        public let byteRange: Range<Int>
        /// Number of elements (product of ``shape``; 1 for a scalar).
        public var count: Int { shape.reduce(1, *) }
    }

    /// The path the file was opened from.
    public let path: String
    /// Every tensor in the file, by name.
    public let tensors: [String: TensorInfo]
    /// The free-form `__metadata__` strings, if any.
    public let metadata: [String: String]

    private let base: UnsafeRawPointer?  // the whole file, mapped read-only; fileSize bytes
    private let fileSize: Int
    private let dataOffset: Int  // 8 + header length

    /// Longest JSON header accepted; real headers are kilobytes, this bounds a hostile length.
    static let maxHeaderLength = 100 << 20

    /// Opens and validates a safetensors file.
    ///
    /// - Parameter url: The file.
    /// - Throws: ``EmbeddingError/missingModelFile(path:)`` when the file does not exist,
    ///   ``EmbeddingError/invalidSafeTensors(path:reason:)`` when it is malformed or truncated.
    /// - Complexity: O(header size + number of tensors · log); tensor data is mapped, not read.
    public init(url: URL) throws {
        let path = url.path
        self.path = path
        func invalid(_ reason: String) -> EmbeddingError {
            .invalidSafeTensors(path: path, reason: reason)
        }

        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            if errno == ENOENT { throw EmbeddingError.missingModelFile(path: path) }
            throw invalid("cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }  // the mapping stays valid after the descriptor is closed
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw invalid("cannot stat: \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw invalid("not a regular file") }
        let size = Int(info.st_size)
        guard size >= 8 else {
            throw invalid("file is \(size) bytes, shorter than the 8-byte header length")
        }

        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED
        else {
            throw invalid("cannot map: \(String(cString: strerror(errno)))")
        }
        let base = UnsafeRawPointer(mapped)
        do {
            let headerLength = UInt64(littleEndian: base.loadUnaligned(as: UInt64.self))
            guard headerLength <= UInt64(size - 8) else {
                throw invalid(
                    "header length \(headerLength) exceeds the \(size - 8) bytes after it (truncated file?)"
                )
            }
            guard headerLength <= UInt64(Self.maxHeaderLength) else {
                throw invalid(
                    "header length \(headerLength) is larger than \(Self.maxHeaderLength) bytes")
            }
            let dataOffset = 8 + Int(headerLength)
            let header = Data(bytes: base + 8, count: Int(headerLength))
            let (tensors, metadata) = try Self.parseHeader(
                header, dataSize: size - dataOffset, invalid: invalid)
            self.base = base
            self.fileSize = size
            self.dataOffset = dataOffset
            self.tensors = tensors
            self.metadata = metadata
        } catch {
            munmap(mapped, size)
            throw error
        }
    }

    deinit {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), fileSize) }
    }

    private static func parseHeader(
        _ header: Data, dataSize: Int, invalid: (String) -> EmbeddingError
    ) throws -> ([String: TensorInfo], [String: String]) {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: header) } catch {
            throw invalid("header is not valid JSON")
        }
        guard let entries = object as? [String: Any] else {
            throw invalid("header is not a JSON object")
        }
        var tensors: [String: TensorInfo] = [:]
        var metadata: [String: String] = [:]
        for (name, value) in entries {
            if name == "__metadata__" {
                guard let strings = value as? [String: Any] else {
                    throw invalid("__metadata__ is not an object")
                }
                for (key, value) in strings {
                    guard let string = value as? String else {
                        throw invalid("__metadata__.\(key) is not a string")
                    }
                    metadata[key] = string
                }
                continue
            }
            guard let entry = value as? [String: Any] else {
                throw invalid("entry \(name) is not an object")
            }
            guard let dtypeName = entry["dtype"] as? String else {
                throw invalid("\(name): no dtype")
            }
            guard let dtype = DType(rawValue: dtypeName) else {
                throw invalid("\(name): unknown dtype \(dtypeName)")
            }
            guard let shapeValues = entry["shape"] as? [Any] else {
                throw invalid("\(name): no shape")
            }
            var shape: [Int] = []
            var count = 1
            for dim in shapeValues {
                guard let dim = Self.integer(dim), dim >= 0 else {
                    throw invalid("\(name): bad dimension in shape")
                }
                shape.append(dim)
                let (product, overflow) = count.multipliedReportingOverflow(by: dim)
                guard !overflow else { throw invalid("\(name): shape \(shape) overflows") }
                count = product
            }
            guard let offsets = entry["data_offsets"] as? [Any], offsets.count == 2,
                let begin = Self.integer(offsets[0]), let end = Self.integer(offsets[1])
            else { throw invalid("\(name): data_offsets is not two integers") }
            guard begin >= 0, begin <= end else {
                throw invalid("\(name): data_offsets [\(begin), \(end)] are reversed")
            }
            guard end <= dataSize else {
                throw invalid(
                    "\(name): data_offsets end \(end) is past the \(dataSize) data bytes (truncated file?)"
                )
            }
            let (bytes, overflow) = count.multipliedReportingOverflow(by: dtype.size)
            guard !overflow, bytes == end - begin else {
                throw invalid(
                    "\(name): shape \(shape) of \(dtypeName) needs \(bytes) bytes, data_offsets give \(end - begin)"
                )
            }
            tensors[name] = TensorInfo(dtype: dtype, shape: shape, byteRange: begin..<end)
        }
        // Overlapping ranges mean a corrupt header; the format also forbids them.
        let ranges = tensors.map { ($0.key, $0.value.byteRange) }.filter { !$0.1.isEmpty }
            .sorted { $0.1.lowerBound < $1.1.lowerBound }
        for (previous, next) in zip(ranges, ranges.dropFirst())
        where next.1.lowerBound < previous.1.upperBound {
            throw invalid("tensors \(previous.0) and \(next.0) overlap")
        }
        return (tensors, metadata)
    }

    private static func integer(_ value: Any) -> Int? {
        // JSONSerialization gives NSNumber; reject fractions and booleans disguised as numbers.
        if let value = value as? Int { return value }
        if let value = value as? Double, value.rounded() == value, abs(value) < 1e15 {
            return Int(value)
        }
        return nil
    }

    /// The raw bytes of a tensor, valid while this file object is alive.
    ///
    /// - Parameter name: The tensor's name.
    /// - Returns: A read-only view of the tensor's bytes in the mapped file.
    /// - Throws: ``EmbeddingError/missingTensor(name:)``.
    public func bytes(_ name: String) throws -> UnsafeRawBufferPointer {
        guard let info = tensors[name] else { throw EmbeddingError.missingTensor(name: name) }
        guard let base else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(
            start: base + dataOffset + info.byteRange.lowerBound, count: info.byteRange.count)
    }

    /// A `F32` tensor with the expected shape, as Floats.
    ///
    /// The returned buffer points into the mapping when the data is 4-byte aligned (the usual
    /// case); otherwise it is a copy. Either way it stays valid while this file object is alive.
    ///
    /// - Parameters:
    ///   - name: The tensor's name.
    ///   - shape: The shape the caller needs.
    /// - Returns: `shape.reduce(1, *)` Floats in row-major order.
    /// - Throws: ``EmbeddingError/missingTensor(name:)`` or ``EmbeddingError/tensorMismatch(name:reason:)``.
    public func floats(_ name: String, shape: [Int]) throws -> UnsafeBufferPointer<Float> {
        guard let info = tensors[name] else { throw EmbeddingError.missingTensor(name: name) }
        guard info.dtype == .f32 else {
            throw EmbeddingError.tensorMismatch(
                name: name, reason: "dtype is \(info.dtype.rawValue), expected F32")
        }
        guard info.shape == shape else {
            throw EmbeddingError.tensorMismatch(
                name: name, reason: "shape is \(info.shape), expected \(shape)")
        }
        let raw = try bytes(name)
        guard let start = raw.baseAddress else { return UnsafeBufferPointer(start: nil, count: 0) }
        if Int(bitPattern: start) % MemoryLayout<Float>.alignment == 0 {
            return UnsafeBufferPointer(
                start: start.assumingMemoryBound(to: Float.self), count: info.count)
        }
        // Misaligned data (legal in the format): copy once into memory this object keeps.
        let copy = UnsafeMutableBufferPointer<Float>.allocate(capacity: info.count)
        memcpy(copy.baseAddress!, start, raw.count)
        copies.withLock { $0.append(copy) }
        return UnsafeBufferPointer(copy)
    }

    // Copies of misaligned tensors, freed with the file; empty for well-formed model files.
    private let copies = LockedBuffers()

    final class LockedBuffers: @unchecked Sendable {
        // @unchecked Sendable: every access goes through `lock`.
        private let lock = NSLock()
        private var buffers: [UnsafeMutableBufferPointer<Float>] = []
        func withLock<T>(_ body: (inout [UnsafeMutableBufferPointer<Float>]) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&buffers)
        }
        deinit { for buffer in buffers { buffer.deallocate() } }
    }
}
