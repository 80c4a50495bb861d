/// When a document with unsaved changes saves itself.
///
/// After a change, the document waits for ``quietPeriod`` without changes (each change starts
/// the wait again), but never longer than ``maximumDelay`` after the first unsaved change, so
/// that constant typing still saves. A failed autosave is retried after ``retryDelay``, doubling
/// up to ``maximumDelay``.
public struct AutosavePolicy: Sendable {
    /// The wait after the last change. Default 2 s.
    public var quietPeriod: Duration
    /// The longest wait after the first unsaved change. Default 30 s.
    public var maximumDelay: Duration
    /// The first wait before retrying a failed autosave. Default 1 s.
    public var retryDelay: Duration
    /// The clock the waits are measured on.
    public var clock: any AutosaveClock
    /// Whether a document that has a file autosaves over it (``SaveOperation/autosaveInPlace``,
    /// the default). When false, it autosaves elsewhere instead, to a draft in its
    /// ``Document/autosaveDraftsFolder`` that survives a crash (see
    /// ``Document/recoverable(in:using:)``), and its file changes only when the app saves it.
    public var autosavesInPlace: Bool

    /// A policy; every parameter has the default.
    public init(
        quietPeriod: Duration = .seconds(2), maximumDelay: Duration = .seconds(30), retryDelay: Duration = .seconds(1),
        clock: any AutosaveClock = SystemAutosaveClock(), autosavesInPlace: Bool = true
    ) {
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
        self.retryDelay = retryDelay
        self.clock = clock
        self.autosavesInPlace = autosavesInPlace
    }

    /// The default: 2 s of quiet, at most 30 s.
    public static let standard = AutosavePolicy()
}
