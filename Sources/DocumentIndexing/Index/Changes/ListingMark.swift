import DocumentKitSystem

/// The library's folders as they were just before this process changed documents in them: made
/// by ``DocumentIndex/markListing(forChangesAt:)``, given back to
/// ``DocumentIndex/noteChanges(at:since:)``.
///
/// A save swaps a package folder, so it changes the folder that holds it, and the next process
/// would `readdir` that whole folder again to find out what else changed there. With a mark the
/// index can tell its own change from anyone else's: if the folder was as the index last listed
/// it before the change, and afterwards holds as many subfolders as the change explains (its link
/// count, where the file system counts), the index records the folder's names as *accounted for*
/// at its new stamp: ``DocumentIndex/refreshListing()`` takes them as listed, while
/// ``DocumentIndex/refresh()`` lists the folder again.
public struct ListingMark: Sendable {
    /// One folder holding a changed document: its stamp and link count before the change, and
    /// whether the index's listing of it was current then.
    struct Folder: Sendable {
        var stamp: FileStamp
        var linkCount: UInt64
        var wasCurrent: Bool
    }

    var folders: [String: Folder] = [:]
    /// Whether each changed path was a folder before the change.
    var existed: [String: Bool] = [:]
}
