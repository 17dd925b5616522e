/* fdkeep.h - descriptors the profiler keeps open past a call.
 *
 * The profiler runs inside someone else's process.  A program started with
 * its standard input or output closed (`prog >&-`) gets descriptor 0, 1 or
 * 2 for the next file anyone opens: if that were one of our trace streams
 * or perf events, the program's own writes to stdout would land in it (and
 * succeed where they should fail).  So a descriptor kept open moves above
 * them.
 */
#ifndef WHATIF_FDKEEP_H
#define WHATIF_FDKEEP_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* fd itself when it is not 0, 1 or 2 (or is -1), else a close-on-exec
 * duplicate at 3 or above, the original closed; -1 with errno on failure. */
static inline int fd_keep(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = errno;
    close(fd);
    errno = e;
    return moved;
}

#endif
