/*
 * test_documented.c - conditions the headers' @errors lists name, each
 * brought about and its status held to what the header says: a case names
 * its function and words of the condition as the header writes them
 * ("past GL's limits"), and the status it must get is looked up in the
 * table errors_doc.py makes from the headers at build time. A header that
 * changes what it says, or a call that returns another status, fails here;
 * so does a case whose words the header no longer has. Each case must
 * leave cugl_live_objects as it found it, and where the refused call is
 * one of a sequence, the next good call must work.
 *
 * The cases are those that bad input in general (unit-bad-input) does not
 * reach: past GL's own limits, a link into a missing folder, a full disk
 * under a recording, the address "0", a certificate that is not one, a
 * closed stream or allocator, an allocation larger than the device. Cases
 * that need a CUDA device run where one is (the GPU machine) and say that
 * they did not run elsewhere.
 */
#include <stdint.h>
#include <unistd.h>

#include "gl_test.h"

#include "documented.h"

#include <cugl/app_shared.h>
#if CUGL_APP_HAS_SERVE
#include <cugl/app_serve.h>
#endif

static cugl_device *dev; /* device 0 where there is one */

/* What a case returns where its condition cannot be brought about here. */
#define NOT_HERE ((cugl_status)-1)

/* The status the header gives `function` for the condition written with
 * `words` (or, for a status listed without words, its name); fails when
 * the header has no such words, or gives them two statuses. */
static cugl_status header_says(const char *function, const char *words)
{
    cugl_status found = CUGL_OK;
    bool seen = false;
    for (size_t i = 0; i < documented_condition_count; i++) {
        const documented_condition *d = &documented_conditions[i];
        if (strcmp(d->function, function) != 0)
            continue;
        bool match = strstr(d->condition, words) != NULL ||
                     strcmp(cugl_status_name(d->status), words) == 0;
        if (!match)
            continue;
        if (seen && found != d->status)
            fail_msg("%s: \"%s\" is under both %s and %s in its header", function, words,
                     cugl_status_name(found), cugl_status_name(d->status));
        found = d->status;
        seen = true;
    }
    if (!seen)
        fail_msg("%s: its header's @errors has no \"%s\"", function, words);
    return found;
}

/* ---- The cases: each makes what it needs, calls, and frees it ----------- */

static cugl_status target_past_gl_limit(void)
{
    GLint most = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &most);
    if (most >= 65536)
        return NOT_HERE; /* no size past GL's limit that cugl's own bound lets through */
    cugl_app_target *t = NULL;
    cugl_status st = cugl_app_target_create(
        &t, ctx, &(cugl_app_target_desc){.width = most + 1, .height = 2});
    cugl_app_target_destroy(t);
    return st;
}

static cugl_status volume_past_gl_limit(void)
{
    GLint most = 0;
    glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &most);
    if (most >= 65536)
        return NOT_HERE;
    cugl_app_target *t = NULL;
    cugl_status st = cugl_app_target_create(
        &t, ctx,
        &(cugl_app_target_desc){
            .kind = CUGL_APP_TARGET_VOLUME, .width = 2, .height = 2, .depth = most + 1});
    cugl_app_target_destroy(t);
    return st;
}

static cugl_status volume_of_depth_0(void)
{
    cugl_app_target *t = NULL;
    cugl_status st = cugl_app_target_create(
        &t, ctx, &(cugl_app_target_desc){.kind = CUGL_APP_TARGET_VOLUME, .width = 4, .height = 4});
    assert_string_equal(cugl_last_error(),
                        "cugl_app_target_create: size 4 x 4 x 0: each from 1 to 65536");
    cugl_app_target_destroy(t);
    return st;
}

static cugl_status map_path_without_cuda(void)
{
    cugl_app_target *t = NULL;
    cugl_status st = cugl_app_target_create(
        &t, ctx,
        &(cugl_app_target_desc){.interop = CUGL_APP_INTEROP_MAP, .width = 4, .height = 4});
    cugl_app_target_destroy(t);
    return st;
}

/* A host view of `bytes` at `data` as (rows, columns, 4) bytes. */
static cugl_view *host_image_view(void *data, int64_t rows, int64_t columns)
{
    cugl_buffer *b = NULL;
    cugl_layout l;
    cugl_view *v = NULL;
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)data,
                                      (size_t)(rows * columns * 4), NULL));
    assert_ok(cugl_layout_init(&l, 3, (int64_t[]){rows, columns, 4}, NULL, 1));
    assert_ok(cugl_view_from_buffer(&v, b, &l, (cugl_dtype){0}, true));
    cugl_buffer_release(b);
    return v;
}

static cugl_status copy_from_a_closed_buffer(void)
{
    static uint8_t pixels[4][4][4];
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){.width = 4, .height = 4}));
    cugl_view *v = host_image_view(pixels, 4, 4);
    assert_ok(cugl_buffer_close(cugl_view_buffer(v), NULL));
    cugl_status st = cugl_app_target_copy_from(t, v, NULL);
    cugl_view_release(v);
    /* The next good copy works. */
    cugl_view *good = host_image_view(pixels, 4, 4);
    assert_ok(cugl_app_target_copy_from(t, good, NULL));
    cugl_view_release(good);
    cugl_app_target_destroy(t);
    return st;
}

