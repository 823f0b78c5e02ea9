/*
 * test_file.c - files libcugl-app writes are replaced whole or not at all
 * (cugl_app_write_file, cugl_app_write_png): a full disk (a file-size
 * limit), a directory, a device or a link in the way, and what is left
 * behind each time: the old content, the device node, no temporary file.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "app_test.h"

/* Files in the test's folder: a failed write must leave no temporary one. */
static int files_in_folder(void)
{
    DIR *d = opendir(app_test_dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Fail unless the file at `path` holds exactly `want` (size bytes). */
static void holds(const char *path, const void *want, size_t size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *got = malloc(size + 1);
    size_t n = fread(got, 1, size + 1, f);
    fclose(f);
    assert_int_equal(n, size);
    assert_memory_equal(got, want, size);
    free(got);
}

static void replaces_the_file_whole(void **state)
{
    (void)state;
    char path[320];
    snprintf(path, sizeof path, "%s", tmp_path("bytes.bin"));
    put(path, "the old content");
    assert_int_equal(chmod(path, 0640), 0);
    static const char data[] = "the new content, longer than the old";
    assert_ok(cugl_app_write_file(path, data, sizeof data));
    holds(path, data, sizeof data);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640); /* the replaced file's mode is kept */
    assert_int_equal(files_in_folder(), 1);
    assert_ok(cugl_app_write_file(path, NULL, 0)); /* an empty file */
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 0);
    unlink(path);
}

/* A file-size limit fails the write part way, as a full disk does. */
static void full_disk_keeps_the_old_file(void **state)
{
    (void)state;
    char path[320], png[320], want[512];
    snprintf(path, sizeof path, "%s", tmp_path("limited.bin"));
    snprintf(png, sizeof png, "%s", tmp_path("limited.png"));
    put(path, "old bytes");
    put(png, "old picture");
    size_t size = 64 * 1024;
    uint8_t *data = malloc(size);
    uint32_t x = 2463534242u; /* xorshift: bytes that do not compress */
    for (size_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data[i] = (uint8_t)x;
    }

    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG, not death */
    struct rlimit limited = {.rlim_cur = 4096, .rlim_max = saved.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &limited), 0);
    cugl_status st_file = cugl_app_write_file(path, data, size);
    char file_error[512];
    snprintf(file_error, sizeof file_error, "%s", cugl_last_error());
    cugl_status st_png = cugl_app_write_png(png, data, 128, 128);
    char png_error[512];
    snprintf(png_error, sizeof png_error, "%s", cugl_last_error());
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(st_file, CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_write_file: writing %s failed: File too large; what was there is left "
             "as it was", path);
    assert_string_equal(file_error, want);
    assert_int_equal(st_png, CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_write_png: writing %s failed: File too large; what was there is left "
             "as it was", png);
    assert_string_equal(png_error, want);
    holds(path, "old bytes", 9);
    holds(png, "old picture", 11);
    assert_int_equal(files_in_folder(), 2); /* no temporary file left */
    free(data);
    unlink(path);
    unlink(png);
}

static void directory_in_the_way(void **state)
{
    (void)state;
    char path[320], want[512];
    snprintf(path, sizeof path, "%s", tmp_path("a-folder.png"));
    assert_int_equal(mkdir(path, 0755), 0);
    static const uint8_t px[4] = {1, 2, 3, 4};
    assert_status(cugl_app_write_png(path, px, 1, 1), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "cugl_app_write_png: cannot write %s: it is a directory", path);
    assert_string_equal(cugl_last_error(), want);
    assert_status(cugl_app_write_file(path, px, 4), CUGL_ERROR_INVALID_ARGUMENT);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(files_in_folder(), 1);
    assert_int_equal(rmdir(path), 0); /* still empty */
}

/* A device is written in place: /dev/full fails and stays the device it
 * was; /dev/null takes the bytes and stays too. */
