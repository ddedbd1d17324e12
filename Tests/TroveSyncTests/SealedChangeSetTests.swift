import Foundation
import Testing
import TroveSync

@Suite struct SealedChangeSetTests {
    @Test func aChangeSetWithoutAServerSequenceIsNotYetPushed() {
        let set = SealedChangeSet(device: "d1", deviceSequence: 1, payload: Data([1, 2, 3]))
        #expect(set.serverSequence == nil)
        #expect(
            set
                != SealedChangeSet(
                    device: "d1", deviceSequence: 1, payload: Data([1, 2, 3]), serverSequence: 7))
    }
}