static cugl_status recording_onto_a_full_disk(void)
{
    if (access("/dev/full", W_OK) != 0)
        return NOT_HERE;
    /* A few lines, still buffered when the recording stops. */
    assert_ok(cugl_app_context_record(ctx, "/dev/full"));
    for (int i = 0; i < 3; i++) {
        cugl_app_event ev = {.type = CUGL_APP_EVENT_MOVE, .x = i, .y = 7};
        assert_ok(cugl_app_context_push_event(ctx, &ev));
        assert_ok(cugl_app_context_present(ctx));
    }
    cugl_status st = cugl_app_context_record(ctx, NULL);
    assert_ok(cugl_app_context_record(ctx, NULL)); /* stopped: nothing left to stop */
    return st;
}

static cugl_status link_into_a_missing_folder(void)
{
    char link[320];
    snprintf(link, sizeof link, "%s", tmp_path("away.lnk"));
    assert_int_equal(symlink("no/such/folder/shot.png", link), 0);
    static const uint8_t pixel[4] = {1, 2, 3, 255};
    cugl_status st = cugl_app_write_png(link, pixel, 1, 1);
    char to[64];
    ssize_t n = readlink(link, to, sizeof to);
    assert_int_equal(n, (ssize_t)strlen("no/such/folder/shot.png")); /* the link stays */
    assert_int_equal(unlink(link), 0);
    return st;
}

#if CUGL_APP_HAS_SERVE
static cugl_status serve(const char *address, const char *cert, const char *key)
{
    cugl_app_server *s = NULL;
    cugl_status st = cugl_app_server_create(
        &s, ctx, &(cugl_app_server_desc){.address = address, .cert = cert, .key = key});
    cugl_app_server_destroy(s);
    return st;
}

static cugl_status address_zero(void) { return serve("0", NULL, NULL); }

static cugl_status address_of_one_number(void) { return serve("2130706433", NULL, NULL); }

static cugl_status certificate_not_pem(void)
{
    char cert[320], key[320];
    snprintf(cert, sizeof cert, "%s", tmp_path("cert.pem"));
    snprintf(key, sizeof key, "%s", tmp_path("key.pem"));
    assert_ok(cugl_app_write_file(cert, "not a certificate\n", 18));
    assert_ok(cugl_app_write_file(key, "-----BEGIN PRIVATE KEY-----\n", 28));
    cugl_status st = serve("127.0.0.1", cert, key);
    unlink(cert);
    unlink(key);
    return st;
}
#endif

/* Device 0 of a GPU, not yet made current: the same device is refused for
 * what it is, not for the devices' state. */
static cugl_status peer_access_to_itself(void)
{
    return cugl_device_enable_peer_access(dev, dev);
}

static cugl_status allocation_larger_than_the_device(void)
{
    assert_ok(cugl_device_set_current(dev));
    cugl_memory_resource *mr = NULL;
    cugl_stream *stream = NULL;
    cugl_buffer *b = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    assert_ok(cugl_device_default_stream(&stream, dev));
    cugl_status st = cugl_memory_resource_allocate(&b, mr, SIZE_MAX, stream);
    assert_null(b);
    /* The next good allocation works. */
    assert_ok(cugl_memory_resource_allocate(&b, mr, 4096, stream));
    cugl_buffer_release(b);
    assert_ok(cugl_stream_sync(stream));
    cugl_memory_resource_release(mr);
    return st;
}

static cugl_status shared_texture_past_gl_limit(void)
{
    GLint most = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &most);
    cugl_app_shared *s = NULL;
    cugl_status st = cugl_app_shared_texture_create(&s, dev, 0x8058 /* GL_RGBA8 */, most + 1, 2);
    assert_null(s);
    return st;
}

/* A target of the host path on device 0 (the context's GL is on none). */
static cugl_app_target *host_target_on_device(void)
{
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx,
                                     &(cugl_app_target_desc){.interop = CUGL_APP_INTEROP_HOST,
                                                             .width = 4,
                                                             .height = 4,
                                                             .device = dev}));
    return t;
}

static cugl_status turn_on_a_closed_stream(void)
{
    cugl_app_target *t = host_target_on_device();
    cugl_stream *closed = NULL, *good = NULL;
    assert_ok(cugl_stream_create(&closed, dev, NULL));
    cugl_stream_close(closed);
    cugl_app_access a;
    cugl_status st = cugl_app_target_cuda_begin(t, closed, &a);
    /* Refused, it left no turn open: the next turn begins and ends. */
    assert_ok(cugl_device_default_stream(&good, dev));
    assert_ok(cugl_app_target_cuda_begin(t, good, &a));
    assert_ok(cugl_app_target_cuda_end(t, good));
    assert_ok(cugl_stream_sync(good));
    cugl_stream_release(closed);
    cugl_app_target_destroy(t);
    return st;
}

