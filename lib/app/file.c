/*
 * file.c - files written whole or not at all.
 *
 * A file that libcugl-app writes (a PNG, a recording of input events, a
 * file of bytes) is written beside its path under a temporary name and
 * renamed over the path once every byte is out: a failed write (a full
 * disk, a file-size limit, an error of libpng's) leaves whatever was at the
 * path as it was, and takes its temporary file away. A path that names a
 * symbolic link replaces the file at the end of its chain of links, and
 * writes it there if it does not exist yet (the links stay links); a link
 * into a folder that does not exist is refused. A path that names
 * something other than a regular file (a device such as /dev/null or
 * /dev/full, a pipe) is written in place, never replaced or removed: it is
 * what the caller asked to write to. A directory is refused.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_internal.h"

static void errno_text(int e, char *text, size_t size)
{
    if (strerror_r(e, text, size) != 0)
        snprintf(text, size, "errno %d", e);
}

static cugl_status errno_fail(const char *who, int e, const char *fmt, const char *path)
{
    char text[128];
    errno_text(e, text, sizeof text);
    cugl_status st = e == ENOMEM ? CUGL_ERROR_OUT_OF_MEMORY : CUGL_ERROR_INVALID_ARGUMENT;
    return cugl__fail(st, who, fmt, path, text);
}

/* The name of a new temporary file beside `target`: ".<name>.<pid>-<n>.tmp". */
static bool temporary_name(char *out, size_t size, const char *target)
{
    static atomic_uint counter;
    const char *slash = strrchr(target, '/');
    int dir = slash ? (int)(slash - target + 1) : 0;
    int n = snprintf(out, size, "%.*s.%s.%ld-%u.tmp", dir, target, target + dir, (long)getpid(),
                     atomic_fetch_add(&counter, 1));
    return n > 0 && (size_t)n < size;
}

/*
 * The file `path` finally names: the path itself, or where its chain of
 * symbolic links ends (a name that need not exist yet; a relative link
 * read from the link's folder). A new string, or NULL with errno set
 * (ELOOP past 40 links, as the kernel counts).
 */
static char *final_name(const char *path)
{
    char *name = strdup(path);
    for (int links = 0; name; links++) {
        struct stat st;
        if (lstat(name, &st) != 0 || !S_ISLNK(st.st_mode))
            return name;
        char to[PATH_MAX];
        ssize_t n = links < 40 ? readlink(name, to, sizeof to - 1) : -1;
        if (n < 0 || n == (ssize_t)sizeof to - 1) {
            int e = links >= 40 ? ELOOP : n < 0 ? errno : ENAMETOOLONG;
            free(name);
            errno = e;
            return NULL;
        }
        to[n] = '\0';
        const char *slash = strrchr(name, '/');
        int dir = to[0] != '/' && slash ? (int)(slash - name + 1) : 0;
        char *next = malloc((size_t)dir + (size_t)n + 1);
        if (next)
            snprintf(next, (size_t)dir + (size_t)n + 1, "%.*s%s", dir, name, to);
        free(name);
        name = next;
    }
    errno = ENOMEM;
    return NULL;
}

cugl_status cugl__app_file_open(cugl__app_file *f, const char *who, const char *path)
{
    *f = (cugl__app_file){0};
    if (!path[0])
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "path is empty");
    char *target = final_name(path);
    if (!target)
        return errno_fail(who, errno, "cannot open %s for writing: %s", path);
    struct stat st;
    bool exists = stat(target, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        free(target);
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot write %s: it is a directory", path);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device or a pipe: written in place, never replaced. */
        free(target);
        f->file = fopen(path, "wb");
        if (!f->file)
            return errno_fail(who, errno, "cannot open %s for writing: %s", path);
        f->in_place = true;
        return CUGL_OK;
    }
    f->target = target;
    size_t size = strlen(f->target) + 64;
    f->temporary = malloc(size);
    int fd = -1;
    for (int tries = 0; f->temporary && fd < 0 && tries < 100; tries++) {
        if (!temporary_name(f->temporary, size, f->target)) {
            errno = ENAMETOOLONG;
            break;
        }
        /* The mode the file would have had: 0666 less the umask, or the
         * replaced file's own. */
        fd = open(f->temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0 && exists)
        (void)fchmod(fd, st.st_mode & 07777);
    f->file = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f->file) {
        int e = f->temporary ? errno : ENOMEM;
        if (fd >= 0) {
            close(fd);
            unlink(f->temporary);
        }
        char text[128], link[PATH_MAX + 16] = "";
        errno_text(e, text, sizeof text);
        if (strcmp(path, f->target) != 0)
            snprintf(link, sizeof link, " (a link to %s)", f->target);
        cugl_status status =
            cugl__fail(e == ENOMEM ? CUGL_ERROR_OUT_OF_MEMORY : CUGL_ERROR_INVALID_ARGUMENT, who,
                       "cannot open %s for writing%s: %s", path, link, text);
        free(f->temporary);
        free(f->target);
        *f = (cugl__app_file){0};
        return status;
    }
    return CUGL_OK;
}

void cugl__app_file_abandon(cugl__app_file *f)
{
    if (f->file)
        fclose(f->file);
    if (f->temporary)
        unlink(f->temporary);
    free(f->temporary);
    free(f->target);
    *f = (cugl__app_file){0};
}

cugl_status cugl__app_file_commit(cugl__app_file *f, const char *who, const char *path)
{
    int e = 0;
    if (ferror(f->file))
        e = errno ? errno : EIO;
    if (fflush(f->file) != 0 && !e)
        e = errno;
    if (fclose(f->file) != 0 && !e)
        e = errno;
    f->file = NULL;
    if (!e && f->temporary && rename(f->temporary, f->target) != 0)
        e = errno;
    cugl_status st = CUGL_OK;
    if (e)
        st = errno_fail(who, e, "writing %s failed: %s; what was there is left as it was", path);
    if (!e && f->temporary) {
        free(f->temporary);
        f->temporary = NULL; /* renamed: nothing to take away */
    }
    cugl__app_file_abandon(f);
    return st;
}

CUGL_API cugl_status cugl_app_write_file(const char *path, const void *data, size_t size)
{
    CUGL__CHECK_NOT_NULL(path);
    if (!data && size > 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "data is NULL but size is %zu",
                          size);
    cugl__app_file f;
    CUGL__TRY(cugl__app_file_open(&f, __func__, path));
    if (size > 0 && fwrite(data, 1, size, f.file) != size) {
        int e = errno ? errno : EIO;
        cugl__app_file_abandon(&f);
        return errno_fail(__func__, e, "writing %s failed: %s; what was there is left as it was",
                          path);
    }
    return cugl__app_file_commit(&f, __func__, path);
}
