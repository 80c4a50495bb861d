/// How a document's undo manager counts its changes.
extension Document {
    /// Lets the undo manager count changes in this document (held weakly: the manager is the
    /// document's own).
    func attachUndoManager() {
        undoManager.attach { [weak self] change in self?.updateChangeCount(change) }
    }

    /// Whether an ``update(as:_:)`` now counts its change: not inside an undo or redo of this
    /// document's manager, which counts the step itself.
    var countsChanges: Bool { DocumentUndoManager.running !== undoManager }

    /// After an ``update(as:_:)``: a counted change is the change an undo registered next belongs
    /// to, and schedules an autosave.
    func didUpdate(counted: Bool) {
        if counted { undoManager.noteChangeCounted() }
        scheduleAutosave()
    }
}
