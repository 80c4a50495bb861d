import Foundation

/// One callback the watcher decided a presenter gets.
enum PresenterNotice: Sendable, Equatable {
    case changed
    case moved(to: URL)
    case deleted
    case subitemAppeared(URL)
    case subitemChanged(URL)
    case subitemMoved(from: URL, to: URL)
    case subitemDeleted(URL)

    func deliver(to presenter: any FilePresenter) async {
        switch self {
        case .changed: await presenter.presentedItemDidChange()
        case .moved(let url): await presenter.presentedItemDidMove(to: url)
        case .deleted: await presenter.accommodatePresentedItemDeletion()
        case .subitemAppeared(let url): await presenter.presentedSubitemDidAppear(at: url)
        case .subitemChanged(let url): await presenter.presentedSubitemDidChange(at: url)
        case .subitemMoved(let from, let to): await presenter.presentedSubitem(at: from, didMoveTo: to)
        case .subitemDeleted(let url): await presenter.accommodatePresentedSubitemDeletion(at: url)
        }
    }
}

extension PresenterMailbox {
    /// Delivers `notices` to `presenter` in order, as one message.
    func send(_ notices: [PresenterNotice], to presenter: any FilePresenter) {
        guard !notices.isEmpty else { return }
        send { for notice in notices { await notice.deliver(to: presenter) } }
    }
}
