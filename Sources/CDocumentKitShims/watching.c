#define _GNU_SOURCE
#include "DocumentKitWatching.h"

#include <sys/eventfd.h>
#include <sys/vfs.h>

int64_t dk_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (int64_t)(uint32_t)info.f_type;
}

int dk_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
