import CDocumentKitShims
import Foundation

/// Starts a thread that runs `body`, named `name` as `ps -T`, `top -H`, `/proc/PID/task/*/comm`
/// and debuggers show it (Linux keeps 15 bytes).
///
/// Foundation's `Thread.name` doesn't reach the system on Linux, and a thread otherwise keeps the
/// name of the thread that started it (often one of GCD's workers): DocumentKit's threads name
/// themselves first thing, so that they can be told from GCD's.
package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        _ = dk_name_current_thread(name)
        body()
    }
    thread.name = name
    thread.start()
}
