import Foundation
import Testing
import TroveSQLite

@testable import Trove

/// The load's fast record parser against the general JSON parser on the same lines.
@Suite("Dump record parser")
struct DumpRecordParserTests {
    static let lines = [
        #"{"c":"items","v":[1,-0.0,"a\"b\\c\n\u0001😀 é",{"base64":"AACAPw=="},{"real":"-inf"},null,9223372036854775807,1e-05]}"#,
        #"{"c":"t","v":[]}"#,
        #"{"c":"t","v":["\ud83d\ude00\/\b\f\t\r",-9223372036854775808,5e-324,1.7976931348623157e308,{"real":"inf"}]}"#,
    ]

    @Test("reads the dump's own lines exactly as the JSON parser does", arguments: lines)
    func agrees(_ line: String) throws {
        let fast = try #require(DumpRecordParser.parse(ArraySlice(Array(line.utf8))))
        let json = try JSONCoding.value(line)
        guard case .array(let values)? = json.objectValue?["v"] else {
            Issue.record("no values")
            return
        }
        #expect(json.objectValue?["c"] == .string(fast.section))
        let slow = values.compactMap(DumpLines.sql)
        #expect(fast.values.count == slow.count)
        for (a, b) in zip(fast.values, slow) {
            if case .real(let x) = a, case .real(let y) = b {
                #expect(x.bitPattern == y.bitPattern)
            } else {
                #expect(a == b)
            }
        }
    }

    @Test(
        "anything else is left to the general parser",
        arguments: [
            #"{ "c":"t","v":[1]}"#, #"{"c":"t","v":[1]} "#, #"{"c":"t","v":[true]}"#,
            #"{"c":"t","v":[1,]}"#,
            #"{"c":"t","v":["unterminated]}"#, #"{"c":"t","v":[{"base64":"!!"}]}"#,
            #"{"c":"t","v":[99999999999999999999]}"#,
        ])
    func refuses(_ line: String) {
        #expect(DumpRecordParser.parse(ArraySlice(Array(line.utf8))) == nil)
    }
}
