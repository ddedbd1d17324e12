// libFuzzer target: the safetensors header parser (SafeTensorsFile(url:)).
// Properties: malformed input throws EmbeddingError, never traps or reads out of bounds (ASan);
// when a file is accepted, every tensor's bytes lie inside the file and can all be read.
import Foundation

private let fuzzPath = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/trove-fuzz-safetensors-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSafeTensors(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // The reader maps a file, so the input goes through one (rewritten per input).
    let fd = open(fuzzPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0)
    var written = 0
    while written < size {
        let n = write(fd, data + written, size - written)
        precondition(n > 0)
        written += n
    }
    close(fd)
    do {
        let file = try SafeTensorsFile(url: URL(fileURLWithPath: fuzzPath))
        for (name, info) in file.tensors {
            let bytes = try file.bytes(name)
            precondition(bytes.count == info.byteRange.count)
            precondition(info.count * info.dtype.size == bytes.count, "shape does not match byte range")
            var sum: UInt8 = 0
            for byte in bytes { sum &+= byte }  // touch every byte: ASan/SIGBUS catch a bad range
            if info.dtype == .f32 {
                let floats = try file.floats(name, shape: info.shape)
                precondition(floats.count == info.count)
            }
            _ = sum
        }
    } catch is EmbeddingError {
        // expected for malformed input
    } catch {
        fatalError("unexpected error type: \(error)")
    }
    return 0
}
