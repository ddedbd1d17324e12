import CTroveCipher

/// Key material in memory that is zeroed when released (and never copied into Swift arrays).
///
/// Owns one heap buffer of `count` bytes, allocated once; `deinit` overwrites it with zeros
/// through a call the optimiser can't remove. Not `Sendable`: used within one call.
final class SecureBytes {
    let count: Int
    let pointer: UnsafeMutablePointer<UInt8>

    init(count: Int) {
        self.count = count
        pointer = .allocate(capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
    }

    /// Copies `bytes` (for example the UTF-8 of a passphrase) into zeroed-on-release memory.
    convenience init<C: Collection>(copying bytes: C) where C.Element == UInt8 {
        self.init(count: bytes.count)
        var index = 0
        for byte in bytes {
            pointer[index] = byte
            index += 1
        }
    }

    deinit {
        trove_cipher_zero(pointer, max(count, 1))
        pointer.deallocate()
    }

    var buffer: UnsafeMutableBufferPointer<UInt8> { .init(start: pointer, count: count) }
}
