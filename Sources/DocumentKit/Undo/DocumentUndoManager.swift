import Synchronization

/// A document's undo stack, with the part of Foundation's `UndoManager` a document uses:
/// ``Document/undoManager``.
///
/// Foundation on Linux has no `UndoManager` (swift-corelibs-foundation does not ship one), so
/// DocumentKit brings this one, with Apple's names. As with `NSDocument`, it counts the
/// document's changes: a group of undo actions registered while the document counted no change
/// of its own marks the document edited (``DocumentChange/done``), ``undo()`` counts
/// ``DocumentChange/undone`` and ``redo()`` ``DocumentChange/redone``, so undoing back to the
/// saved state leaves the document with no unsaved changes. ``Document/update(as:_:)-5rxph`` called
/// by an undo or redo handler counts nothing itself: the undo or redo is the change.
///
/// ```swift
/// let before = document.content
/// try document.update { $0.body += "\nOne more line" }   // counted: the document is edited
/// document.undoManager.registerUndo(withTarget: document) { document in
///     try? document.update { $0 = before }               // counted as the undo, not a change
/// }
/// document.undoManager.setActionName("Add Line")
/// document.undoManager.undo()                            // back to the saved state: clean
/// ```
///
/// There is no run loop to group by event: every registration outside
/// ``beginUndoGrouping()``/``endUndoGrouping()`` is a group of its own. Handlers run on the
/// caller's thread, outside every lock; undo and redo from one task at a time.
public final class DocumentUndoManager: Sendable {
    /// One undoable step: its actions, run last to first, and its name.
    struct Group {
        var actions: [@Sendable () -> Void] = []
        var name = ""
    }

    struct Stacks {
        var undo: [Group] = []
        var redo: [Group] = []
        /// The group being registered: explicit (`depth` > 0) or, while undoing or redoing, the
        /// group that reverses it.
        var open: Group?
        var depth = 0
        var isUndoing = false
        var isRedoing = false
        /// Whether the document counted a change since the last group closed: that change is
        /// the group's, which then counts nothing more.
        var changeCounted = false
        var levelsOfUndo = 0
    }

    private let stacks = Mutex(Stacks())
    /// Counts a change in the document; set by the document that owns the manager.
    private let counter = Mutex<(@Sendable (DocumentChange) -> Void)?>(nil)

    /// The manager of an undo or redo running in this task (see ``Document/update(as:_:)``).
    @TaskLocal static var running: DocumentUndoManager?

    /// An undo manager that counts nothing; a document makes its own (``Document/undoManager``).
    public init() {}

    func attach(counter: @escaping @Sendable (DocumentChange) -> Void) {
        self.counter.withLock { $0 = counter }
    }

    private func count(_ change: DocumentChange) {
        let counter = self.counter.withLock { $0 }
        counter?(change)
    }

    /// Records that the document counted a change outside an undo or redo.
    func noteChangeCounted() {
        stacks.withLock { $0.changeCounted = true }
    }

    // MARK: Registering