static void device_in_the_way(void **state)
{
    (void)state;
    struct stat before, after;
    if (stat("/dev/full", &before) != 0 || stat("/dev/null", &after) != 0)
        skip();
    static const uint8_t px[16 * 16 * 4];
    assert_status(cugl_app_write_png("/dev/full", px, 16, 16), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_write_png: writing /dev/full failed: No "
                                           "space left on device; what was there is left as "
                                           "it was");
    assert_status(cugl_app_write_file("/dev/full", px, sizeof px), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(stat("/dev/full", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_rdev, before.st_rdev);

    assert_int_equal(stat("/dev/null", &before), 0);
    assert_ok(cugl_app_write_png("/dev/null", px, 16, 16));
    assert_ok(cugl_app_write_file("/dev/null", px, sizeof px));
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_rdev, before.st_rdev);
}

/* A link: the file it names is replaced, and the link stays a link. */
static void link_names_what_is_replaced(void **state)
{
    (void)state;
    char target[320], link[320];
    snprintf(target, sizeof target, "%s", tmp_path("target.bin"));
    snprintf(link, sizeof link, "%s", tmp_path("link.bin"));
    put(target, "old");
    assert_int_equal(symlink("target.bin", link), 0);
    assert_ok(cugl_app_write_file(link, "new!", 4));
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    holds(target, "new!", 4);
    assert_int_equal(files_in_folder(), 2);
    unlink(link);
    unlink(target);
}

/* A link whose target does not exist yet: the target is written (through a
 * chain of links, relative ones too), and every link stays a link. */
static void dangling_link_writes_its_target(void **state)
{
    (void)state;
    char target[320], first[320], second[320];
    snprintf(target, sizeof target, "%s", tmp_path("made.bin"));
    snprintf(first, sizeof first, "%s", tmp_path("first.lnk"));
    snprintf(second, sizeof second, "%s", tmp_path("second.lnk"));
    assert_int_equal(symlink("second.lnk", first), 0);
    assert_int_equal(symlink(target, second), 0); /* absolute, dangling */
    assert_ok(cugl_app_write_file(first, "made", 4));
    struct stat st;
    assert_int_equal(lstat(first, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(second, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    holds(target, "made", 4);
    holds(first, "made", 4);
    assert_int_equal(files_in_folder(), 3);
    unlink(first);
    unlink(second);
    unlink(target);
}

/* A link into a folder that does not exist: refused, naming the path and
 * the link's target, and the link is left as it was. */
static void dangling_link_into_a_missing_folder(void **state)
{
    (void)state;
    char link[320], want[800];
    snprintf(link, sizeof link, "%s", tmp_path("away.lnk"));
    assert_int_equal(symlink("no/such/folder/file.bin", link), 0);
    assert_status(cugl_app_write_file(link, "x", 1), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_write_file: cannot open %s for writing (a link to %s): No such file "
             "or directory",
             link, tmp_path("no/such/folder/file.bin"));
    assert_string_equal(cugl_last_error(), want);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char read_back[64];
    ssize_t n = readlink(link, read_back, sizeof read_back - 1);
    assert_int_equal(n, (ssize_t)strlen("no/such/folder/file.bin"));
    read_back[n] = 0;
    assert_string_equal(read_back, "no/such/folder/file.bin");
    assert_int_equal(files_in_folder(), 1);
    unlink(link);
}

/* A loop of links: refused (the system's ELOOP), nothing replaced. */
static void link_loop_is_refused(void **state)
{
    (void)state;
    char a[320], b[320];
    snprintf(a, sizeof a, "%s", tmp_path("a.lnk"));
    snprintf(b, sizeof b, "%s", tmp_path("b.lnk"));
    assert_int_equal(symlink("b.lnk", a), 0);
    assert_int_equal(symlink("a.lnk", b), 0);
    assert_status(cugl_app_write_file(a, "x", 1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "Too many levels of symbolic links"));
    struct stat st;
    assert_int_equal(lstat(a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(files_in_folder(), 2);
    unlink(a);
    unlink(b);
}

static void refusals(void **state)
{
    (void)state;
    char path[320], want[512];
    snprintf(path, sizeof path, "%s", tmp_path("no/such/folder.bin"));
    assert_status(cugl_app_write_file(path, "x", 1), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_write_file: cannot open %s for writing: No such file or directory", path);
    assert_string_equal(cugl_last_error(), want);
    assert_status(cugl_app_write_file(NULL, "x", 1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_write_file: path is NULL");
    assert_status(cugl_app_write_file(tmp_path("x"), NULL, 1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_write_file: data is NULL but size is 1");
    assert_int_equal(files_in_folder(), 0);
}

int main(void)
{
    app_test_dir_make("cugl-file");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replaces_the_file_whole),
        cmocka_unit_test(full_disk_keeps_the_old_file),
        cmocka_unit_test(directory_in_the_way),
        cmocka_unit_test(device_in_the_way),
        cmocka_unit_test(link_names_what_is_replaced),
        cmocka_unit_test(dangling_link_writes_its_target),
        cmocka_unit_test(dangling_link_into_a_missing_folder),
        cmocka_unit_test(link_loop_is_refused),
        cmocka_unit_test(refusals),
    };
    int failed = cugl_test_run(tests);
    app_test_dir_remove();
    return failed;
}
