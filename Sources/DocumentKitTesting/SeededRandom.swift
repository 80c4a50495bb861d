import Foundation

/// A deterministic random number generator (SplitMix64), for fuzz tests that must be repeatable:
/// print the seed, and a failure can be replayed with it.
///
/// ```swift
/// let seed = SeededRandom.seed(environment: "MYAPP_FUZZ_SEED", default: 2026)
/// print("fuzzing with seed \(seed)")
/// var random = SeededRandom(seed: seed)
/// let offset = Int.random(in: 0..<data.count, using: &random)
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that gives the same numbers for the same seed.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed in the environment variable `name` (decimal), else `default`.
    public static func seed(environment name: String, default: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) } ?? `default`
    }
}
