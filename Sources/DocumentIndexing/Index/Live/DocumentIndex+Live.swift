#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FileCoordination
import Foundation
import SystemPackage

extension DocumentIndex {
    /// The name prefix of the cookie files ``sync()`` writes in the library (hidden: never a document).
    static let cookiePrefix = ".dk-index-sync-"
    /// How long no event must have come before the index looks (one batch per burst).
    static let quietPeriod: Duration = .milliseconds(1)
    /// The longest the index waits for a burst to end before it looks anyway.
    static let longestWait: Duration = .milliseconds(30)

    /// Starts the watcher (before the gathering refresh, so that nothing changed meanwhile is missed).
    func startLive() throws(DocumentKitError) {
        guard live == nil else { return }
        let inbox = EventInbox()
        let watcher: FileWatcher
        do {
            watcher = try FileWatcher { [weak self] events, overflowed, _ in
                inbox.add(events, overflowed: overflowed)
                guard let self else { return }
                Task { await self.eventsArrived() }
            }
        } catch {
            throw DocumentKitError(error, operation: .read, path: configuration.folderURL.path, step: "watching the library (inotify_init1)")
        }
        live = LiveState(watcher: watcher, inbox: inbox)
        watch(folder: "")
        let interval = configuration.sweepInterval
        live?.sweep = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.sweep()
            }
        }
    }

    func stopLive() {
        live?.sweep?.cancel()
        live?.settleCheck?.cancel()
        live?.watcher.stop()
        live = nil
    }

    private func watch(folder: String) {
        guard let watcher = live?.watcher else { return }
        do throws(Errno) {
            try watcher.watch(reader.absolutePath(folder))
            live?.watchedFolders.insert(folder)
        } catch {
            degrade("the folder \(reader.absolutePath(folder)) can't be watched (\(error.readableDescription))")
        }
    }

    private func degrade(_ why: String) {
        guard live?.isDegraded == false else { return }
        live?.isDegraded = true
        notice("The live index of \(configuration.folderURL.path) is degraded: \(why); it checks every \(configuration.sweepInterval) instead.")
    }

    /// Watches the folders and packages the snapshot knows that are not watched yet (a package
    /// swapped by a save is a new folder: it is watched again); returns whether a folder was new.
    ///
    /// Costs a look at each of `packages`, not at every package watched: the watches of packages
    /// the snapshot no longer has are looked for only after records were removed from it.
    @discardableResult
    func updateWatches(packages: [String]) -> Bool {
        guard let watcher = live?.watcher else { return false }
        var newFolder = false
        for folder in snapshot.folders.keys where live?.watchedFolders.contains(folder) == false {
            watch(folder: folder)
            newFolder = true
        }
        for folder in live?.watchedFolders ?? [] where snapshot.folders[folder] == nil {
            watcher.unwatch(reader.absolutePath(folder))
            live?.watchedFolders.remove(folder)
        }
        if live?.watchesCheckedAtRemoval != snapshot.records.removalGeneration {
            for path in live?.watchedPackages ?? [] where !snapshot.records.contains(path) {
                watcher.unwatch(reader.absolutePath(path))
                live?.watchedPackages.remove(path)
            }
            live?.watchesCheckedAtRemoval = snapshot.records.removalGeneration
        }
        for path in packages where snapshot.records.contains(path) {
            let known = live?.watchedPackages.contains(path) ?? false
            guard known || (live?.watchedPackages.count ?? 0) < configuration.packageWatchBudget else {
                degrade("more than \(configuration.packageWatchBudget) packages (the package watch budget)")
                continue
            }
            do throws(Errno) {
                try watcher.watch(reader.absolutePath(path))
                live?.watchedPackages.insert(path)
            } catch {
                degrade("a package can't be watched (\(error.readableDescription); fs.inotify.max_user_watches?)")
            }
        }
        return newFolder
    }

    /// Schedules a look at the inbox once no event has come for ``quietPeriod`` (at most
    /// ``longestWait`` after the first): a save's few events are one batch, and its batch comes
    /// a few milliseconds after its last event.
    func eventsArrived() async {
        guard let state = live, !state.flushScheduled else { return }
        live?.flushScheduled = true
        let start = ContinuousClock.now
        while true {
            // Sleeps only what is left of the quiet period since the last event.
            let quiet = state.inbox.sinceLastArrival()
            if quiet >= Self.quietPeriod || ContinuousClock.now - start >= Self.longestWait { break }
            try? await Task.sleep(for: Self.quietPeriod - quiet, tolerance: .microseconds(100))
        }
        live?.flushScheduled = false
        flush()
    }

    /// Looks at what the events name: re-checks the packages they name or happened in; relists
    /// a library folder only when an event there names something other than a package or a hidden
    /// item (a new subfolder, say), or nothing; after an overflow, checks everything.
    ///
    /// A save swaps a package, so every save is an event in its library folder: relisting it
    /// would cost a `readdir` of 100,000 names for each. The watch reports every change of the
    /// folder by name, so the packages it names are all that changed; the folder's new stamp is
    /// then recorded as accounted for (see ``noteChanges(at:since:)``), not as listed.
    func flush() {
        guard let state = live, !state.isHeld else { return }
        let pending = state.inbox.take()
        if pending.overflowed {
            rescanAfterOverflow()
            return
        }
        let root = reader.libraryPath
        var packages = Set<String>()
        var cookies: [String] = []
        var named = Set<String>()
        var relist = Set<String>()
        for event in pending.events {
            let folder = event.folder == root ? "" : String(event.folder.dropFirst(root.count + 1))
            if let name = event.name, name.hasPrefix(Self.cookiePrefix), folder.isEmpty {
                cookies.append(name)
                named.insert(folder)
                continue
            }
            // An event inside a package (a member delivered by a sync engine, the manifest edited).
            if state.watchedPackages.contains(folder) || snapshot.records[folder] != nil {
                packages.insert(folder)
                continue
            }
            guard let name = event.name else {
                relist.insert(folder)
                continue
            }
            if name.hasPrefix(".") {
                named.insert(folder)
            } else if reader.isPackageName(name) {
                named.insert(folder)
                packages.insert(folder.isEmpty ? name : folder + "/" + name)
            } else {
                relist.insert(folder)
            }
        }
        noteEvents(in: packages)
        applyLiveChanges(packages: packages, accounting: named.subtracting(relist), relisting: relist, settling: true)
        for cookie in cookies { finishSync(cookie) }
    }

    /// Relists the folders whose stamp changed and re-checks `packages`; publishes one batch.
    /// The library folders `accounting` (whose events named every change) are taken as they are
    /// now, without a listing. When `settling`, packages found mid-change are held back (see
    /// ``holdUnsettled(_:looked:previous:)``); otherwise those held back are checked and published too.
    ///
    /// The folders `relisting` (an event there named something else, or nothing) are listed
    /// whatever their stamps say: an earlier batch may have accounted for a folder at a stamp it
    /// read after this event's change was made, so the stamp alone would hide the change.
    func applyLiveChanges(
        packages named: Set<String>, accounting: Set<String> = [], relisting: Set<String> = [], everything: Bool = false,
        settling: Bool = false
    ) {
        guard (try? checkLibrary()) != nil else { return }
        let packages = settling ? named : named.union(takeUnsettled())
        var previous: [String: EntryRecord] = [:]
        if settling { for path in packages { previous[path] = snapshot.records[path] } }
        var accounted = IndexSnapshot.Changes()
        for folder in accounting where snapshot.folders[folder] != nil {
            guard let stamp = reader.folderStamp(folder) else { continue }
            snapshot.accounted[folder] = stamp
            accounted.accountedChanged[folder] = stamp
        }
        var changes = accounted
        for folder in relisting where snapshot.folders[folder] != nil { snapshot.markUnlisted(folder, into: &changes) }
        var walked = snapshot.refresh(using: reader, listingOnly: !everything)
        changes.merge(walked)
        for path in packages.sorted() { snapshot.revalidate(path, using: reader, into: &changes) }
        // A package the events named gone marked its folder to be listed: the events said why.
        for (folder, stamp) in accounted.accountedChanged {
            guard let stamp, snapshot.accounted[folder] == nil else { continue }
            snapshot.accounted[folder] = stamp
            changes.accountedChanged[folder] = stamp
        }
        if settling { holdUnsettled(&changes, looked: packages, previous: previous) }
        // A new folder is watched, then listed again: what was made in it before the watch is seen.
        func watchNew(_ found: IndexSnapshot.Changes) {
            var touched = (found.added + found.changed).map(\.relativePath)
            while updateWatches(packages: touched) {
                let more = snapshot.refresh(using: reader, listingOnly: true)
                touched = (more.added + more.changed).map(\.relativePath)
                walked.merge(more)
                changes.merge(more)
            }
        }
        watchNew(changes)
        let completed = snapshot.completeMoves(seenBy: walked, using: reader, after: changes)
        changes.merge(completed)
        watchNew(completed)
        _ = publish(changes)
        persist(changes, built: true)
    }

    /// Ends every update sequence with `error` and stops watching.
    func endLive(_ error: DocumentKitError) {
        for continuation in subscribers.values { continuation.finish(throwing: error) }
        subscribers = [:]
        stopLive()
    }

    /// After the kernel's queue overflowed: everything is checked against the disk and only real
    /// changes are published; repeated overflows back off (up to the sweep interval).
    func rescanAfterOverflow() {
        notice("The event queue of the index of \(configuration.folderURL.path) overflowed: the library was checked again.")
        applyLiveChanges(packages: [], everything: true)
        let backoff = live?.overflowBackoff ?? .milliseconds(50)
        live?.overflowBackoff = min(backoff * 2, configuration.sweepInterval)
    }

    /// The periodic check: folder listings and the packages no watch covers (all, when degraded).
    func sweep() {
        guard let state = live else { return }
        // An incomplete package too: a member delivered into one of its subfolders, which no watch
        // covers. And a damaged one: read while another program wrote its manifest, its watch
        // may have come after the writing ended (rare either way, and cheap: a stat or two).
        // And one with members in subfolders, which only the package's top folder's watch covers:
        // a stat of each such folder.
        let toCheck = snapshot.records.values.lazy.filter { record in
            guard state.watchedPackages.contains(record.relativePath), record.memberFolders == nil else { return true }
            switch record.state {
            case .incomplete, .damaged: return true
            case .current, .unresolvedConflicts, .tooNew: return false
            }
        }.map(\.relativePath)
        applyLiveChanges(packages: Set(toCheck))
    }

    // MARK: Testing

    /// For tests: while held, events are left in the inbox (as if the kernel's queue were full).
    func holdEvents(_ held: Bool) { live?.isHeld = held }

    /// For tests: stops watching a package that stays counted as watched (as when its watch came
    /// only after another program's change to it had ended).
    func loseWatch(ofPackage path: String) { live?.watcher.unwatch(reader.absolutePath(path)) }

    /// For tests: drops the held events and acts as after a queue overflow.
    func simulateOverflow() {
        live?.isHeld = false
        _ = live?.inbox.take()
        rescanAfterOverflow()
    }

    // MARK: Sync

    /// Writes a cookie file in the library and waits until its event has been looked at: every
    /// change made before the call is in the index then.
    func syncLive() async throws(DocumentKitError) {
        guard live != nil else {
            try refreshNow()
            return
        }
        let name = Self.cookiePrefix + UUID().uuidString
        let path = reader.absolutePath(name)
        // Should the cookie's event never come (a lost watch), a full refresh answers after 2 s.
        let timeout = Task { [weak self] in
            try? await Task.sleep(for: .seconds(2))
            guard !Task.isCancelled else { return }
            await self?.syncTimedOut(name)
        }
        defer { timeout.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            syncWaiters[name] = continuation
            do throws(Errno) {
                let fd = try configuration.fileSystem.open(path, in: AT_FDCWD, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
                try? configuration.fileSystem.close(fd, name: path)
            } catch {
                syncWaiters[name] = nil
                continuation.resume()
                _ = try? refreshNow()
            }
        }
        // The cookie's removal changes the library folder: as accounted for as it was before
        // (the watch reports anything else by name), so that the sweep below doesn't list it.
        let before = reader.folderStamp("")
        try? configuration.fileSystem.unlink(path, in: AT_FDCWD)
        if live != nil, let before, before == snapshot.folders[""] || before == snapshot.accounted[""], let after = reader.folderStamp("") {
            snapshot.accounted[""] = after
            var changes = IndexSnapshot.Changes()
            changes.accountedChanged[""] = after
            persist(changes, built: false)
        }
        // What no watch covers (a package past the watch budget, a member delivered into a
        // subfolder of an incomplete package) sent no event: it is checked now, as the sweep would.
        if live != nil { sweep() }
        if live == nil { try checkLibrary() }
    }

    func syncTimedOut(_ cookie: String) {
        guard syncWaiters[cookie] != nil else { return }
        notice("The index of \(configuration.folderURL.path) saw no event for its sync cookie in 2 s: it checked the library instead.")
        _ = try? refreshNow()
        finishSync(cookie)
    }

    func finishSync(_ cookie: String) {
        syncWaiters.removeValue(forKey: cookie)?.resume()
    }
}