static cugl_status copy_with_a_closed_allocator(void)
{
    cugl_memory_resource *mr = NULL, *closed = NULL;
    cugl_stream *stream = NULL;
    cugl_buffer *a = NULL, *b = NULL;
    cugl_view *va = NULL, *vb = NULL;
    cugl_layout l;
    assert_ok(cugl_device_default_stream(&stream, dev));
    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    assert_ok(cugl_device_memory_resource_create(&closed, dev, NULL));
    cugl_memory_resource_close(closed);
    assert_ok(cugl_memory_resource_allocate(&a, mr, 4096, stream));
    assert_ok(cugl_memory_resource_allocate(&b, mr, 4096, stream));
    assert_ok(cugl_layout_init(&l, 1, (int64_t[]){1024}, NULL, 4));
    assert_ok(cugl_view_from_buffer(&va, a, &l, (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1}, false));
    assert_ok(cugl_view_from_buffer(&vb, b, &l, (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1}, false));
    cugl_status st =
        cugl_view_copy_from(va, vb, stream, &(cugl_view_copy_desc){.allocator = closed});
    assert_ok(cugl_view_copy_from(va, vb, stream, NULL)); /* the next good copy */
    assert_ok(cugl_stream_sync(stream));
    cugl_view_release(va);
    cugl_view_release(vb);
    cugl_buffer_release(a);
    cugl_buffer_release(b);
    cugl_memory_resource_release(closed);
    cugl_memory_resource_release(mr);
    return st;
}

typedef struct documented_case {
    const char *function, *words; /* the condition as the header writes it */
    bool needs_device;
    cugl_status (*call)(void);
} documented_case;

static const documented_case cases[] = {
    /* First, while device 0 is not yet current. */
    {"cugl_device_enable_peer_access", "the same device", true, peer_access_to_itself},
    {"cugl_app_target_create", "past GL's limits", false, target_past_gl_limit},
    {"cugl_app_target_create", "past GL's limits", false, volume_past_gl_limit},
    {"cugl_app_target_create", "a size not positive", false, volume_of_depth_0},
    {"cugl_app_target_create", "the path asked for does not work here", false,
     map_path_without_cuda},
    {"cugl_app_target_copy_from", "the view's buffer", false, copy_from_a_closed_buffer},
    {"cugl_app_context_record", "when writing a line had failed", false,
     recording_onto_a_full_disk},
    {"cugl_app_write_png", "the file cannot be opened or written", false,
     link_into_a_missing_folder},
#if CUGL_APP_HAS_SERVE
    {"cugl_app_server_create", "numeric shorthand", false, address_zero},
    {"cugl_app_server_create", "numeric shorthand", false, address_of_one_number},
    {"cugl_app_server_create", "not PEM", false, certificate_not_pem},
#endif
    {"cugl_memory_resource_allocate", "with the size and the pool's limit", true,
     allocation_larger_than_the_device},
    {"cugl_app_shared_texture_create", "too large", true, shared_texture_past_gl_limit},
    {"cugl_app_targets_cuda_begin", "a closed stream", true, turn_on_a_closed_stream},
    {"cugl_view_copy_from", "CUGL_ERROR_CLOSED", true, copy_with_a_closed_allocator},
};

static void each_condition_gets_its_documented_status(void **state)
{
    (void)state;
    if (cugl_device_get(&dev, 0) != CUGL_OK)
        dev = NULL;
    bool no_skip = getenv("CUGL_TEST_NO_SKIP") && strcmp(getenv("CUGL_TEST_NO_SKIP"), "1") == 0;
    if (!dev && no_skip)
        fail_msg("no CUDA device, and CUGL_TEST_NO_SKIP=1: %s", cugl_last_error());
    int ran = 0, failed = 0, without_device = 0, not_here = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const documented_case *c = &cases[i];
        if (c->needs_device && !dev) {
            without_device++;
            continue;
        }
        cugl_status want = header_says(c->function, c->words);
        long long objects = cugl_live_objects();
        cugl_clear_error();
        cugl_status got = c->call();
        if (got == NOT_HERE) {
            printf("# %s, \"%s\": cannot be brought about here\n", c->function, c->words);
            not_here++;
            continue;
        }
        const char *msg = cugl_last_error();
        bool ok = got == want && strncmp(msg, c->function, strlen(c->function)) == 0;
        /* A one-target form names itself, then the batch it calls. */
        ok = ok || (got == want && strstr(msg, c->function));
        if (cugl_live_objects() != objects) {
            printf("# %s, \"%s\": %lld objects more alive than before\n", c->function, c->words,
                   cugl_live_objects() - objects);
            ok = false;
        }
        printf("# %s %s, \"%s\": %s (the header: %s): %s\n", ok ? "ok" : "NOT OK", c->function,
               c->words, cugl_status_name(got), cugl_status_name(want), msg);
        failed += !ok;
        ran++;
    }
    printf("# %d conditions held to their headers, %d failed; %d left for a machine with a CUDA "
           "device, %d that cannot be brought about here\n",
           ran, failed, without_device, not_here);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_condition_gets_its_documented_status),
    };
    return gl_test_run(tests, "cugl-documented");
}
