#ifndef DOCUMENTKIT_WATCHING_H
#define DOCUMENTKIT_WATCHING_H

// Calls the presenters' watcher needs that Glibc's Swift overlay does not export.

#include <stdint.h>

/// The `f_type` statfs(2) reports for the file system holding `path` (a magic number such as
/// 0x6969 for NFS), or -1 with errno set.
int64_t dk_filesystem_type(const char *path);

/// A non-blocking, close-on-exec eventfd(2) counter, to wake a thread blocked in poll(2); -1 on error.
int dk_eventfd(void);

#endif
