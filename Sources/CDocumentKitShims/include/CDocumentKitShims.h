#ifndef CDOCUMENTKITSHIMS_H
#define CDOCUMENTKITSHIMS_H

// Calls and constants that Glibc's Swift overlay does not export.
// Each function returns what the system call returns and leaves errno as it set it.

#include <stdint.h>
#include <sys/types.h>
#include <malloc.h>  // malloc_trim, for long-running processes (Glibc's module leaves it out)

#include "DocumentKitWatching.h"

/// renameat2(2); `flags` is a combination of the DK_RENAME_* constants.
int dk_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// syncfs(2).
int dk_syncfs(int fd);

/// sync_file_range(2) of the whole file with SYNC_FILE_RANGE_WRITE: starts writing its dirty
/// pages back, without waiting and without flushing the disk's cache.
int dk_start_writeback(int fd);

/// flock(2) with LOCK_EX | LOCK_NB; returns 0 when the lock was taken.
int dk_flock_exclusive_nonblocking(int fd);

/// flock(2) with LOCK_SH, waiting; returns 0 when the lock was taken.
int dk_flock_shared(int fd);

/// flock(2) with LOCK_UN.
int dk_flock_unlock(int fd);

/// Open-file-description byte-range lock (`F_OFD_SETLK`, or `F_OFD_SETLKW` when `wait` is
/// non-zero). `kind`: 0 unlock, 1 shared (read), 2 exclusive (write). Returns 0 when done; -1 with
/// errno `EAGAIN` (or `EACCES`) when `wait` is 0 and another open file description holds a
/// conflicting lock.
int dk_ofd_lock(int fd, int64_t offset, int64_t length, int kind, int wait);

/// Whether the directory `fd` looks up names case-insensitively: ext4/f2fs casefold
/// (`FS_CASEFOLD_FL`), or a FAT, exFAT or NTFS file system. 1 yes, 0 no.
int dk_directory_is_case_insensitive(int fd);

/// A listening `AF_UNIX` `SOCK_SEQPACKET` socket bound at `path` (close-on-exec); -1 on error.
int dk_unix_listen(const char *path);

/// A `SOCK_SEQPACKET` connection to the socket at `path` (close-on-exec); -1 on error.
int dk_unix_connect(const char *path);

/// Waits up to `milliseconds` for `fd` to be readable: 1 readable (or closed), 0 timed out, -1 error.
int dk_wait_readable(int fd, int milliseconds);

/// The names in the directory at `path` that do not start with `.`, each followed by a NUL,
/// written to `names` (`size` bytes): open, getdents64 until the end, close. Returns the bytes
/// written; -1 with errno (`ENOENT`: no such directory; `ERANGE`: `names` is too small).
int dk_list_names(const char *path, char *names, int size);

/// The current thread's errno.
int dk_errno(void);

/// Sets the current thread's errno.
void dk_set_errno(int value);

/// Bytes of heap the process uses (glibc's mallinfo2: small blocks plus mapped ones), for benchmarks.
unsigned long long dk_heap_in_use(void);

extern const unsigned int DK_RENAME_NOREPLACE;
extern const unsigned int DK_RENAME_EXCHANGE;
extern const int DK_O_DIRECTORY;
extern const int DK_O_NOFOLLOW;
extern const int DK_O_CLOEXEC;
extern const int DK_O_PATH;
extern const int DK_AT_SYMLINK_NOFOLLOW;
extern const int DK_AT_REMOVEDIR;
extern const int DK_AT_FDCWD;

/// Names the calling thread (pthread_setname_np; Linux keeps 15 bytes, longer names are cut).
int dk_name_current_thread(const char *name);

#endif
