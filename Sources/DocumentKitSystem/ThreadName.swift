import CDocumentKitShims

/// Names the calling thread, as `ps -T`, `top -H`, `/proc/PID/task/*/comm` and debuggers show it.
///
/// Foundation's `Thread.name` doesn't reach the system on Linux, and a thread otherwise keeps the
/// name of the thread that started it (often one of GCD's workers): DocumentKit's threads name
/// themselves first thing, so that they can be told from GCD's. Linux keeps 15 bytes.
package func nameCurrentThread(_ name: String) {
    _ = dk_name_current_thread(name)
}
