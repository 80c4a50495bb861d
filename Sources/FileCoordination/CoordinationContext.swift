/// The coordinations the current task (or thread) is inside, to carry into work that runs
/// elsewhere.
///
/// A coordination started inside another one's accessor is recognised through this context
/// (see ``FileCoordinator``). Task-local values follow child tasks, but not work handed to a
/// `DispatchQueue` or a `Thread`: capture ``current`` before handing work over and run it inside
/// ``run(_:)`` there, or a nested coordination would wait for its own enclosing one.
public struct CoordinationContext: Sendable {
    let held: [LockPlan.Lock]

    /// The context of the current task or thread.
    public static var current: CoordinationContext { CoordinationContext(held: FileCoordinator.heldByEnclosingCoordination) }

    /// Whether the current task or thread is inside a coordination's accessor.
    public var isInsideCoordination: Bool { !held.isEmpty }

    /// Runs `body` inside this context.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        try FileCoordinator.$heldByEnclosingCoordination.withValue(held) { try body() }
    }
}
