import Dispatch

/// How far an export or import has come, as reported to its progress handler.
public struct ArchiveProgress: Sendable, Hashable {
    /// Bytes of members read (export) or written (import) so far.
    public var completedBytes: Int64
    /// Entries done so far.
    public var completedEntries: Int
    /// Bytes of members in all, when known before the work starts (export), else nil.
    public var totalBytes: Int64?
    /// Entries in all, when known before the work starts (export), else nil.
    public var totalEntries: Int?

    /// A progress report.
    public init(completedBytes: Int64 = 0, completedEntries: Int = 0, totalBytes: Int64? = nil, totalEntries: Int? = nil) {
        self.completedBytes = completedBytes
        self.completedEntries = completedEntries
        self.totalBytes = totalBytes
        self.totalEntries = totalEntries
    }

    /// The fraction done from 0 to 1, when the total is known.
    public var fractionCompleted: Double? {
        if let totalBytes, totalBytes > 0 { return min(1, Double(completedBytes) / Double(totalBytes)) }
        if let totalEntries, totalEntries > 0 { return min(1, Double(completedEntries) / Double(totalEntries)) }
        return nil
    }
}

/// Receives progress reports; called on the exporting or importing task, often: keep it quick.
public typealias ArchiveProgressHandler = @Sendable (ArchiveProgress) -> Void

/// Hands an export's or import's progress to its handler: at most every 50 ms while it runs,
/// and once more, always, at its end.
struct ProgressReporter {
    let handler: ArchiveProgressHandler?
    /// The progress so far.
    var progress = ArchiveProgress()
    private var lastReport: UInt64 = 0

    init(_ handler: ArchiveProgressHandler?) { self.handler = handler }

    /// Reports `progress` if 50 ms passed since the last report, or if `force`.
    mutating func report(force: Bool = false) {
        guard let handler else { return }
        let time = DispatchTime.now().uptimeNanoseconds
        if force || time - lastReport > 50_000_000 {
            lastReport = time
            handler(progress)
        }
    }
}
