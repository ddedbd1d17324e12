/// A small, fast, seedable random number generator (SplitMix64) so tests are reproducible.
///
/// ```swift
/// var rng = SeededGenerator(seed: 42)
/// let vector = rng.unitVector(dimension: 384)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A vector with components uniform in -1...1.
    public mutating func vector(dimension: Int) -> [Float] {
        (0..<dimension).map { _ in Float.random(in: -1...1, using: &self) }
    }

    /// A vector of unit L2 norm (components drawn uniformly, then scaled).
    public mutating func unitVector(dimension: Int) -> [Float] {
        var v = vector(dimension: dimension)
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm > 0 { for i in v.indices { v[i] /= norm } }
        return v
    }
}
