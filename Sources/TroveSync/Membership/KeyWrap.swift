import Foundation
import TroveSQLite

/// How an epoch key travels to a device, how a device proves it belongs, and the strings people
/// carry between devices.
///
/// **Wrapping.** Epoch `m`'s key is sealed for a recipient with AES-256-GCM under
/// `HKDF-SHA256(X25519(wrapper, recipient) || bound, salt, info)`, where `bound` is the key of
/// epoch `m - 1` for `m > 0` and the confirmation code for `m = 0`, and `info` (also the
/// associated data) names the space, the epoch and both devices with their public keys. The
/// server knows neither the previous key nor the code, so it can neither open a wrapped key nor
/// make one a device accepts; a removed device knows the keys up to its removal, but not the
/// first epoch after it, so it can make no later one.
///
/// **Certificates.** A device's id and public key sealed under an epoch key: a member wraps a
/// new epoch only for devices whose certificate opens with a key it holds, so a device the
/// server made up gets nothing.
enum KeyWrap {
    static let salt = Array("trove-sync/2 key wrap".utf8)

    static func info(
        space: String, epoch: Int64, wrapper: String, wrapperKey: [UInt8], recipient: String,
        recipientKey: [UInt8]
    ) -> [UInt8] {
        Array("trove-sync/2\u{0}\(space)\u{0}key\u{0}\(epoch)\u{0}\(wrapper)\u{0}".utf8)
            + wrapperKey + Array("\u{0}\(recipient)\u{0}".utf8) + recipientKey
    }

    /// Wraps `key` (epoch `epoch`) for `recipient`.
    ///
    /// - Parameter bound: the previous epoch's key bytes, or the confirmation code's for epoch 0.
    static func wrap(
        _ key: SyncKey, epoch: Int64, bound: [UInt8], space: String, wrapper: DeviceIdentity,
        recipient: String, recipientKey: [UInt8]
    ) throws -> WrappedSpaceKey {
        guard
            let shared = try KeyAgreement.sharedSecret(
                privateKey: wrapper.privateKey, peerPublicKey: recipientKey)
        else { throw SyncError.invalidKey(reason: "device \(recipient) has no usable public key") }
        let info = info(
            space: space, epoch: epoch, wrapper: wrapper.device, wrapperKey: wrapper.publicKey,
            recipient: recipient, recipientKey: recipientKey)
        let kek = try KeyAgreement.hkdfSHA256(
            secret: shared + bound, salt: salt, info: info, count: 32)
        let sealed = try AuthenticatedEncryption.seal(key.bytes, key: kek, associatedData: info)
        return WrappedSpaceKey(
            epoch: epoch, device: recipient, wrappedBy: wrapper.device, payload: Data(sealed))
    }

    /// Unwraps a key wrapped for `identity`; nil when it does not open (not made by a holder of
    /// `bound`, altered, or for another device).
    static func unwrap(
        _ wrapped: WrappedSpaceKey, bound: [UInt8], space: String, identity: DeviceIdentity,
        wrapperKey: [UInt8]
    ) throws -> SyncKey? {
        guard
            let shared = try KeyAgreement.sharedSecret(
                privateKey: identity.privateKey, peerPublicKey: wrapperKey)
        else { return nil }
        let info = info(
            space: space, epoch: wrapped.epoch, wrapper: wrapped.wrappedBy, wrapperKey: wrapperKey,
            recipient: identity.device, recipientKey: identity.publicKey)
        let kek = try KeyAgreement.hkdfSHA256(
            secret: shared + bound, salt: salt, info: info, count: 32)
        guard
            let key = try AuthenticatedEncryption.open(
                Array(wrapped.payload), key: kek, associatedData: info), key.count == 32
        else { return nil }
        return SyncKey(bytes: key)
    }

    // MARK: Certificates

    static func certificateData(space: String, device: String, publicKey: [UInt8]) -> [UInt8] {
        Array("trove-sync/2\u{0}\(space)\u{0}device\u{0}\(device)\u{0}".utf8) + publicKey
    }

    /// A certificate for `device`, sealed under the current epoch of `keys`.
    static func certificate(
        space: String, device: String, publicKey: [UInt8], keys: SpaceKeys
    ) throws -> Data {
        Data(
            try keys.seal(
                Array("trove-sync device".utf8),
                associatedData: certificateData(space: space, device: device, publicKey: publicKey)
            ))
    }

    /// Whether `record`'s certificate opens with a key in `keys`.
    static func isCertified(_ record: SyncDeviceRecord, space: String, keys: SpaceKeys) -> Bool {
        (try? keys.open(
            Array(record.certificate),
            associatedData: certificateData(
                space: space, device: record.device, publicKey: Array(record.publicKey))))
            == Array("trove-sync device".utf8)
    }

    // MARK: Strings people carry

    static let invitationPrefix = "trove-device-1:"
    /// Letters and digits that are hard to confuse (no 0/O, 1/I/L, U).
    static let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ23456789")

    /// The string a new device shows (its id and public key, with a checksum), which a member
    /// enters to add it: QR-sized, and the way the member learns the new device's key without
    /// trusting the server.
    static func invitation(device: String, publicKey: [UInt8]) -> String {
        let body = Array(device.utf8) + [0] + publicKey
        return invitationPrefix
            + Data(body + checksum(body)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The device id and public key of an invitation.
    ///
    /// - Throws: ``SyncError/invalidInvitation(reason:)``.
    static func parseInvitation(_ text: String) throws -> (device: String, publicKey: [UInt8]) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(invitationPrefix) else {
            throw SyncError.invalidInvitation(reason: "it starts with \(invitationPrefix)")
        }
        var body = String(text.dropFirst(invitationPrefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while body.count % 4 != 0 { body += "=" }
        guard let data = Data(base64Encoded: body), data.count > 2 + 1 + 32 else {
            throw SyncError.invalidInvitation(reason: "it is cut short or mistyped")
        }
        let bytes = Array(data.dropLast(2))
        guard Array(data.suffix(2)) == checksum(bytes),
            let zero = bytes.firstIndex(of: 0), bytes.count - zero - 1 == 32, zero > 0
        else {
            throw SyncError.invalidInvitation(reason: "the checksum does not match (mistyped)")
        }
        return (String(decoding: bytes[..<zero], as: UTF8.self), Array(bytes[(zero + 1)...]))
    }

    /// A new confirmation code: 10 characters of ``alphabet`` in two groups, shown on the adding
    /// device and typed on the new one (random: the server would have to guess it in the one try
    /// a device makes).
    static func newConfirmationCode() throws -> String {
        let bytes = try AuthenticatedEncryption.randomBytes(10)
        let characters = bytes.map { alphabet[Int($0) % alphabet.count] }
        return String(characters[0..<5]) + "-" + String(characters[5...])
    }

    /// A confirmation code as bound into the wrap (upper case, without separators or spaces).
    static func normalized(code: String) -> [UInt8] {
        Array(code.uppercased().filter { $0.isLetter || $0.isNumber }.utf8)
    }

    /// Two bytes that catch a mistyped string (Fletcher-16; not a secret, not a MAC).
    static func checksum(_ bytes: [UInt8]) -> [UInt8] {
        var a: UInt16 = 0
        var b: UInt16 = 0
        for byte in bytes {
            a = (a + UInt16(byte)) % 255
            b = (b + a) % 255
        }
        return [UInt8(a), UInt8(b)]
    }
}
