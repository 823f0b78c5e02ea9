/*
 * Shared memory of the GL GPU written by CUDA on another GPU: a headless
 * GL context on device 0, its map-free memory opened to device 1
 * (cugl_app_shared_set_writers), device 1's stream taking CUDA's turns,
 * and GL reading every frame's bytes exactly; and a registered GL buffer
 * used with device 1's streams. Skipped (77) with fewer than
 * two CUDA devices or no headless GL on device 0 (CUGL_TEST_NO_SKIP=1: a
 * failure).
 */
#include "test_gl.h"

#include "cugl_test.h"
#include "gpu_bytes.h"

enum { N = 1024 * 1024, FRAMES = 3 };

static cugl_device *dev0, *dev1;
static cugl_stream *stream1;
static cugl_app_context *ctx;

static void written_by_the_other_gpu(void **state)
{
    (void)state;
    cugl_app_shared *sh = NULL;
    assert_ok(cugl_app_shared_buffer_create(&sh, dev0, N));
    /* Before device 1 is a writer, its stream is refused. */
    assert_status(cugl_app_shared_cuda_begin(sh, stream1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_shared_cuda_begin: the stream is device 1's; the shared "
                        "memory is device 0's and no other device writes it "
                        "(cugl_app_shared_set_writers)");
    assert_ok(cugl_app_shared_set_writers(sh, &dev1, 1));

    cugl_memory_resource *mr1 = NULL;
    cugl_buffer *on1 = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr1, dev1, NULL));
    assert_ok(cugl_memory_resource_allocate(&on1, mr1, N, stream1));
    uint8_t *want = malloc(N), *got = malloc(N);
    assert_non_null(want);
    assert_non_null(got);
    GLuint probe = 0;
    glCreateBuffers(1, &probe);
    glNamedBufferStorage(probe, N, NULL, GL_DYNAMIC_STORAGE_BIT);
    for (int f = 0; f < FRAMES; f++) {
        write_pattern(want, N, 50u + (unsigned)f);
        cugl_buffer *host = NULL, *view = NULL;
        assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)want, N, NULL));
        assert_ok(cugl_buffer_copy_from(on1, host, stream1));
        /* CUDA's turn on device 1: it writes device 0's memory over the link. */
        assert_ok(cugl_app_shared_cuda_begin(sh, stream1));
        assert_ok(cugl_buffer_from_handle(&view, cugl_buffer_handle(cugl_app_shared_buffer(sh)),
                                          N, NULL));
        assert_ok(cugl_buffer_copy_from(view, on1, stream1));
        assert_ok(cugl_app_shared_cuda_end(sh, stream1));
        /* GL's turn on device 0 reads it on the GPU. */
        assert_ok(cugl_app_shared_gl_begin(sh));
        memset(got, 0, N);
        glCopyNamedBufferSubData(cugl_app_shared_gl_name(sh), probe, 0, 0, N);
        glGetNamedBufferSubData(probe, 0, N, got);
        assert_int_equal(glGetError(), GL_NO_ERROR);
        assert_ok(cugl_app_shared_gl_end(sh));
        char what[64];
        snprintf(what, sizeof what, "frame %d written by device 1, read by GL on device 0", f);
        expect_pattern(got, N, 50u + (unsigned)f, what);
        cugl_buffer_release(view);
        cugl_buffer_release(host);
    }
    /* Writers are named before the first turn only. */
    assert_status(cugl_app_shared_set_writers(sh, &dev1, 1), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_set_writers: the memory has been "
                                           "used; name its writers before its first turn");
    glDeleteBuffers(1, &probe);
    free(want);
    free(got);
    assert_ok(cugl_buffer_close(on1, stream1));
    cugl_buffer_release(on1);
    cugl_memory_resource_release(mr1);
    cugl_app_shared_destroy(sh);
}

/*
 * A GL buffer of device 0 registered with CUDA: streams of device 1 are
 * refused for its map, unmap, unmap stream and close, each with the
 * function's name and both devices, and leave it as it was; device 0's
 * default stream, with device 1 current, maps and unmaps it.
 */
