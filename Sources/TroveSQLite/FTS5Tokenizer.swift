import CSQLite

/// A tokenizer FTS5 can call: given a text's UTF-8 bytes, reports each term with the byte range
/// it came from.
///
/// The function receives the text (valid only during the call) and an `emit` callback taking the
/// term's bytes, its start and end byte offsets; `emit` returns `false` when FTS5 wants no more
/// terms (the function should then return).
public typealias FTS5TokenizeFunction =
    @Sendable (
        _ text: UnsafeBufferPointer<UInt8>, _ emit: (UnsafeBufferPointer<UInt8>, Int, Int) -> Bool
    ) -> Void

extension Connection {
    /// Registers a tokenizer with this connection's FTS5, under `name`, for use in
    /// `CREATE VIRTUAL TABLE … USING fts5(…, tokenize='name arg …')` and in queries on such tables.
    ///
    /// FTS5 calls `make` with the arguments after the name each time a table needs a tokenizer
    /// instance; returning `nil` rejects the arguments (the statement then fails). The same
    /// function tokenizes documents and queries.
    ///
    /// ```swift
    /// try connection.registerFTS5Tokenizer(named: "words") { arguments in
    ///     { text, emit in /* call emit(term, start, end) for each term */ }
    /// }
    /// try connection.execute(script: "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='words')")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The tokenizer's name (registering a name again replaces it for new tables).
    ///   - make: Builds a tokenize function from the `tokenize=` arguments, or `nil` to reject them.
    /// - Throws: ``SQLiteError`` when the connection is closed or its SQLite has no FTS5.
    public func registerFTS5Tokenizer(
        named name: String, _ make: @escaping @Sendable ([String]) -> FTS5TokenizeFunction?
    ) throws {
        guard handle != nil else {
            throw SQLiteError(extendedCode: .misuse, message: "the connection is closed")
        }
        guard let api = fts5API, let createTokenizer = api.pointee.xCreateTokenizer else {
            throw SQLiteError(
                extendedCode: .error,
                message: "this SQLite has no FTS5: cannot register tokenizer \(name)")
        }
        // Owned by FTS5 once registered: released by `fts5DestroyFactory` when the connection
        // closes or the name is registered again; released here if registration fails.
        let factory = Unmanaged.passRetained(FTS5TokenizerFactory(make))
        // FTS5 copies the struct of callbacks.
        var callbacks = fts5_tokenizer(
            xCreate: fts5CreateTokenizer, xDelete: fts5DeleteTokenizer, xTokenize: fts5Tokenize)
        let rc = createTokenizer(api, name, factory.toOpaque(), &callbacks, fts5DestroyFactory)
        guard rc == SQLITE_OK else {
            factory.release()
            throw SQLiteError(
                extendedCode: ResultCode(rawValue: rc),
                message: "could not register the FTS5 tokenizer \(name)")
        }
    }
}

/// The user data FTS5 keeps for a registered tokenizer: the Swift function that makes instances.
private final class FTS5TokenizerFactory {
    let make: @Sendable ([String]) -> FTS5TokenizeFunction?
    init(_ make: @escaping @Sendable ([String]) -> FTS5TokenizeFunction?) { self.make = make }
}

/// One tokenizer instance (FTS5's `Fts5Tokenizer*`), created per table.
private final class FTS5TokenizerInstance {
    let tokenize: FTS5TokenizeFunction
    init(_ tokenize: @escaping FTS5TokenizeFunction) { self.tokenize = tokenize }
}

// The C callbacks. They are global functions, so Swift passes them as plain C function pointers.

private func fts5CreateTokenizer(
    _ userData: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ count: Int32, _ output: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let userData, let output else { return SQLITE_MISUSE }
    let factory = Unmanaged<FTS5TokenizerFactory>.fromOpaque(userData).takeUnretainedValue()
    var strings: [String] = []
    for index in 0..<Int(count) {
        guard let argument = arguments?[index] else { return SQLITE_ERROR }
        strings.append(String(cString: argument))
    }
    guard let tokenize = factory.make(strings) else { return SQLITE_ERROR }
    // Owned by FTS5 until `fts5DeleteTokenizer`.
    output.pointee = OpaquePointer(
        Unmanaged.passRetained(FTS5TokenizerInstance(tokenize)).toOpaque())
    return SQLITE_OK
}

private func fts5DeleteTokenizer(_ tokenizer: OpaquePointer?) {
    guard let tokenizer else { return }
    Unmanaged<FTS5TokenizerInstance>.fromOpaque(UnsafeRawPointer(tokenizer)).release()
}

private func fts5Tokenize(
    _ tokenizer: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ flags: Int32,
    _ text: UnsafePointer<CChar>?, _ length: Int32,
    _ emitToken: (
        @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32, Int32, Int32)
            -> Int32
    )?
) -> Int32 {
    guard let tokenizer, let emitToken else { return SQLITE_MISUSE }
    let instance = Unmanaged<FTS5TokenizerInstance>.fromOpaque(UnsafeRawPointer(tokenizer))
        .takeUnretainedValue()
    guard let text, length > 0 else { return SQLITE_OK }
    var rc = SQLITE_OK
    let bytes = UnsafeBufferPointer(
        start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: Int(length))
    instance.tokenize(bytes) { term, start, end in
        rc = term.withMemoryRebound(to: CChar.self) { term in
            emitToken(context, 0, term.baseAddress, Int32(term.count), Int32(start), Int32(end))
        }
        return rc == SQLITE_OK
    }
    return rc
}

private func fts5DestroyFactory(_ userData: UnsafeMutableRawPointer?) {
    guard let userData else { return }
    Unmanaged<FTS5TokenizerFactory>.fromOpaque(userData).release()
}
