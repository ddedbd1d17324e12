/// An in-memory BM25 inverted index over documents identified by `Int64` ids.
///
/// Scores exactly as SQLite FTS5's `bm25()` does (Robertson & Zaragoza's Okapi BM25 with
/// FTS5's idf): for each query clause q,
///
///     idf(q)   = ln((N − n(q) + 0.5) / (n(q) + 0.5)), or 1e-6 when that is not positive
///     score(d) = Σ idf(q) · tf(q,d)·(k1 + 1) / (tf(q,d) + k1·(1 − b + b·|d|/avgdl))
///
/// with N the number of documents, n(q) the number containing q, |d| the number of terms of d,
/// avgdl the mean over all documents. A clause is a term, or a phrase (several terms in order,
/// adjacent) whose tf is its number of occurrences, as FTS5 scores a quoted string.
///
/// Top-k retrieval is document-at-a-time with MaxScore pruning (Turtle & Flood 1995): clauses
/// whose score upper bounds cannot lift a document into the current top k are only probed for
/// documents the other clauses already made competitive, so the long posting lists of common
/// terms are skipped through by binary search instead of scanned. The result is exactly the
/// exhaustive top k (ties broken by smaller id first).
///
/// Memory: per posting 8 bytes (slot + term frequency); per document its term sequence
/// (4 bytes a term, for phrases and removal), 16 bytes of length/id bookkeeping and its id-map
/// entry; per distinct term its string, its dictionary entry and two array headers.
///
/// ```swift
/// var index = BM25Index(tokenizer: Tokenizer(.english))
/// index.add(id: 1, text: "Fresh groceries delivered")
/// index.add(id: 2, text: "The grocery list for Friday")
/// let hits = index.search(TypedQuery("groceries", tokenizer: index.tokenizer), topK: 10)
/// ```
public struct BM25Index: Sendable {
    /// BM25's free parameters.
    public struct Parameters: Sendable, Hashable, Codable {
        /// Term-frequency saturation. FTS5, Lucene and tantivy use 1.2.
        public var k1: Double
        /// Length normalisation, 0 (none) ... 1 (full). FTS5, Lucene and tantivy use 0.75.
        public var b: Double

        /// Creates parameters; the defaults are FTS5's, so both text legs rank alike.
        public init(k1: Double = 1.2, b: Double = 0.75) {
            self.k1 = k1
            self.b = b
        }
    }

    /// The tokenizer documents and queries go through.
    public let tokenizer: Tokenizer
    /// BM25's parameters.
    public let parameters: Parameters

    // Term dictionary: term → dense id; postings indexed by term id.
    var termIDs: [String: UInt32] = [:]
    var postings: [Postings] = []

    // Documents by internal slot. Slots are never reused, so posting lists stay sorted by
    // appending; a removed document leaves a dead slot (length 0, id kept for nothing).
    var slotIDs: [Int64] = []
    var slotLengths: [UInt32] = []
    var slotTerms: [[UInt32]] = []  // the document's term ids in order (phrases, removal)
    var slotOfID: [Int64: UInt32] = [:]
    var totalLength = 0

    /// Creates an empty index.
    ///
    /// - Parameters:
    ///   - tokenizer: The tokenizer for documents and queries (the collection's).
    ///   - parameters: BM25's k1 and b. Default: FTS5's (1.2, 0.75).
    public init(tokenizer: Tokenizer, parameters: Parameters = Parameters()) {
        self.tokenizer = tokenizer
        self.parameters = parameters
    }

    /// The number of documents.
    public var count: Int { slotOfID.count }

    /// Whether a document is indexed.
    public func contains(id: Int64) -> Bool { slotOfID[id] != nil }

    /// The mean document length in terms (FTS5's avgdl).
    public var averageDocumentLength: Double {
        count == 0 ? 0 : Double(totalLength) / Double(count)
    }

    /// Adds a document, replacing any document with the same id.
    ///
    /// - Parameters:
    ///   - id: The document's id (the row id).
    ///   - text: Its text.
    /// - Complexity: O(length of `text`), plus a removal's cost when replacing.
    public mutating func add(id: Int64, text: String) {
        add(id: id, fields: CollectionOfOne(text))
    }

