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
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <malloc.h>
#include <pthread.h>

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

int dk_start_writeback(int fd) { return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); }

int dk_flock_exclusive_nonblocking(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }

int dk_flock_shared(int fd) { return flock(fd, LOCK_SH); }

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

static int dk_unix_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) { errno = ENAMETOOLONG; return -1; }
    strcpy(address->sun_path, path);
    return 0;
}

int dk_unix_listen(const char *path) {
    struct sockaddr_un address;
    if (dk_unix_address(path, &address) < 0) return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(fd, 64) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int dk_unix_connect(const char *path) {
    struct sockaddr_un address;
    if (dk_unix_address(path, &address) < 0) return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    while (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        if (errno == EINTR) continue;
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int dk_wait_readable(int fd, int milliseconds) {
    struct pollfd entry = { .fd = fd, .events = POLLIN };
    for (;;) {
        int result = poll(&entry, 1, milliseconds);
        if (result < 0 && errno == EINTR) continue;
        return result < 0 ? -1 : (result > 0 ? 1 : 0);
    }
}

struct dk_linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

int dk_list_names(const char *path, char *names, int size) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char entries[4096] __attribute__((aligned(8)));
    int used = 0;
    for (;;) {
        long count = syscall(SYS_getdents64, fd, entries, sizeof entries);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) {
            int saved = errno;
            close(fd);
            if (count < 0) { errno = saved; return -1; }
            return used;
        }
        for (long offset = 0; offset < count;) {
            struct dk_linux_dirent64 *entry = (struct dk_linux_dirent64 *)(entries + offset);
            offset += entry->d_reclen;
            if (entry->d_name[0] == '.') continue;
            int length = (int)strlen(entry->d_name) + 1;
            if (used + length > size) { close(fd); errno = ERANGE; return -1; }
            memcpy(names + used, entry->d_name, (size_t)length);
            used += length;
        }
    }
}

unsigned long long dk_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (unsigned long long)info.uordblks + (unsigned long long)info.hblkhd;
}

int dk_name_current_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}
