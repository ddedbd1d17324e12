// Documents and aggregates: schemaless documents queried by JSON path, grouped and counted.
// Run: swift run example-documents [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("documents-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
// Declared fields are checked on every write; the others are kept as JSON (allowsUndeclaredFields).
let orders = try await database.documents("orders", schema: DocumentSchema(
    id: .string,
    fields: [.text("customer", indexed: true), .real("total"), .date("placed")],
    allowsUndeclaredFields: true))

let day = 86_400.0
try await orders.insert([
    Document(id: "o1", ["customer": "ada", "total": 30, "placed": .date(Date(timeIntervalSince1970: 1 * day)),
                        "items": ["tea", "milk"], "ship": ["city": "Oslo"]]),
    Document(id: "o2", ["customer": "bo", "total": 12.5, "placed": .date(Date(timeIntervalSince1970: 2 * day)),
                        "items": ["bread"], "ship": ["city": "Lima"]]),
    Document(id: "o3", ["customer": "ada", "total": 7.5, "placed": .date(Date(timeIntervalSince1970: 3 * day)),
                        "items": ["tea"], "ship": ["city": "Oslo"], "gift": true]),
])

// Undeclared fields by name and by JSON path; arrays by element.
print("to Oslo:", try await orders.fetch(Query(Field("ship", path: "$.city") == "Oslo")).map(\.id))
print("with tea:", try await orders.fetch(Query(Field("items").arrayContains("tea"))).map(\.id))
print("gifts or big:", try await orders.fetch(Query(Field("gift") == true || Field("total") > 20)).map(\.id))

// Aggregates, grouped; and a count.
for row in try await orders.aggregate([.count(), .sum("total"), .average("total")], groupBy: [Field("customer")]) {
    print(row.group["customer"]!, "orders", row.values["count"]!, "sum", row.values["sum_total"]!, "avg", row.values["avg_total"]!)
}
print("placed after day 1:", try await orders.count(where: Field("placed") > .date(Date(timeIntervalSince1970: 1 * day))))

// Patch a field and a JSON path; compare-and-set on the version.
let o2 = try await orders.patch("o2", [Field("ship", path: "$.city"): "Quito", Field("total"): 14])
print("o2 now", o2["ship"]!, o2["total"]!, "version", o2.version)
do {
    try await orders.update(Document(id: "o2", ["customer": "bo", "total": 1, "placed": .date(Date())]), ifVersion: 1)
} catch TroveError.versionConflict(let id, let expected, let actual) {
    print("conflict on", id, "expected", expected, "found", actual)
}
// Bad input is a typed error and writes nothing.
do {
    try await orders.insert(Document(id: "o4", ["customer": "cy", "total": "lots", "placed": .date(Date())]))
} catch let error as TroveError {
    print(error)
}
print("orders:", try await orders.count())
