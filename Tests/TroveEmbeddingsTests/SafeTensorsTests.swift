import Foundation
import Testing
import TroveEmbeddings
import TroveTestSupport

@Suite("SafeTensorsFile")
struct SafeTensorsTests {
    /// Builds a safetensors file: 8-byte little-endian header length, JSON header, data.
    static func file(header: String, data: [UInt8], declaredLength: UInt64? = nil) -> Data {
        let json = Array(header.utf8)
        var length = (declaredLength ?? UInt64(json.count)).littleEndian
        var bytes = Data(bytes: &length, count: 8)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: data)
        return bytes
    }

    static func floatBytes(_ values: [Float]) -> [UInt8] {
        values.withUnsafeBytes { Array($0) }
    }

    static let validHeader =
        #"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}}"#
    static let validData = floatBytes([1, 2, 3, 4, 5, 6, -1, -2])

    func write(_ data: Data, in dir: TemporaryDirectory) throws -> URL {
        let url = dir.url.appendingPathComponent("t.safetensors")
        try data.write(to: url)
        return url
    }

    func expectInvalid(_ data: Data, _ comment: Comment) throws {
        let dir = try TemporaryDirectory()
        let url = try write(data, in: dir)
        #expect(comment) {
            _ = try SafeTensorsFile(url: url)
        } throws: { error in
            guard case EmbeddingError.invalidSafeTensors(let path, let reason) = error else {
                return false
            }
            return path == url.path && !reason.isEmpty
        }
    }

    @Test("a valid file gives its tensors, shapes and values")
    func valid() throws {
        let dir = try TemporaryDirectory()
        let url = try write(Self.file(header: Self.validHeader, data: Self.validData), in: dir)
        let file = try SafeTensorsFile(url: url)
        #expect(file.tensors.count == 2)
        #expect(file.metadata == ["format": "pt"])
        #expect(file.tensors["a"]?.shape == [2, 3])
        #expect(Array(try file.floats("a", shape: [2, 3])) == [1, 2, 3, 4, 5, 6])
        #expect(Array(try file.floats("b", shape: [2])) == [-1, -2])
    }

    @Test("misaligned tensor data is still read correctly")
    func misaligned() throws {
        // A header of odd length puts the data section at an odd offset.
        let header = #"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} "#
        let dir = try TemporaryDirectory()
        let url = try write(Self.file(header: header, data: Self.floatBytes([0.5, 7])), in: dir)
        let file = try SafeTensorsFile(url: url)
        #expect(Array(try file.floats("x", shape: [2])) == [0.5, 7])
    }

    @Test("wrong shape, wrong dtype and a missing tensor throw")
    func accessorErrors() throws {
        let dir = try TemporaryDirectory()
        let url = try write(Self.file(header: Self.validHeader, data: Self.validData), in: dir)
        let file = try SafeTensorsFile(url: url)
        #expect(throws: EmbeddingError.missingTensor(name: "zzz")) {
            _ = try file.floats("zzz", shape: [1])
        }
        #expect(throws: EmbeddingError.self) { _ = try file.floats("a", shape: [3, 2]) }
        let i32 = #"{"n":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}"#
        let url2 = dir.url.appendingPathComponent("i.safetensors")
        try Self.file(header: i32, data: [1, 0, 0, 0]).write(to: url2)
        #expect(throws: EmbeddingError.self) {
            _ = try SafeTensorsFile(url: url2).floats("n", shape: [1])
        }
    }

    @Test("a missing file is reported as a missing model file")
    func missingFile() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("none.safetensors")
        #expect(throws: EmbeddingError.missingModelFile(path: url.path)) {
            _ = try SafeTensorsFile(url: url)
        }
    }

    @Test("empty and shorter-than-8-byte files")
    func tooShort() throws {
        try expectInvalid(Data(), "empty file")
        try expectInvalid(Data([1, 2, 3]), "3-byte file")
    }

    @Test("header length larger than the file")
    func hugeHeaderLength() throws {
        try expectInvalid(
            Self.file(header: Self.validHeader, data: Self.validData, declaredLength: 1 << 40),
            "2^40")
        try expectInvalid(
            Self.file(header: Self.validHeader, data: [], declaredLength: UInt64.max), "UInt64.max")
    }

    @Test(
        "malformed headers",
        arguments: [
            "not json at all",
            "[1, 2, 3]",
            #"{"a": 5}"#,
            #"{"a":{"shape":[1],"data_offsets":[0,4]}}"#,
            #"{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}"#,
            #"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
            #"{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}"#,
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
            #"{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}"#,
            #"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}"#,
            #"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}"#,
            #"{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}}"#,
            #"{"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
        ])
    func malformedHeader(_ header: String) throws {
        try expectInvalid(
            Self.file(header: header, data: Self.floatBytes([1, 2])), Comment(rawValue: header))
    }

    @Test("data section shorter than the header says (truncated download)")
    func truncatedData() throws {
        var data = Self.file(header: Self.validHeader, data: Self.validData)
        data.removeLast(5)
        try expectInvalid(data, "5 bytes cut")
    }

    @Test("every truncation of a valid file throws, never crashes")
    func everyPrefix() throws {
        let full = Self.file(header: Self.validHeader, data: Self.validData)
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("p.safetensors")
        var failures = 0
        for length in 0..<full.count {
            try full.prefix(length).write(to: url)
            do {
                _ = try SafeTensorsFile(url: url)
            } catch EmbeddingError.invalidSafeTensors {
                failures += 1
            }
        }
        #expect(failures == full.count)
        try full.write(to: url)
        #expect(try SafeTensorsFile(url: url).tensors.count == 2)
    }

    @Test("random byte corruption of the header throws or parses, never crashes")
    func randomCorruption() throws {
        var rng = SeededGenerator(seed: 7)
        let full = Self.file(header: Self.validHeader, data: Self.validData)
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("c.safetensors")
        var outcomes = 0
        for _ in 0..<200 {
            var bytes = full
            let position = Int.random(in: 0..<(8 + Self.validHeader.utf8.count), using: &rng)
            bytes[position] = UInt8.random(in: 0...255, using: &rng)
            try bytes.write(to: url)
            if let file = try? SafeTensorsFile(url: url) {
                // Whatever parsed must describe ranges inside the data it has.
                for info in file.tensors.values {
                    #expect(info.byteRange.upperBound <= Self.validData.count + 8)
                }
            }
            outcomes += 1
        }
        #expect(outcomes == 200)
    }
}