    /// Adds a document of several text fields, replacing any document with the same id: scored
    /// as FTS5's `bm25()` scores a row of several columns of weight 1 (term frequencies and the
    /// length summed over the fields), and a phrase never matches across two fields.
    ///
    /// ```swift
    /// index.add(id: 7, fields: ["Trip to Lisbon", "Flights and a hotel near the river"])
    /// ```
    /// - Parameters:
    ///   - id: The document's id (the row id).
    ///   - fields: Its fields' texts, in column order.
    /// - Complexity: O(total length), plus a removal's cost when replacing.
    public mutating func add(id: Int64, fields: some Sequence<String>) {
        remove(id: id)
        let slot = UInt32(slotIDs.count)
        var sequence: [UInt32] = []
        var length: UInt32 = 0
        for var text in fields {
            // A boundary no term matches, so phrases stay within one field.
            if !sequence.isEmpty { sequence.append(Self.fieldBoundary) }
            text.withUTF8 { bytes in
                tokenizer.forEachTerm(utf8: bytes) { term, _, _ in
                    sequence.append(termID(for: term))
                    length += 1
                    return true
                }
            }
        }
        // Term frequencies: runs of equal ids in a sorted copy (no hashing per document).
        let sorted = sequence.sorted()
        var start = 0
        while start < sorted.count, sorted[start] != Self.fieldBoundary {
            var end = start + 1
            while end < sorted.count, sorted[end] == sorted[start] { end += 1 }
            postings[Int(sorted[start])].append(
                slot: slot, tf: UInt32(end - start), documentLength: length)
            start = end
        }
        slotIDs.append(id)
        slotLengths.append(length)
        slotTerms.append(sequence)
        slotOfID[id] = slot
        totalLength += Int(length)
    }

    /// The term id separating two fields in a document's term sequence (never a real term's).
    static let fieldBoundary = UInt32.max

    /// Removes a document.
    ///
    /// - Parameter id: The document's id.
    /// - Returns: Whether it was indexed.
    /// - Complexity: O(Σ posting-list lengths of its distinct terms).
    @discardableResult
    public mutating func remove(id: Int64) -> Bool {
        guard let slot = slotOfID.removeValue(forKey: id) else { return false }
        let sequence = slotTerms[Int(slot)]
        for term in Set(sequence) where term != Self.fieldBoundary {
            postings[Int(term)].remove(slot: slot)
        }
        totalLength -= Int(slotLengths[Int(slot)])
        slotLengths[Int(slot)] = 0
        slotTerms[Int(slot)] = []
        // Dead slots cost 8 + 4 + 24 bytes each; renumber once they outnumber the live ones.
        let dead = slotIDs.count - slotOfID.count
        if dead > 1024, dead > slotOfID.count { compactSlots() }
        return true
    }

    /// Renumbers the live documents' slots densely, in their current order (so posting lists
    /// stay sorted), dropping the slots removals left behind.
    ///
    /// - Complexity: O(slots + postings).
    mutating func compactSlots() {
        var newSlot = [UInt32](repeating: .max, count: slotIDs.count)
        var ids: [Int64] = []
        var lengths: [UInt32] = []
        var terms: [[UInt32]] = []
        ids.reserveCapacity(slotOfID.count)
        for (slot, id) in slotIDs.enumerated() where slotOfID[id] == UInt32(slot) {
            newSlot[slot] = UInt32(ids.count)
            slotOfID[id] = UInt32(ids.count)
            ids.append(id)
            lengths.append(slotLengths[slot])
            terms.append(slotTerms[slot])
        }
        for term in postings.indices {
            for index in postings[term].slots.indices {
                postings[term].slots[index] = newSlot[Int(postings[term].slots[index])]
            }
        }
        slotIDs = ids
        slotLengths = lengths
        slotTerms = terms
    }

    /// Removes every document (the dictionary is kept).
    public mutating func removeAll() {
        for index in postings.indices { postings[index] = Postings() }
        slotIDs = []
        slotLengths = []
        slotTerms = []
        slotOfID = [:]
        totalLength = 0
    }

    private mutating func termID(for term: UnsafeBufferPointer<UInt8>) -> UInt32 {
        let string = String(decoding: term, as: UTF8.self)
        if let id = termIDs[string] { return id }
        let id = UInt32(postings.count)
        termIDs[string] = id
        postings.append(Postings())
        return id
    }

    /// The number of documents containing a term (in its indexed form).
    public func documentFrequency(ofTerm term: String) -> Int {
        termIDs[term].map { postings[Int($0)].slots.count } ?? 0
    }
}

/// One term's posting list: the slots of the documents containing it, ascending, and the term's
/// frequency in each. Two parallel arrays of 4 bytes per posting.
struct Postings: Sendable {
    var slots: [UInt32] = []
    var frequencies: [UInt32] = []
    // Bounds for MaxScore: never lowered by removals, so they stay upper bounds.
    var maximumFrequency: UInt32 = 0
    var minimumDocumentLength: UInt32 = .max

    mutating func append(slot: UInt32, tf: UInt32, documentLength: UInt32) {
        slots.append(slot)
        frequencies.append(tf)
        maximumFrequency = max(maximumFrequency, tf)
        minimumDocumentLength = min(minimumDocumentLength, documentLength)
    }

    mutating func remove(slot: UInt32) {
        let index = slots.partitioningIndex { $0 >= slot }
        guard index < slots.count, slots[index] == slot else { return }
        slots.remove(at: index)
        frequencies.remove(at: index)
    }
}

extension Array where Element: Comparable {
    /// The first index whose element satisfies `predicate` (which must be false then true along
    /// the array), by binary search from `low`.
    @inline(__always)
    func partitioningIndex(from low: Int = 0, where predicate: (Element) -> Bool) -> Int {
        var low = low
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
