import Foundation
import Testing
import TroveSQLite

@testable import TroveSync

/// Key epochs in sealed boxes, wrapped keys, certificates and invitations, without a server.
@Suite struct SpaceKeysTests {
    let aad = Array("trove-sync/1\u{0}space\u{0}device\u{0}7".utf8)

    @Test func epochZeroKeepsTheFormatOfSpacesFromBeforeEpochs() throws {
        let key = try SyncKey.random()
        let box = try SpaceKeys(key: key).seal(Array("hello".utf8), associatedData: aad)
        #expect(SpaceKeys.epoch(of: box) == 0)
        #expect(
            try AuthenticatedEncryption.open(box, key: key.bytes, associatedData: aad)
                == Array("hello".utf8))
    }

    @Test func aBoxNamesItsEpochAndCannotBeMovedToAnother() throws {
        let keys = SpaceKeys(
            byEpoch: [0: try .random(), 1: try .random(), 2: try .random()], current: 2)
        var box = try keys.seal(Array("hello".utf8), associatedData: aad)
        #expect(SpaceKeys.epoch(of: box) == 2)
        #expect(try keys.open(box, associatedData: aad) == Array("hello".utf8))
        #expect(try keys.open(box, associatedData: aad + [0]) == nil)
        // The header is bound: naming epoch 1 instead opens with nothing.
        box[11] = 1
        #expect(try keys.open(box, associatedData: aad) == nil)
        // A device without epoch 2's key knows it lacks it and opens nothing.
        box[11] = 2
        let older = SpaceKeys(byEpoch: [0: keys.byEpoch[0]!, 1: keys.byEpoch[1]!], current: 1)
        #expect(older.lacksKey(for: box))
        #expect(try older.open(box, associatedData: aad) == nil)
        #expect(throws: SyncError.missingEpochKey(epoch: 2)) {
            try SpaceKeys(byEpoch: [0: keys.byEpoch[0]!], current: 2).seal([1], associatedData: aad)
        }
    }

    @Test func aWrappedKeyOpensOnlyForItsDeviceWithTheBoundItWasMadeWith() throws {
        func identity(_ device: String) throws -> DeviceIdentity {
            let key = try KeyAgreement.newPrivateKey()
            return DeviceIdentity(
                device: device, privateKey: key, publicKey: try KeyAgreement.publicKey(of: key))
        }
        let (laptop, phone, other) = (
            try identity("laptop"), try identity("phone"), try identity("x")
        )
        let key = try SyncKey.random()
        let previous = try SyncKey.random()
        let wrapped = try KeyWrap.wrap(
            key, epoch: 3, bound: previous.bytes, space: "s", wrapper: laptop, recipient: "phone",
            recipientKey: phone.publicKey)
        #expect(
            try KeyWrap.unwrap(
                wrapped, bound: previous.bytes, space: "s", identity: phone,
                wrapperKey: laptop.publicKey) == key)
        // Another device, another previous key, another space or another wrapper: nothing.
        #expect(
            try KeyWrap.unwrap(
                wrapped, bound: previous.bytes, space: "s", identity: other,
                wrapperKey: laptop.publicKey) == nil)
        #expect(
            try KeyWrap.unwrap(
                wrapped, bound: try SyncKey.random().bytes, space: "s", identity: phone,
                wrapperKey: laptop.publicKey) == nil)
        #expect(
            try KeyWrap.unwrap(
                wrapped, bound: previous.bytes, space: "t", identity: phone,
                wrapperKey: laptop.publicKey) == nil)
        #expect(
            try KeyWrap.unwrap(
                wrapped, bound: previous.bytes, space: "s", identity: phone,
                wrapperKey: other.publicKey) == nil)
    }

    @Test func certificatesAndInvitations() throws {
        let keys = SpaceKeys(key: try .random())
        let publicKey = try KeyAgreement.publicKey(of: try KeyAgreement.newPrivateKey())
        let certificate = try KeyWrap.certificate(
            space: "s", device: "d", publicKey: publicKey, keys: keys)
        let record = SyncDeviceRecord(
            device: "d", publicKey: Data(publicKey), certificate: certificate)
        #expect(KeyWrap.isCertified(record, space: "s", keys: keys))
        #expect(!KeyWrap.isCertified(record, space: "s", keys: SpaceKeys(key: try .random())))
        var moved = record
        moved.device = "e"
        #expect(!KeyWrap.isCertified(moved, space: "s", keys: keys))

        let invitation = KeyWrap.invitation(device: "0123abcd", publicKey: publicKey)
        let parsed = try KeyWrap.parseInvitation("  " + invitation + "\n")
        #expect(parsed.device == "0123abcd" && parsed.publicKey == publicKey)
        var typo = Array(invitation)
        typo[30] = typo[30] == "A" ? "B" : "A"
        #expect(throws: SyncError.self) { try KeyWrap.parseInvitation(String(typo)) }
        #expect(throws: SyncError.self) { try KeyWrap.parseInvitation("trove-sync-key-1:abc") }
        let code = try KeyWrap.newConfirmationCode()
        #expect(code.count == 11 && KeyWrap.normalized(code: code.lowercased()).count == 10)
    }
}