    /// Registers `handler`, called with `target` to undo the change just made, as
    /// `UndoManager.registerUndo(withTarget:handler:)`. The target is held weakly: once it is
    /// gone, the action does nothing. Registered while undoing, it becomes the redo action.
    public func registerUndo<Target: AnyObject & Sendable>(
        withTarget target: Target, handler: @escaping @Sendable (Target) -> Void
    ) {
        let action: @Sendable () -> Void = { [weak target] in
            if let target { handler(target) }
        }
        let closed = stacks.withLock { stacks -> Bool in
            if stacks.open != nil {
                stacks.open!.actions.append(action)
                return false
            }
            stacks.redo.removeAll()
            push(Group(actions: [action]), onto: &stacks.undo, limit: stacks.levelsOfUndo)
            defer { stacks.changeCounted = false }
            return !stacks.changeCounted
        }
        if closed { count(.done) }
    }

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` are undone
    /// together. Groups nest; only the outermost one is a step of its own.
    public func beginUndoGrouping() {
        stacks.withLock { stacks in
            if stacks.depth == 0 && !stacks.isUndoing && !stacks.isRedoing { stacks.open = Group() }
            stacks.depth += 1
        }
    }

    /// Closes the group opened by ``beginUndoGrouping()``. An outermost group that registered
    /// actions becomes one undo step (and marks the document edited, unless the document counted
    /// the change itself).
    public func endUndoGrouping() {
        let countsChange = stacks.withLock { stacks -> Bool in
            precondition(stacks.depth > 0, "DocumentUndoManager.endUndoGrouping() without beginUndoGrouping()")
            stacks.depth -= 1
            guard stacks.depth == 0, !stacks.isUndoing, !stacks.isRedoing, let group = stacks.open else { return false }
            stacks.open = nil
            guard !group.actions.isEmpty else { return false }
            stacks.redo.removeAll()
            push(group, onto: &stacks.undo, limit: stacks.levelsOfUndo)
            defer { stacks.changeCounted = false }
            return !stacks.changeCounted
        }
        if countsChange { count(.done) }
    }

    /// Names the step being registered (or the last one), for a menu item such as "Undo Typing".
    public func setActionName(_ name: String) {
        stacks.withLock { stacks in
            if stacks.open != nil {
                stacks.open!.name = name
            } else if !stacks.undo.isEmpty {
                stacks.undo[stacks.undo.count - 1].name = name
            }
        }
    }

    // MARK: Undoing and redoing

    /// Whether there is a step to undo.
    public var canUndo: Bool { stacks.withLock { !$0.undo.isEmpty } }
    /// Whether there is a step to redo.
    public var canRedo: Bool { stacks.withLock { !$0.redo.isEmpty } }
    /// Whether ``undo()`` is running.
    public var isUndoing: Bool { stacks.withLock { $0.isUndoing } }
    /// Whether ``redo()`` is running.
    public var isRedoing: Bool { stacks.withLock { $0.isRedoing } }
    /// The name of the step ``undo()`` would undo ("" when it has none).
    public var undoActionName: String { stacks.withLock { $0.undo.last?.name ?? "" } }
    /// The name of the step ``redo()`` would redo ("" when it has none).
    public var redoActionName: String { stacks.withLock { $0.redo.last?.name ?? "" } }

    /// How many steps are kept; 0 (the default) keeps every one.
    public var levelsOfUndo: Int {
        get { stacks.withLock { $0.levelsOfUndo } }
        set {
            stacks.withLock { stacks in
                stacks.levelsOfUndo = max(0, newValue)
                if stacks.levelsOfUndo > 0 && stacks.undo.count > stacks.levelsOfUndo {
                    stacks.undo.removeFirst(stacks.undo.count - stacks.levelsOfUndo)
                }
            }
        }
    }

    /// Undoes the last step: runs its actions, last first, and counts ``DocumentChange/undone``.
    /// What the actions register is the step's redo. Does nothing when there is nothing to undo.
    public func undo() {
        replay(undoing: true)
    }

    /// Redoes the last undone step and counts ``DocumentChange/redone``; does nothing when there
    /// is nothing to redo.
    public func redo() {
        replay(undoing: false)
    }

    /// Forgets every step to undo and redo, as ``Document/revert(toContentsOf:ofType:)`` and a
    /// document's reload after another program's write do.
    public func removeAllActions() {
        stacks.withLock { stacks in
            stacks.undo.removeAll()
            stacks.redo.removeAll()
            stacks.changeCounted = false
        }
    }

    private func replay(undoing: Bool) {
        let step = stacks.withLock { stacks -> Group? in
            guard stacks.depth == 0, !stacks.isUndoing, !stacks.isRedoing,
                let group = undoing ? stacks.undo.popLast() : stacks.redo.popLast()
            else { return nil }
            if undoing { stacks.isUndoing = true } else { stacks.isRedoing = true }
            stacks.open = Group(name: group.name)
            return group
        }
        guard let step else { return }
        Self.$running.withValue(self) {
            for action in step.actions.reversed() { action() }
        }
        stacks.withLock { stacks in
            let reverse = stacks.open ?? Group(name: step.name)
            stacks.open = nil
            stacks.isUndoing = false
            stacks.isRedoing = false
            if !reverse.actions.isEmpty {
                if undoing {
                    stacks.redo.append(reverse)
                } else {
                    push(reverse, onto: &stacks.undo, limit: stacks.levelsOfUndo)
                }
            }
            stacks.changeCounted = false
        }
        count(undoing ? .undone : .redone)
    }

    private func push(_ group: Group, onto stack: inout [Group], limit: Int) {
        stack.append(group)
        if limit > 0 && stack.count > limit { stack.removeFirst(stack.count - limit) }
    }
}
