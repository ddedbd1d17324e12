import Foundation
import Testing

@testable import TroveSQLite

/// X25519 and HKDF-SHA256 against the RFCs' test vectors, through the backend this platform
/// uses (OpenSSL on Linux, CryptoKit on Apple platforms).
@Suite struct KeyAgreementTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    @Test func x25519MatchesRFC7748() throws {
        let alice = Self.bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bob = Self.bytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        let alicePublic = try KeyAgreement.publicKey(of: alice)
        let bobPublic = try KeyAgreement.publicKey(of: bob)
        #expect(
            alicePublic
                == Self.bytes("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(
            bobPublic
                == Self.bytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = Self.bytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(
            try KeyAgreement.sharedSecret(privateKey: alice, peerPublicKey: bobPublic) == shared)
        #expect(
            try KeyAgreement.sharedSecret(privateKey: bob, peerPublicKey: alicePublic) == shared)
    }

    @Test func aSmallOrderOrShortPeerKeyGivesNoSecret() throws {
        let key = try KeyAgreement.newPrivateKey()
        #expect(
            try KeyAgreement.sharedSecret(
                privateKey: key, peerPublicKey: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(try KeyAgreement.sharedSecret(privateKey: key, peerPublicKey: [1, 2, 3]) == nil)
    }

    @Test func newKeyPairsAgree() throws {
        let a = try KeyAgreement.newPrivateKey()
        let b = try KeyAgreement.newPrivateKey()
        #expect(a != b)
        let ab = try KeyAgreement.sharedSecret(
            privateKey: a, peerPublicKey: try KeyAgreement.publicKey(of: b))
        let ba = try KeyAgreement.sharedSecret(
            privateKey: b, peerPublicKey: try KeyAgreement.publicKey(of: a))
        #expect(ab != nil && ab == ba)
    }

    @Test func hkdfMatchesRFC5869() throws {
        let okm = try KeyAgreement.hkdfSHA256(
            secret: [UInt8](repeating: 0x0b, count: 22),
            salt: Self.bytes("000102030405060708090a0b0c"),
            info: Self.bytes("f0f1f2f3f4f5f6f7f8f9"), count: 42)
        #expect(
            okm
                == Self.bytes(
                    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
                ))
        // Test case 3: empty salt and info.
        let empty = try KeyAgreement.hkdfSHA256(
            secret: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], count: 42)
        #expect(
            empty
                == Self.bytes(
                    "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
                ))
    }
}
