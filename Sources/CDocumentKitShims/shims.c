#define _GNU_SOURCE
#include "CDocumentKitShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <linux/fs.h>

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

int dk_ofd_lock(int fd, int64_t offset, int64_t length, int kind, int wait) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = kind == 0 ? F_UNLCK : (kind == 1 ? F_RDLCK : F_WRLCK);
    lock.l_whence = SEEK_SET;
    lock.l_start = (off_t)offset;
    lock.l_len = (off_t)length;
    lock.l_pid = 0;
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
}

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif

int dk_directory_is_case_insensitive(int fd) {
    long flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_CASEFOLD_FL)) return 1;
    struct statfs info;
    if (fstatfs(fd, &info) == 0) {
        unsigned long type = (unsigned long)info.f_type;
        if (type == 0x4d44UL /* MSDOS (vfat) */ || type == 0x2011BAB0UL /* exFAT */ ||
            type == 0x5346544eUL /* NTFS */) return 1;
    }
    return 0;
}
