import Foundation
import Testing

@testable import Trove

/// JSON text <-> `Value`, the store's one JSON reader and writer (json fields, undeclared fields,
/// dump records; the CLI parses through it too).
@Suite("JSONCoding")
struct JSONCodingTests {
    @Test(
        "numbers keep their kind: 2 is an integer, 2.0 and 1e2 are reals, huge integers are reals")
    func numberKinds() throws {
        let value = try JSONCoding.value(
            #"[2, 2.0, 1e2, -0.0025, 9223372036854775807, 99999999999999999999]"#)
        #expect(
            value
                == .array([
                    .int(2), .double(2), .double(100), .double(-0.0025), .int(.max), .double(1e20),
                ]))
    }

    @Test("canonical text: keys sorted, no spaces, shortest reals, escapes; reads back equal")
    func canonicalText() throws {
        let value: Value = [
            "b": 1, "a": [true, false, nil, 2.0, 1e-5, 5e20], "c": ["é😀\"\\\n\u{01}": "x"],
        ]
        let text = try JSONCoding.text(value)
        #expect(text == #"{"a":[true,false,null,2.0,1e-05,5e20],"b":1,"c":{"é😀\"\\\n\u0001":"x"}}"#)
        #expect(try JSONCoding.value(text) == value)
    }

    @Test("a repeated key keeps the last value; escapes and surrogate pairs decode")
    func repeatsAndEscapes() throws {
        #expect(try JSONCoding.value(#"{"k":1,"k":2}"#) == ["k": 2])
        #expect(try JSONCoding.value(#""\ud83d\ude00\/\b\f\t\r""#) == .string("😀/\u{08}\u{0C}\t\r"))
    }

    @Test("what JSON cannot hold is refused with the field's name")
    func refusesNonJSON() {
        for value: Value in [
            .double(.infinity), .double(.nan), .date(Date(timeIntervalSince1970: 0)),
            .data(Data([1])), .vector([1]),
        ] {
            #expect {
                try JSONCoding.text(["x": value], field: "meta")
            } throws: { error in
                guard case TroveError.invalidValue(let field, _) = error else { return false }
                return field == "meta"
            }
        }
    }

    @Test(
        "malformed JSON is an error with a position",
        arguments: ["{", "[1,]", "01", "\"abc", "{\"a\" 1}", "1 2", "tru", ""])
    func malformed(text: String) {
        #expect {
            try JSONCoding.value(text)
        } throws: { error in
            (error as? JSONParseError)?.reason.contains("at byte") == true
        }
    }
}
