import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

@Suite("FileDiscovery")
struct FileDiscoveryTests {
    func write(_ directory: TemporaryDirectory, _ name: String, _ content: String) throws {
        let url = directory.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: url)
    }

    @Test("walks folders for .txt/.md/.jsonl, skipping hidden entries and other extensions")
    func walk() throws {
        let directory = try TemporaryDirectory()
        try write(directory, "a.md", "# A")
        try write(directory, "b.txt", "B")
        try write(directory, "sub/deeper/c.markdown", "C")
        try write(directory, "sub/d.jsonl", #"{"id": 1, "text": "D"}"#)
        try write(directory, ".hidden.md", "no")
        try write(directory, ".git/config.txt", "no")
        try write(directory, "picture.png", "no")
        try write(directory, "notes.pdf", "no")
        let found = try FileDiscovery.discover(
            [directory.url.path], environment: [:], currentDirectory: "/")
        let base = directory.url.path
        #expect(
            found.files.map(\.path) == [
                "\(base)/a.md", "\(base)/b.txt", "\(base)/sub/d.jsonl",
                "\(base)/sub/deeper/c.markdown",
            ])
        #expect(found.files.map(\.format) == [.markdown, .text, .jsonl, .markdown])
        #expect(found.folders == [base])
    }

    @Test("explicit files are taken whatever their name; duplicates once")
    func explicitFiles() throws {
        let directory = try TemporaryDirectory()
        try write(directory, "README", "plain")
        try write(directory, "x.md", "x")
        let found = try FileDiscovery.discover(
            ["README", "x.md", "./x.md", "."], environment: [:],
            currentDirectory: directory.url.path)
        #expect(found.files.map { ($0.path as NSString).lastPathComponent } == ["README", "x.md"])
        #expect(found.files[0].format == .text)
    }

    @Test("a missing path is a not-found error naming it")
    func missing() throws {
        #expect(throws: CLIError.notFound("no such file or folder: nope/x.md")) {
            try FileDiscovery.discover(["nope/x.md"], environment: [:], currentDirectory: "/")
        }
    }
}

@Suite("DocumentReader")
struct DocumentReaderTests {
    @Test("text files are one document; binary content is refused")
    func textAndBinary() throws {
        let docs = try DocumentReader.documents(
            in: Array("\u{FEFF}hello".utf8), format: .text, path: "a")
        #expect(docs == [SourceDocument(key: nil, text: "hello", source: nil, metadata: [])])
        #expect(throws: DocumentError.binary(path: "b")) {
            try DocumentReader.documents(
                in: [0x50, 0x4B, 0x03, 0x04, 0x00, 0x01], format: .text, path: "b")
        }
        #expect(throws: DocumentError.binary(path: "c")) {
            try DocumentReader.documents(
                in: [0x66, 0xFF, 0xFE, 0x41], format: .markdown, path: "c")
        }
    }

    @Test("jsonl: id, text, source, metadata and extra fields")
    func jsonLines() throws {
        let text = """
            {"id": "n1", "text": "first", "source": "phone", "created": "2026-01-03", "tags": ["a"]}

            {"id": 7, "text": "second", "metadata": {"k": 1.5}}
            """
        let docs = try DocumentReader.jsonLines(text, path: "x.jsonl")
        #expect(docs.count == 2)
        #expect(docs[0].key == "n1")
        #expect(docs[0].source == "phone")
        #expect(
            JSONValue.object(docs[0].metadata).serialized()
                == #"{"created":"2026-01-03","tags":["a"]}"#)
        #expect(docs[1].key == "7")
        #expect(docs[1].source == nil)
        #expect(JSONValue.object(docs[1].metadata).serialized() == #"{"k":1.5}"#)
    }

    @Test(
        "jsonl errors name the file and line",
        arguments: [
            (#"{"id": "a", "text": "x"}"# + "\nnot json", 2, "not valid JSON"),
            (#"["a"]"#, 1, "expected a JSON object"),
            (#"{"id": "a"}"#, 1, "\"text\" missing"),
            (#"{"text": "x"}"#, 1, "\"id\" missing"),
            (#"{"id": "a", "text": "x"}"# + "\n" + #"{"id": "a", "text": "y"}"#, 2, "duplicate id"),
            (#"{"id": "a", "text": "x", "source": 3}"#, 1, "\"source\" is not a string"),
            (#"{"id": "a", "text": "x", "metadata": [1]}"#, 1, "\"metadata\" is not an object"),
        ])
    func jsonLineErrors(text: String, line: Int, fragment: String) {
        #expect {
            try DocumentReader.jsonLines(text, path: "f.jsonl")
        } throws: { error in
            guard case DocumentError.malformedLine(let path, let number, let reason) = error else {
                return false
            }
            return path == "f.jsonl" && number == line && reason.contains(fragment)
        }
    }

    @Test("an unreadable file is a clear error")
    func unreadable() throws {
        #expect(throws: DocumentError.self) {
            try DocumentReader.bytes(of: "/nonexistent/file.txt")
        }
    }
}

@Suite("JSONValue")
struct JSONValueTests {
    @Test("parse and serialise keep order, types and escapes")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5e-3,"x\"\\\n\u00e9\ud83d\ude00"],"c":{}}"#
        let value = try JSONValue.parse(text)
        #expect(value["b"] == .int(1))
        #expect(
            value["a"]
                == .array([
                    .bool(true), .bool(false), .null, .double(-0.0025), .string("x\"\\\né😀"),
                ]))
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(value.serialized().hasPrefix(#"{"b":1,"a":"#))
    }

    @Test(
        "malformed JSON is an error with a position",
        arguments: ["{", "[1,]", "01", "\"abc", "{\"a\" 1}", "1 2", "tru"])
    func malformed(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test("floats print with enough digits to read back exactly")
    func floatPrecision() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let x =
                Float.random(in: -1...1, using: &rng)
                / Float(1 << Int.random(in: 0...20, using: &rng))
            let text = JSONValue.float(x).serialized()
            guard case .double(let back)? = try? JSONValue.parse(text) else {
                Issue.record("\(text) did not parse as a number")
                continue
            }
            #expect(Float(back) == x)
        }
    }
}

@Suite("FileDiscovery special files")
struct FileDiscoverySpecialTests {
    @Test("a device is refused by name")
    func device() {
        #expect(throws: CLIError.failure("/dev/null is not a regular file or folder")) {
            try FileDiscovery.discover(["/dev/null"], environment: [:], currentDirectory: "/")
        }
    }
}
