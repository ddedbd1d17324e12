// A transaction over two collections and raw SQL: all or nothing.
// Run: swift run example-transaction [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("transaction-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let accounts = try await database.documents("accounts", schema: DocumentSchema(
    id: .string, fields: [.text("owner"), .integer("balance")]))
let transfers = try await database.documents("transfers", schema: DocumentSchema(
    fields: [.text("from"), .text("to"), .integer("amount")]))
try await database.execute("CREATE TABLE audit(note TEXT)")
try await accounts.insert([Document(id: "a", ["owner": "Ada", "balance": 100]), Document(id: "b", ["owner": "Bo", "balance": 20])])

struct InsufficientFunds: Error {}

/// Moves money, records the transfer and audits it, in one transaction.
func transfer(_ amount: Int64, from: String, to: String, id: Int64) async throws {
    try await database.write { tx in
        let accounts = try tx.documents("accounts")
        let balance = try accounts.fetch(id: .string(from))!["balance"]!.intValue!
        try accounts.patch(.string(from), [Field("balance"): .int(balance - amount)])
        let other = try accounts.fetch(id: .string(to))!["balance"]!.intValue!
        try accounts.patch(.string(to), [Field("balance"): .int(other + amount)])
        try tx.documents("transfers").insert(Document(id: .int(id), ["from": .string(from), "to": .string(to), "amount": .int(amount)]))
        try tx.execute("INSERT INTO audit(note) VALUES (?)", [.text("\(from) -> \(to): \(amount)")])
        if balance - amount < 0 { throw InsufficientFunds() }   // rolls everything back
    }
}

try await transfer(30, from: "a", to: "b", id: 1)
do {
    try await transfer(500, from: "b", to: "a", id: 2)
} catch is InsufficientFunds {
    print("transfer 2 refused; nothing of it was written")
}
for account in try await accounts.fetch() { print(account.id, account["balance"]!) }
print("transfers:", try await transfers.count(), "audit rows:", try await database.query("SELECT count(*) AS n FROM audit")[0].int("n")!)

// Reads see one consistent snapshot, on a reader connection beside the writer.
let total = try await database.read { r in
    try r.documents("accounts").aggregate([.sum("balance")])[0].values["sum_balance"]!
}
print("total balance:", total)
