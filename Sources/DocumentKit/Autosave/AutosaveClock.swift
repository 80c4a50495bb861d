/// The time autosave waits by: the system's monotonic clock, or a manual one in tests
/// (`ManualAutosaveClock` in DocumentKitTesting).
public protocol AutosaveClock: Sendable {
    /// The time now, from an arbitrary origin.
    var now: Duration { get }
    /// Returns at `deadline` (on this clock), or throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Duration) async throws
}

/// The system's monotonic clock (`ContinuousClock`).
public struct SystemAutosaveClock: AutosaveClock {
    private let origin = ContinuousClock.now

    /// The clock.
    public init() {}

    public var now: Duration { ContinuousClock.now - origin }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin + deadline)
    }
}
