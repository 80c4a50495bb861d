#define _GNU_SOURCE
#include "CDocumentKitShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

const unsigned int DK_RENAME_NOREPLACE = RENAME_NOREPLACE;
const unsigned int DK_RENAME_EXCHANGE = RENAME_EXCHANGE;
const int DK_O_DIRECTORY = O_DIRECTORY;
const int DK_O_NOFOLLOW = O_NOFOLLOW;
const int DK_O_CLOEXEC = O_CLOEXEC;
const int DK_O_PATH = O_PATH;
const int DK_AT_SYMLINK_NOFOLLOW = AT_SYMLINK_NOFOLLOW;
const int DK_AT_REMOVEDIR = AT_REMOVEDIR;
const int DK_AT_FDCWD = AT_FDCWD;

int dk_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int dk_syncfs(int fd) { return syncfs(fd); }

int dk_flock_exclusive_nonblocking(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }

int dk_flock_unlock(int fd) { return flock(fd, LOCK_UN); }

int dk_errno(void) { return errno; }

void dk_set_errno(int value) { errno = value; }