static void registered_buffer_and_the_other_devices_streams(void **state)
{
    (void)state;
    GLuint name = 0;
    glCreateBuffers(1, &name);
    glNamedBufferStorage(name, N, NULL, GL_DYNAMIC_STORAGE_BIT);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    cugl_graphics_resource *res = NULL;
    assert_ok(cugl_graphics_resource_from_gl_buffer(&res, dev0, name, CUGL_GRAPHICS_NONE));
    cugl_stream *default0 = NULL, *default1 = NULL, *stream0 = NULL;
    assert_ok(cugl_stream_create(&stream0, dev0, NULL));
    assert_ok(cugl_device_default_stream(&default0, dev0));
    assert_ok(cugl_device_default_stream(&default1, dev1));
    cugl_buffer *mapped = NULL;
    assert_status(cugl_graphics_resource_map(&mapped, res, stream1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_graphics_resource_map: the stream is on device 1");
    assert_null(mapped);
    assert_false(cugl_graphics_resource_is_mapped(res));

    assert_ok(cugl_device_set_current(dev1));
    assert_ok(cugl_graphics_resource_map(&mapped, res, default0));
    assert_true(cugl_graphics_resource_is_mapped(res));
    assert_status(cugl_graphics_resource_unmap(res, default1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_graphics_resource_unmap: the stream is on "
                                           "device 1, the resource on device 0");
    assert_status(cugl_graphics_resource_set_unmap_stream(res, stream1),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_graphics_resource_set_unmap_stream: the stream "
                                           "is on device 1, the resource on device 0");
    assert_status(cugl_graphics_resource_close(res, stream1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_graphics_resource_close: the stream is on "
                                           "device 1, the resource on device 0");
    assert_true(cugl_graphics_resource_is_mapped(res));
    assert_false(cugl_graphics_resource_is_closed(res));
    assert_false(cugl_buffer_is_closed(mapped));

    const uint32_t word = 0xC0FFEE11u;
    assert_ok(cugl_buffer_fill(mapped, &word, sizeof word, default0));
    assert_ok(cugl_graphics_resource_unmap(res, default0));
    assert_ok(cugl_stream_sync(default0));
    assert_ok(cugl_device_set_current(dev0));
    uint32_t *got = calloc(1, N);
    assert_non_null(got);
    glGetNamedBufferSubData(name, 0, N, got);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    for (size_t i = 0; i < N / 4; i++)
        if (got[i] != word)
            fail_msg("word %zu of the GL buffer is 0x%08x, 0x%08x was written", i, got[i], word);
    free(got);
    cugl_buffer_release(mapped);

    /* Closing the mapped buffer on device 1's stream: refused, and the
     * resource unmapped all the same, as with no stream. */
    mapped = NULL;
    assert_ok(cugl_graphics_resource_map(&mapped, res, stream0));
    assert_status(cugl_buffer_close(mapped, stream1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_buffer_close: the stream is on device 1, the "
                                           "resource on device 0");
    assert_true(cugl_buffer_is_closed(mapped));
    assert_false(cugl_graphics_resource_is_mapped(res));
    cugl_buffer_release(mapped);
    assert_ok(cugl_graphics_resource_close(res, NULL));
    cugl_graphics_resource_release(res);
    cugl_stream_release(stream0);
    glDeleteBuffers(1, &name);
}

int main(void)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE)
        cugl_test_skip_all(cugl_last_error());
    if (st == CUGL_OK && count < 2)
        cugl_test_skip_all("one CUDA device; this suite needs two");
    if (st != CUGL_OK || cugl_device_get(&dev0, 0) != CUGL_OK ||
        cugl_device_get(&dev1, 1) != CUGL_OK || cugl_device_set_current(dev1) != CUGL_OK ||
        cugl_stream_create(&stream1, dev1, NULL) != CUGL_OK ||
        cugl_device_set_current(dev0) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                           .mode = CUGL_APP_HEADLESS,
                                           .width = 64,
                                           .height = 64,
                                           .cuda_device = 0,
                                       });
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    test_gl_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_by_the_other_gpu),
        cmocka_unit_test(registered_buffer_and_the_other_devices_streams),
    };
    int failed = cugl_test_run(tests);
    cugl_app_context_destroy(ctx);
    cugl_stream_release(stream1);
    return failed;
}
