/*
 * CUDA arrays on a real GPU: attributes; full-array round trips for every
 * format x channel count x rank through pageable host memory, pinned and
 * device buffers (and managed and host-only buffers); size checks with both
 * sizes; the device's extent limits; region copies (array to array, array
 * to and from pitched host memory and buffers, 3D with offsets, layers)
 * compared byte for byte against a host model of the same copy, including
 * the bytes outside the region; every bound refused with its numbers;
 * mipmapped arrays and their levels (shapes and flags as the driver reports
 * them, round trips, a level outliving its released parent, a level that
 * owns nothing); layered and cube-map arrays per layer and face; the closed
 * state.
 */
#include "gpu_kernels.h"

static cugl_device *dev;
static cugl_device_properties props;
static cugl_stream *stream;
static cugl_memory_resource *device_mr;
static cugl_memory_resource *pinned_mr;

/* ---- helpers ------------------------------------------------------------ */

/* A buffer of `size` bytes from `mr`, ready for the host and other streams. */
static cugl_buffer *new_buffer(cugl_memory_resource *mr, size_t size)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, size, stream));
    assert_non_null(b);
    assert_ok(cugl_stream_sync(stream));
    return b;
}

static unsigned char *host_of(const cugl_buffer *b)
{
    return (unsigned char *)(uintptr_t)cugl_buffer_handle(b);
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

/* Deterministic bytes, different for each seed (any bit pattern: copies
 * move bytes, whatever the format says they mean). */
static void pattern(void *dst, size_t n, unsigned seed)
{
    unsigned char *p = dst;
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char)(x >> 24);
    }
}

static void expect_bytes(const void *got, const void *want, size_t n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i])
            fail_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, g[i], w[i]);
}

static void expect_message(const char *want)
{
    if (strcmp(cugl_last_error(), want) != 0)
        fail_msg("message \"%s\", expected \"%s\"", cugl_last_error(), want);
}

static cugl_array *new_array(const cugl_array_desc *d)
{
    cugl_array *a = NULL;
    assert_ok(cugl_array_create(&a, dev, d));
    assert_non_null(a);
    return a;
}

/* Fill the whole array from host bytes and wait. */
static void upload(cugl_array *a, const void *bytes)
{
    assert_ok(cugl_array_copy_from_host(a, bytes, cugl_array_size_bytes(a), stream));
    assert_ok(cugl_stream_sync(stream));
}

/* The whole array as host bytes (the caller frees them). */
static unsigned char *download(cugl_array *a)
{
    size_t n = cugl_array_size_bytes(a);
    unsigned char *p = xmalloc(n);
    memset(p, 0xcd, n);
    assert_ok(cugl_array_copy_to_host(p, n, a, stream));
    assert_ok(cugl_stream_sync(stream));
    return p;
}

/* What the attributes must say for a desc. */
static void check_attributes(const cugl_array *a, const cugl_array_desc *d, const char *what)
{
    size_t channels = d->num_channels ? (size_t)d->num_channels : 1;
    size_t elem = cugl_format_size(d->format) * channels;
    size_t count = d->shape[0] * (d->ndim >= 2 ? d->shape[1] : 1) *
                   (d->ndim == 3 ? d->shape[2] : 1) * (d->cubemap ? 6 : 1) *
                   (d->layers ? d->layers : 1);
    size_t shape[3];
    cugl_array_shape(a, NULL); /* nowhere to write: a no-op, not a crash */
    cugl_array_shape(a, shape);
    if (cugl_array_ndim(a) != d->ndim || memcmp(shape, d->shape, sizeof shape) != 0 ||
        cugl_array_format(a) != d->format || cugl_array_num_channels(a) != (int)channels ||
        cugl_array_element_size(a) != elem || cugl_array_size_bytes(a) != count * elem ||
        cugl_array_layers(a) != d->layers || cugl_array_is_cubemap(a) != d->cubemap ||
        cugl_array_is_surface_load_store(a) != d->surface_load_store)
        fail_msg("%s: the array reports ndim %d shape %zux%zux%zu format %s x%d, element %zu, "
                 "%zu bytes, layers %zu, cube %d, surface %d",
                 what, cugl_array_ndim(a), shape[0], shape[1], shape[2],
                 cugl_format_name(cugl_array_format(a)), cugl_array_num_channels(a),
                 cugl_array_element_size(a), cugl_array_size_bytes(a), cugl_array_layers(a),
                 cugl_array_is_cubemap(a), cugl_array_is_surface_load_store(a));
    assert_non_null(cugl_array_handle(a));
    assert_ptr_equal(cugl_array_device(a), dev);
    assert_false(cugl_array_is_closed(a));
}

/* ---- full-array round trips ------------------------------------------- */

static const size_t rank_shapes[3][3] = {{37}, {37, 19}, {13, 7, 5}};
static const int channel_counts[] = {1, 2, 4};

static void round_trip_one(const cugl_array_desc *d, unsigned seed, const char *what)
{
    cugl_array *a = new_array(d);
    check_attributes(a, d, what);
    size_t n = cugl_array_size_bytes(a);
    /* Every other side is larger than the array: "at least size_bytes". */
    size_t big = n + 64;
    unsigned char *want = xmalloc(big), *got = xmalloc(big);
    cugl_buffer *dbuf = new_buffer(device_mr, big);
    cugl_buffer *pbuf = new_buffer(pinned_mr, big);
    char step[160];

    /* Pageable host in; device buffer, pinned buffer and pageable host out. */
    pattern(want, big, seed);
    memset(host_of(pbuf), 0, big);
    gpu_fill_u32(cugl_buffer_handle(dbuf), 0, big / 4);
    assert_ok(cugl_array_copy_from_host(a, want, big, stream));
    assert_ok(cugl_array_copy_to_buffer(dbuf, a, stream));
    assert_ok(cugl_array_copy_to_buffer(pbuf, a, stream));
    memset(got, 0, big);
    assert_ok(cugl_array_copy_to_host(got, big, a, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(step, sizeof step, "%s: pageable host -> array -> pageable host", what);
    expect_bytes(got, want, n, step);
    snprintf(step, sizeof step, "%s: pageable host -> array -> pinned buffer", what);
    expect_bytes(host_of(pbuf), want, n, step);
    for (size_t i = n; i < big; i++)
        if (host_of(pbuf)[i] != 0 || got[i] != 0)
            fail_msg("%s: byte %zu past the array's %zu was written", what, i, n);
    gpu_read(got, cugl_buffer_handle(dbuf), n);
    snprintf(step, sizeof step, "%s: pageable host -> array -> device buffer", what);
    expect_bytes(got, want, n, step);

    /* Device buffer in. */
    pattern(want, n, seed + 1);
    gpu_write(cugl_buffer_handle(dbuf), want, n);
    assert_ok(cugl_array_copy_from_buffer(a, dbuf, stream));
    memset(got, 0, n);
    assert_ok(cugl_array_copy_to_host(got, n, a, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(step, sizeof step, "%s: device buffer -> array -> pageable host", what);
    expect_bytes(got, want, n, step);

    /* Pinned buffer in; a raw pinned host pointer out. */
    pattern(host_of(pbuf), n, seed + 2);
    memcpy(want, host_of(pbuf), n);
    cugl_buffer *pout = new_buffer(pinned_mr, n);
    memset(host_of(pout), 0, n);
    assert_ok(cugl_array_copy_from_buffer(a, pbuf, stream));
    assert_ok(cugl_array_copy_to_host(host_of(pout), n, a, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(step, sizeof step, "%s: pinned buffer -> array -> pinned host memory", what);
    expect_bytes(host_of(pout), want, n, step);

    cugl_buffer_release(pout);
    cugl_buffer_release(pbuf);
    cugl_buffer_release(dbuf);
    free(want);
    free(got);
    cugl_array_release(a);
}

static void round_trips_every_format_channels_rank(void **state)
{
    (void)state;
    unsigned seed = 1;
    for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++)
        for (size_t c = 0; c < 3; c++)
            for (int ndim = 1; ndim <= 3; ndim++) {
                cugl_array_desc d = {.ndim = ndim, .format = (cugl_format)f,
                                     .num_channels = channel_counts[c]};
                memcpy(d.shape, rank_shapes[ndim - 1], sizeof d.shape);
                char what[64];
                snprintf(what, sizeof what, "%s x%d, %dD", cugl_format_name(d.format),
                         channel_counts[c], ndim);
                round_trip_one(&d, seed, what);
                seed += 3;
            }
}

/* Managed memory and host memory the driver does not know, as buffers. */
static void round_trips_through_managed_and_host_only_buffers(void **state)
{
    (void)state;
    const cugl_array_desc d = {.ndim = 2, .shape = {33, 17}, .format = CUGL_FORMAT_F32,
                               .num_channels = 4};
    cugl_array *a = new_array(&d);
    size_t n = cugl_array_size_bytes(a);
    unsigned char *want = xmalloc(n), *got = xmalloc(n);

    /* A non-owning buffer over malloc'd memory is host-only. */
    unsigned char *plain = xmalloc(n);
    cugl_buffer *host_only = NULL;
    assert_ok(cugl_buffer_from_handle(&host_only, (uint64_t)(uintptr_t)plain, n, NULL));
    assert_false(cugl_buffer_is_device_accessible(host_only));
    pattern(plain, n, 77);
    memcpy(want, plain, n);
    assert_ok(cugl_array_copy_from_buffer(a, host_only, stream));
    memset(plain, 0, n);
    assert_ok(cugl_array_copy_to_buffer(host_only, a, stream));
    assert_ok(cugl_stream_sync(stream));
    expect_bytes(plain, want, n, "host-only buffer -> array -> host-only buffer");
    cugl_buffer_release(host_only);
    free(plain);

    if (!props.managed_memory) {
        gpu_not_applicable("the device has no managed memory");
    } else {
        cugl_memory_resource *mr = NULL;
        assert_ok(cugl_managed_memory_resource_create(&mr, dev, NULL));
        cugl_buffer *m = new_buffer(mr, n);
        pattern(host_of(m), n, 78);
        memcpy(want, host_of(m), n);
        assert_ok(cugl_array_copy_from_buffer(a, m, stream));
        memset(got, 0, n);
        assert_ok(cugl_array_copy_to_host(got, n, a, stream));
        assert_ok(cugl_stream_sync(stream));
        expect_bytes(got, want, n, "managed buffer -> array");
        pattern(want, n, 79);
        upload(a, want);
        memset(host_of(m), 0, n);
        assert_ok(cugl_array_copy_to_buffer(m, a, stream));
        assert_ok(cugl_stream_sync(stream));
        expect_bytes(host_of(m), want, n, "array -> managed buffer");
        cugl_buffer_release(m);
        cugl_memory_resource_release(mr);
    }
    free(want);
    free(got);
    cugl_array_release(a);
}

static void undersized_sides_are_refused(void **state)
{
    (void)state;
    const cugl_array_desc d = {.ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_F32};
    cugl_array *a = new_array(&d);
    unsigned char bytes[1024];
    cugl_buffer *small = new_buffer(device_mr, 512);

    assert_status(cugl_array_copy_from_host(a, bytes, 1023, stream), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_from_host: source has 1023 bytes, smaller than the array "
                   "extent (1024 bytes)");
    assert_status(cugl_array_copy_to_host(bytes, 1000, a, stream), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_to_host: destination has 1000 bytes, smaller than the array "
                   "extent (1024 bytes)");
    assert_status(cugl_array_copy_from_buffer(a, small, stream), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_from_buffer: source buffer has 512 bytes, smaller than the "
                   "array extent (1024 bytes)");
    assert_status(cugl_array_copy_to_buffer(small, a, stream), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_to_buffer: destination buffer has 512 bytes, smaller than "
                   "the array extent (1024 bytes)");
    assert_status(cugl_array_copy_from_host(a, NULL, 1024, stream), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_from_host: src is NULL");
    assert_status(cugl_array_copy_from_host(a, bytes, 1024, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_from_host: stream is NULL");

    cugl_stream *closed = NULL;
    assert_ok(cugl_stream_create(&closed, dev, NULL));
    cugl_stream_close(closed);
    assert_status(cugl_array_copy_to_host(bytes, 1024, a, closed), CUGL_ERROR_CLOSED);
    expect_message("cugl_array_copy_to_host: the stream has been closed");
    cugl_stream_release(closed);

    cugl_buffer *freed = new_buffer(device_mr, 4096);
    assert_ok(cugl_buffer_close(freed, NULL));
    assert_status(cugl_array_copy_from_buffer(a, freed, stream), CUGL_ERROR_CLOSED);
    expect_message("cugl_array_copy_from_buffer: the buffer has been closed");
    cugl_buffer_release(freed);
    cugl_buffer_release(small);
    cugl_array_release(a);
}

/* ---- limits --------------------------------------------------------------- */

static void limit_case(const cugl_array_desc *d, const char *axis, size_t value,
                       const char *what, int limit)
{
    cugl_array *a = (cugl_array *)&props;
    assert_status(cugl_array_create(&a, dev, d), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(a);
    char want[512];
    snprintf(want, sizeof want, "cugl_array_create: %s %zu exceeds the %s limit of %d on %s",
             axis, value, what, limit, props.name);
    expect_message(want);
}

static void extents_beyond_the_device_limits_are_refused(void **state)
{
    (void)state;
    size_t w1 = (size_t)props.max_texture_1d_width + 1;
    limit_case(&(cugl_array_desc){.ndim = 1, .shape = {w1}, .format = CUGL_FORMAT_U8}, "width",
               w1, "1D texture", props.max_texture_1d_width);
    size_t h2 = (size_t)props.max_texture_2d[1] + 1;
    limit_case(&(cugl_array_desc){.ndim = 2, .shape = {1, h2}, .format = CUGL_FORMAT_U8},
               "height", h2, "2D texture", props.max_texture_2d[1]);
    size_t d3 = (size_t)props.max_texture_3d[2] + 1;
    limit_case(&(cugl_array_desc){.ndim = 3, .shape = {1, 1, d3}, .format = CUGL_FORMAT_U8},
               "depth", d3, "3D texture", props.max_texture_3d[2]);
    size_t layers = (size_t)props.max_texture_2d_layered[2] + 1;
    limit_case(&(cugl_array_desc){.ndim = 2, .shape = {1, 1}, .format = CUGL_FORMAT_U8,
                                  .layers = layers},
               "layers", layers, "2D layered texture", props.max_texture_2d_layered[2]);
    size_t cube = (size_t)props.max_texture_cubemap_width + 1;
    limit_case(&(cugl_array_desc){.ndim = 2, .shape = {cube, cube}, .format = CUGL_FORMAT_U8,
                                  .cubemap = true},
               "width", cube, "cube-map texture", props.max_texture_cubemap_width);
    if (props.max_surface_2d[0] < props.max_texture_2d[0]) {
        size_t ws = (size_t)props.max_surface_2d[0] + 1;
        limit_case(&(cugl_array_desc){.ndim = 2, .shape = {ws, 1}, .format = CUGL_FORMAT_U8,
                                      .surface_load_store = true},
                   "width", ws, "2D surface", props.max_surface_2d[0]);
    } else {
        gpu_not_applicable("2D surfaces are as wide as 2D textures here");
    }
    /* At the limit itself, creation works. */
    cugl_array *a = new_array(&(cugl_array_desc){
        .ndim = 1, .shape = {(size_t)props.max_texture_1d_width}, .format = CUGL_FORMAT_U8});
    cugl_array_release(a);
}

/* ---- region copies ------------------------------------------------------- */

/* A host picture of one side: bytes laid out with a pitch and rows. */
typedef struct model {
    unsigned char *bytes;
    size_t size, elem, pitch, rows;
} model;

static size_t model_at(const model *m, size_t x, size_t y, size_t z)
{
    return (z * m->rows + y) * m->pitch + x * m->elem;
}

/* The copy the driver is asked to make, made on the models. */
static void model_copy(model *dst, const size_t doff[3], const model *src, const size_t soff[3],
                       const size_t extent[3])
{
    for (size_t z = 0; z < extent[2]; z++)
        for (size_t y = 0; y < extent[1]; y++)
            for (size_t x = 0; x < extent[0]; x++)
                memcpy(dst->bytes + model_at(dst, doff[0] + x, doff[1] + y, doff[2] + z),
                       src->bytes + model_at(src, soff[0] + x, soff[1] + y, soff[2] + z),
                       src->elem);
}

enum side_kind { SIDE_ARRAY, SIDE_HOST, SIDE_DEVICE_BUFFER, SIDE_PINNED_BUFFER };

typedef struct side_spec {
    enum side_kind kind;
    cugl_array_desc desc;       /* SIDE_ARRAY */
    size_t size, pitch, rows;   /* linear sides; pitch and rows 0: the least */
    size_t offset[3];
} side_spec;

typedef struct region_case {
    const char *what;
    side_spec dst, src;
    size_t extent[3];
    bool same_array; /* src is dst's array */
} region_case;

/* A live side: the object, its endpoint and its model. */
typedef struct side {
    cugl_array *array;
    cugl_buffer *buffer;
    unsigned char *host;
    cugl_copy_endpoint ep;
    model m;
} side;

static void side_open(side *s, const side_spec *spec, size_t elem, const size_t extent[3],
                      unsigned seed)
{
    memset(s, 0, sizeof *s);
    s->ep.offset[0] = spec->offset[0];
    s->ep.offset[1] = spec->offset[1];
    s->ep.offset[2] = spec->offset[2];
    s->m.elem = elem;
    if (spec->kind == SIDE_ARRAY) {
        s->array = new_array(&spec->desc);
        s->ep.array = s->array;
        s->m.size = cugl_array_size_bytes(s->array);
        s->m.pitch = spec->desc.shape[0] * elem;
        s->m.rows = spec->desc.ndim >= 2 ? spec->desc.shape[1] : 1;
        s->m.bytes = xmalloc(s->m.size);
        pattern(s->m.bytes, s->m.size, seed);
        upload(s->array, s->m.bytes);
        return;
    }
    s->m.size = spec->size;
    s->m.pitch = spec->pitch ? spec->pitch : (spec->offset[0] + extent[0]) * elem;
    s->m.rows = spec->rows ? spec->rows : spec->offset[1] + extent[1];
    s->m.bytes = xmalloc(spec->size);
    pattern(s->m.bytes, spec->size, seed);
    s->ep.pitch = spec->pitch;
    s->ep.rows = spec->rows;
    if (spec->kind == SIDE_HOST) {
        s->host = xmalloc(spec->size);
        memcpy(s->host, s->m.bytes, spec->size);
        s->ep.host = s->host;
        s->ep.host_size = spec->size;
    } else if (spec->kind == SIDE_DEVICE_BUFFER) {
        s->buffer = new_buffer(device_mr, spec->size);
        gpu_write(cugl_buffer_handle(s->buffer), s->m.bytes, spec->size);
        s->ep.buffer = s->buffer;
    } else {
        s->buffer = new_buffer(pinned_mr, spec->size);
        memcpy(host_of(s->buffer), s->m.bytes, spec->size);
        s->ep.buffer = s->buffer;
    }
}

/* The side's bytes as the device left them (the caller frees them). */
static unsigned char *side_read(const side *s)
{
    if (s->array)
        return download(s->array);
    unsigned char *p = xmalloc(s->m.size);
    if (s->host)
        memcpy(p, s->host, s->m.size);
    else if (cugl_buffer_is_host_accessible(s->buffer))
        memcpy(p, host_of(s->buffer), s->m.size);
    else
        gpu_read(p, cugl_buffer_handle(s->buffer), s->m.size);
    return p;
}

static void side_close(side *s)
{
    cugl_array_release(s->array);
    cugl_buffer_release(s->buffer);
    free(s->host);
    free(s->m.bytes);
}

#define F32X1(...) {.ndim = 2, .format = CUGL_FORMAT_F32, __VA_ARGS__}

static void region_copies_match_a_host_model(void **state)
{
    (void)state;
    static const region_case cases[] = {
        {"2D array -> pitched host",
         .dst = {SIDE_HOST, .size = 64 * 8, .pitch = 64, .offset = {2, 1, 0}},
         .src = {SIDE_ARRAY, F32X1(.shape = {40, 30}), .offset = {3, 5, 0}},
         .extent = {10, 7, 1}},
        {"pitched host -> 2D array",
         .dst = {SIDE_ARRAY, F32X1(.shape = {40, 30}), .offset = {29, 21, 0}},
         .src = {SIDE_HOST, .size = 96 * 12, .pitch = 96, .offset = {5, 2, 0}},
         .extent = {11, 9, 1}},
        {"2D array -> 2D array of another format, same element size",
         .dst = {SIDE_ARRAY, {.ndim = 2, .shape = {50, 40}, .format = CUGL_FORMAT_U32},
                 .offset = {20, 10, 0}},
         .src = {SIDE_ARRAY, F32X1(.shape = {40, 30}), .offset = {3, 5, 0}},
         .extent = {15, 12, 1}},
        {"pitched device buffer -> 2D array",
         .dst = {SIDE_ARRAY, F32X1(.shape = {40, 30}, .num_channels = 2), .offset = {4, 4, 0}},
         .src = {SIDE_DEVICE_BUFFER, .size = 256 * 16, .pitch = 256, .offset = {1, 2, 0}},
         .extent = {8, 9, 1}},
        {"2D array -> pitched device buffer",
         .dst = {SIDE_DEVICE_BUFFER, .size = 512 * 20, .pitch = 512, .offset = {7, 3, 0}},
         .src = {SIDE_ARRAY, F32X1(.shape = {40, 30}, .num_channels = 4), .offset = {0, 0, 0}},
         .extent = {21, 17, 1}},
        {"3D array -> pitched host, offsets on both sides",
         .dst = {SIDE_HOST, .size = 200 * 15 * 9, .pitch = 200, .rows = 15, .offset = {1, 2, 3}},
         .src = {SIDE_ARRAY, {.ndim = 3, .shape = {16, 12, 10}, .format = CUGL_FORMAT_F32,
                              .num_channels = 2},
                 .offset = {2, 3, 4}},
         .extent = {9, 7, 5}},
        {"pitched host -> 3D array, offsets on both sides",
         .dst = {SIDE_ARRAY, {.ndim = 3, .shape = {16, 12, 10}, .format = CUGL_FORMAT_U16,
                              .num_channels = 4},
                 .offset = {6, 1, 2}},
         .src = {SIDE_HOST, .size = 160 * 11 * 8, .pitch = 160, .rows = 11, .offset = {3, 1, 2}},
         .extent = {10, 9, 6}},
        {"pitched pinned buffer -> 3D array",
         .dst = {SIDE_ARRAY, {.ndim = 3, .shape = {16, 12, 10}, .format = CUGL_FORMAT_I8},
                 .offset = {1, 1, 1}},
         .src = {SIDE_PINNED_BUFFER, .size = 32 * 16 * 12, .pitch = 32, .rows = 16,
                 .offset = {0, 2, 3}},
         .extent = {15, 11, 9}},
        {"3D array -> 3D array, offsets on both sides",
         .dst = {SIDE_ARRAY, {.ndim = 3, .shape = {9, 9, 9}, .format = CUGL_FORMAT_U16,
                              .num_channels = 4},
                 .offset = {4, 0, 3}},
         .src = {SIDE_ARRAY, {.ndim = 3, .shape = {16, 12, 10}, .format = CUGL_FORMAT_F32,
                              .num_channels = 2},
                 .offset = {2, 3, 4}},
         .extent = {5, 9, 6}},
        {"1D array -> host, x offsets",
         .dst = {SIDE_HOST, .size = 256, .offset = {3, 0, 0}},
         .src = {SIDE_ARRAY, {.ndim = 1, .shape = {100}, .format = CUGL_FORMAT_I16},
                 .offset = {60, 0, 0}},
         .extent = {40, 1, 1}},
        {"one layer of a 2D layered array -> host",
         .dst = {SIDE_HOST, .size = 12 * 4 * 9},
         .src = {SIDE_ARRAY, F32X1(.shape = {12, 9}, .layers = 5), .offset = {0, 0, 3}},
         .extent = {12, 9, 1}},
        {"between disjoint regions of one array",
         .dst = {SIDE_ARRAY, F32X1(.shape = {40, 30}), .offset = {20, 15, 0}},
         .src = {SIDE_ARRAY, .offset = {0, 0, 0}},
         .extent = {20, 15, 1},
         .same_array = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const region_case *c = &cases[i];
        const cugl_array_desc *ad = c->dst.kind == SIDE_ARRAY ? &c->dst.desc : &c->src.desc;
        size_t channels = ad->num_channels ? (size_t)ad->num_channels : 1;
        size_t elem = cugl_format_size(ad->format) * channels;
        side d, s;
        side_open(&d, &c->dst, elem, c->extent, (unsigned)(100 + i));
        if (c->same_array) {
            s = d;
            memcpy(s.ep.offset, c->src.offset, sizeof s.ep.offset);
        } else {
            side_open(&s, &c->src, elem, c->extent, (unsigned)(200 + i));
        }
        cugl_status st = cugl_array_copy_region(&d.ep, &s.ep, c->extent, stream);
        if (st != CUGL_OK)
            fail_msg("%s: %s", c->what, cugl_last_error());
        assert_ok(cugl_stream_sync(stream));
        model_copy(&d.m, c->dst.offset, &s.m, c->src.offset, c->extent);
        unsigned char *got = side_read(&d);
        expect_bytes(got, d.m.bytes, d.m.size, c->what);
        free(got);
        if (!c->same_array)
            side_close(&s);
        side_close(&d);
    }
}

typedef struct bound_case {
    const char *what;
    cugl_copy_endpoint dst, src;
    size_t extent[3];
    cugl_status status;
    const char *message;
} bound_case;

static void region_bounds_are_refused(void **state)
{
    (void)state;
    cugl_array *a = new_array(&(cugl_array_desc)F32X1(.shape = {40, 30}));
    cugl_array *bytes = new_array(&(cugl_array_desc){.ndim = 2, .shape = {40, 30},
                                                     .format = CUGL_FORMAT_U8});
    cugl_buffer *buf = new_buffer(device_mr, 100);
    cugl_buffer *freed = new_buffer(device_mr, 4096);
    assert_ok(cugl_buffer_close(freed, NULL));
    static unsigned char host[4096];
    const bound_case cases[] = {
        {"dst beyond x", {.array = a, .offset = {35}}, {.host = host, .host_size = 4096},
         {10, 1, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: dst: offset[0] 35 + extent[0] 10 exceeds the array's 40 "
         "along x"},
        {"src beyond y", {.host = host, .host_size = 4096}, {.array = a, .offset = {0, 25}},
         {4, 6, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: src: offset[1] 25 + extent[1] 6 exceeds the array's 30 along "
         "y"},
        {"a 2D array has one slice", {.array = a, .offset = {0, 0, 1}},
         {.host = host, .host_size = 4096}, {4, 4, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: dst: offset[2] 1 + extent[2] 1 exceeds the array's 1 along z"},
        {"pitch below the row", {.array = a}, {.host = host, .host_size = 4096, .pitch = 32},
         {10, 2, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: src: pitch 32 is smaller than a row of the region: "
         "(offset[0] 0 + extent[0] 10) x 4-byte elements = 40 bytes"},
        {"pitch below the row with an x offset", {.host = host, .host_size = 4096, .pitch = 40,
                                                  .offset = {1}},
         {.array = a}, {10, 2, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: dst: pitch 40 is smaller than a row of the region: "
         "(offset[0] 1 + extent[0] 10) x 4-byte elements = 44 bytes"},
        {"rows below the region", {.array = a},
         {.host = host, .host_size = 4096, .rows = 4, .offset = {0, 1}}, {4, 4, 1},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: src: rows 4 is fewer than the region's: offset[1] 1 + "
         "extent[1] 4 = 5"},
        {"beyond the host memory", {.array = a}, {.host = host, .host_size = 100, .pitch = 40},
         {10, 3, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: src: the region ends at byte 120, beyond the host memory's "
         "100 bytes (pitch 40, rows 3)"},
        {"beyond the buffer", {.buffer = buf, .offset = {0, 0, 3}, .pitch = 16, .rows = 2},
         {.array = a}, {4, 2, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: dst: the region ends at byte 128, beyond the buffer's 100 "
         "bytes (pitch 16, rows 2)"},
        {"element sizes differ", {.array = a}, {.array = bytes}, {4, 4, 1},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: element sizes differ: dst has 4-byte elements, src 1-byte"},
        {"overlapping regions of one array", {.array = a, .offset = {5, 5}}, {.array = a},
         {10, 10, 1}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_array_copy_region: dst and src are regions of the same array that overlap"},
        {"a closed buffer", {.array = a}, {.buffer = freed}, {4, 4, 1}, CUGL_ERROR_CLOSED,
         "cugl_array_copy_region: the buffer has been closed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_clear_error();
        cugl_status st = cugl_array_copy_region(&cases[i].dst, &cases[i].src, cases[i].extent,
                                                stream);
        if (st != cases[i].status || strcmp(cugl_last_error(), cases[i].message) != 0)
            fail_msg("%s: %s \"%s\", expected %s \"%s\"", cases[i].what, cugl_status_name(st),
                     cugl_last_error(), cugl_status_name(cases[i].status), cases[i].message);
    }
    /* A region that ends inside the buffer (at byte 96 of 100) is copied. */
    assert_ok(cugl_array_copy_region(&(cugl_copy_endpoint){.buffer = buf, .pitch = 16},
                                     &(cugl_copy_endpoint){.array = a},
                                     (const size_t[3]){4, 6, 1}, stream));
    assert_status(cugl_array_copy_region(&(cugl_copy_endpoint){.array = a},
                                         &(cugl_copy_endpoint){.host = host, .host_size = 64},
                                         (const size_t[3]){4, 4, 1}, NULL),
                  CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_array_copy_region: stream is NULL");
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(freed);
    cugl_buffer_release(buf);
    cugl_array_release(bytes);
    cugl_array_release(a);
}

/* ---- mipmapped arrays ------------------------------------------------------ */

static cugl_mipmapped_array *new_mipmap(const cugl_array_desc *d, unsigned levels)
{
    cugl_mipmapped_array *m = NULL;
    assert_ok(cugl_mipmapped_array_create(&m, dev, d, levels));
    assert_non_null(m);
    return m;
}

static bool same_desc(const cugl_array_desc *a, const cugl_array_desc *b)
{
    return a->ndim == b->ndim && a->shape[0] == b->shape[0] && a->shape[1] == b->shape[1] &&
           a->shape[2] == b->shape[2] && a->format == b->format &&
           a->num_channels == b->num_channels && a->layers == b->layers &&
           a->cubemap == b->cubemap && a->surface_load_store == b->surface_load_store;
}

/* Round-trip fresh bytes through an array and compare. */
static void round_trip(cugl_array *a, unsigned seed, const char *what)
{
    size_t n = cugl_array_size_bytes(a);
    unsigned char *want = xmalloc(n);
    pattern(want, n, seed);
    upload(a, want);
    unsigned char *got = download(a);
    expect_bytes(got, want, n, what);
    free(got);
    free(want);
}

static void mipmap_levels_halve_with_floor_one(void **state)
{
    (void)state;
    static const struct {
        cugl_array_desc desc;
        unsigned levels;
    } cases[] = {
        {{.ndim = 2, .shape = {64, 32}, .format = CUGL_FORMAT_F32}, 7},
        {{.ndim = 1, .shape = {100}, .format = CUGL_FORMAT_U8, .num_channels = 4}, 7},
        {{.ndim = 3, .shape = {16, 8, 4}, .format = CUGL_FORMAT_F16, .num_channels = 2}, 5},
        {{.ndim = 2, .shape = {8, 8}, .format = CUGL_FORMAT_I32, .layers = 3}, 4},
        {{.ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_F32, .cubemap = true}, 5},
        {{.ndim = 2, .shape = {20, 12}, .format = CUGL_FORMAT_U16, .surface_load_store = true},
         3},
        {{.ndim = 1, .shape = {21}, .format = CUGL_FORMAT_I8, .num_channels = 2, .layers = 2},
         5},
        {{.ndim = 2, .shape = {8, 8}, .format = CUGL_FORMAT_F16, .num_channels = 4,
          .cubemap = true, .layers = 2},
         4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_mipmapped_array *m = new_mipmap(&cases[i].desc, cases[i].levels);
        assert_int_equal(cugl_mipmapped_array_num_levels(m), cases[i].levels);
        assert_non_null(cugl_mipmapped_array_handle(m));
        assert_ptr_equal(cugl_mipmapped_array_device(m), dev);
        for (unsigned l = 0; l < cases[i].levels; l++) {
            cugl_array_desc want = cases[i].desc;
            for (int k = 0; k < want.ndim; k++) {
                size_t e = want.shape[k] >> l;
                want.shape[k] = e ? e : 1;
            }
            cugl_array_desc got;
            assert_ok(cugl_mipmapped_array_level_desc(m, l, &got));
            want.num_channels = want.num_channels ? want.num_channels : 1;
            if (!same_desc(&got, &want))
                fail_msg("case %zu level %u: level_desc says %zux%zux%zu", i, l, got.shape[0],
                         got.shape[1], got.shape[2]);
            cugl_array *level = NULL;
            assert_ok(cugl_mipmapped_array_get_level(&level, m, l));
            char what[64];
            snprintf(what, sizeof what, "mipmap case %zu, level %u", i, l);
            /* What the driver reports of the level (cuArray3DGetDescriptor). */
            check_attributes(level, &want, what);
            round_trip(level, (unsigned)(i * 16 + l), what);
            cugl_array_release(level);
        }
        cugl_array *level = (cugl_array *)&props;
        assert_status(cugl_mipmapped_array_get_level(&level, m, cases[i].levels),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(level);
        char want[160];
        snprintf(want, sizeof want,
                 "cugl_mipmapped_array_get_level: level %u is out of range: the mipmapped "
                 "array has %u levels (0 to %u)",
                 cases[i].levels, cases[i].levels, cases[i].levels - 1);
        expect_message(want);
        cugl_mipmapped_array_release(m);
    }
}

static void level_outlives_its_released_parent(void **state)
{
    (void)state;
    cugl_mipmapped_array *m =
        new_mipmap(&(cugl_array_desc){.ndim = 2, .shape = {32, 32}, .format = CUGL_FORMAT_F32,
                                      .num_channels = 2},
                   4);
    cugl_array *level0 = NULL, *level2 = NULL;
    assert_ok(cugl_mipmapped_array_get_level(&level0, m, 0));
    assert_ok(cugl_mipmapped_array_get_level(&level2, m, 2));
    size_t n0 = cugl_array_size_bytes(level0);
    unsigned char *want0 = xmalloc(n0);
    pattern(want0, n0, 500);
    upload(level0, want0);

    cugl_mipmapped_array_release(m); /* the caller's reference: the levels hold theirs */
    assert_false(cugl_array_is_closed(level2));
    round_trip(level2, 501, "level 2 after its mipmapped array was released");
    unsigned char *got0 = download(level0);
    expect_bytes(got0, want0, n0, "level 0 written before the release, read after");
    free(got0);
    free(want0);
    cugl_array_release(level0);
    round_trip(level2, 502, "level 2 after level 0 was released too");
    cugl_array_release(level2); /* the last reference: the mipmapped array goes */
}

static void closing_the_mipmap_closes_its_levels(void **state)
{
    (void)state;
    cugl_mipmapped_array *m = new_mipmap(
        &(cugl_array_desc){.ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_U8}, 3);
    cugl_array *level = NULL;
    assert_ok(cugl_mipmapped_array_get_level(&level, m, 1));
    cugl_mipmapped_array_close(m);
    cugl_mipmapped_array_close(m); /* idempotent */
    assert_true(cugl_mipmapped_array_is_closed(m));
    assert_null(cugl_mipmapped_array_handle(m));
    assert_true(cugl_array_is_closed(level));
    assert_null(cugl_array_handle(level));
    unsigned char bytes[64];
    assert_status(cugl_array_copy_to_host(bytes, sizeof bytes, level, stream), CUGL_ERROR_CLOSED);
    expect_message("cugl_array_copy_to_host: the array is a level of a mipmapped array that has "
                   "been closed");
    cugl_array *again = NULL;
    assert_status(cugl_mipmapped_array_get_level(&again, m, 0), CUGL_ERROR_CLOSED);
    expect_message("cugl_mipmapped_array_get_level: the mipmapped array has been closed");
    assert_null(again);
    cugl_array_release(level);
    cugl_mipmapped_array_release(m);
}

/* ---- layered and cube-map arrays ------------------------------------------ */

static void layers_and_faces_round_trip_one_by_one(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        cugl_array_desc desc;
        size_t slices; /* layers x faces */
    } cases[] = {
        {"1D layered", {.ndim = 1, .shape = {33}, .format = CUGL_FORMAT_F32, .layers = 4}, 4},
        {"2D layered",
         {.ndim = 2, .shape = {17, 9}, .format = CUGL_FORMAT_U16, .num_channels = 2,
          .layers = 5},
         5},
        {"cube map",
         {.ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_U8, .num_channels = 4,
          .cubemap = true},
         6},
        {"layered cube map",
         {.ndim = 2, .shape = {8, 8}, .format = CUGL_FORMAT_F16, .cubemap = true,
          .layers = 2},
         12},
        {"2D layered, surface",
         {.ndim = 2, .shape = {5, 3}, .format = CUGL_FORMAT_I32, .layers = 2,
          .surface_load_store = true},
         2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cugl_array_desc *d = &cases[i].desc;
        cugl_array *a = new_array(d);
        check_attributes(a, d, cases[i].what);
        size_t elem = cugl_array_element_size(a);
        size_t h = d->ndim == 2 ? d->shape[1] : 1;
        size_t slice = d->shape[0] * h * elem;
        assert_int_equal(cugl_array_size_bytes(a), slice * cases[i].slices);
        unsigned char *want = xmalloc(slice * cases[i].slices);
        pattern(want, slice * cases[i].slices, (unsigned)(900 + i));
        /* Each layer or face on its own, at z = its index. */
        for (size_t z = 0; z < cases[i].slices; z++) {
            const size_t extent[3] = {d->shape[0], h, 1};
            assert_ok(cugl_array_copy_region(
                &(cugl_copy_endpoint){.array = a, .offset = {0, 0, z}},
                &(cugl_copy_endpoint){.host = want + z * slice, .host_size = slice}, extent,
                stream));
        }
        assert_ok(cugl_stream_sync(stream));
        /* The whole array holds them in order. */
        unsigned char *got = download(a);
        expect_bytes(got, want, slice * cases[i].slices, cases[i].what);
        /* And each comes back out of its own index. */
        for (size_t z = 0; z < cases[i].slices; z++) {
            const size_t extent[3] = {d->shape[0], h, 1};
            memset(got, 0, slice);
            assert_ok(cugl_array_copy_region(
                &(cugl_copy_endpoint){.host = got, .host_size = slice},
                &(cugl_copy_endpoint){.array = a, .offset = {0, 0, z}}, extent, stream));
            assert_ok(cugl_stream_sync(stream));
            char what[96];
            snprintf(what, sizeof what, "%s, slice %zu", cases[i].what, z);
            expect_bytes(got, want + z * slice, slice, what);
        }
        free(got);
        free(want);
        cugl_array_release(a);
    }
}

/* ---- lifetime -------------------------------------------------------------- */

/* A level does not own its memory: closing it leaves the data in the mipmap. */
static void closing_a_level_frees_nothing(void **state)
{
    (void)state;
    cugl_mipmapped_array *m = new_mipmap(
        &(cugl_array_desc){.ndim = 2, .shape = {24, 24}, .format = CUGL_FORMAT_U16,
                           .num_channels = 2},
        3);
    cugl_array *level = NULL;
    assert_ok(cugl_mipmapped_array_get_level(&level, m, 1));
    size_t n = cugl_array_size_bytes(level);
    unsigned char *want = xmalloc(n);
    pattern(want, n, 800);
    upload(level, want);
    cugl_array_close(level);
    cugl_array_close(level); /* idempotent */
    assert_true(cugl_array_is_closed(level));
    cugl_array_release(level);
    assert_false(cugl_mipmapped_array_is_closed(m));
    level = NULL;
    assert_ok(cugl_mipmapped_array_get_level(&level, m, 1));
    unsigned char *got = download(level);
    expect_bytes(got, want, n, "level 1, through a second level object");
    free(got);
    free(want);
    cugl_array_release(level);
    cugl_mipmapped_array_release(m);
}

static void closed_array_refuses_everything(void **state)
{
    (void)state;
    const cugl_array_desc d = {.ndim = 2, .shape = {8, 8}, .format = CUGL_FORMAT_F32};
    cugl_array *a = new_array(&d);
    cugl_array *b = new_array(&d);
    cugl_array_retain(a);
    cugl_array_close(a);
    cugl_array_close(a); /* idempotent */
    assert_true(cugl_array_is_closed(a));
    assert_null(cugl_array_handle(a));
    /* What it was stays readable. */
    assert_int_equal(cugl_array_size_bytes(a), 256);
    assert_int_equal(cugl_array_ndim(a), 2);
    unsigned char bytes[256];
    cugl_buffer *buf = new_buffer(device_mr, 256);
    assert_status(cugl_array_copy_from_host(a, bytes, sizeof bytes, stream), CUGL_ERROR_CLOSED);
    expect_message("cugl_array_copy_from_host: the array has been closed");
    assert_status(cugl_array_copy_to_host(bytes, sizeof bytes, a, stream), CUGL_ERROR_CLOSED);
    assert_status(cugl_array_copy_from_buffer(a, buf, stream), CUGL_ERROR_CLOSED);
    assert_status(cugl_array_copy_to_buffer(buf, a, stream), CUGL_ERROR_CLOSED);
    assert_status(cugl_array_copy_region(&(cugl_copy_endpoint){.array = b},
                                         &(cugl_copy_endpoint){.array = a},
                                         (const size_t[3]){8, 8, 1}, stream),
                  CUGL_ERROR_CLOSED);
    expect_message("cugl_array_copy_region: the array has been closed");
    cugl_array_release(a);
    cugl_array_release(a); /* the last reference frees the closed array */
    cugl_buffer_release(buf);
    cugl_array_release(b);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    if (cugl_device_get_properties(dev, &props) != CUGL_OK ||
        cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_device_memory_resource_create(&device_mr, dev, NULL) != CUGL_OK ||
        cugl_pinned_memory_resource_create(&pinned_mr, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trips_every_format_channels_rank),
        cmocka_unit_test(round_trips_through_managed_and_host_only_buffers),
        cmocka_unit_test(undersized_sides_are_refused),
        cmocka_unit_test(extents_beyond_the_device_limits_are_refused),
        cmocka_unit_test(region_copies_match_a_host_model),
        cmocka_unit_test(region_bounds_are_refused),
        cmocka_unit_test(mipmap_levels_halve_with_floor_one),
        cmocka_unit_test(level_outlives_its_released_parent),
        cmocka_unit_test(closing_the_mipmap_closes_its_levels),
        cmocka_unit_test(layers_and_faces_round_trip_one_by_one),
        cmocka_unit_test(closing_a_level_frees_nothing),
        cmocka_unit_test(closed_array_refuses_everything),
    };
    int rc = cugl_test_run(tests);
    cugl_memory_resource_release(pinned_mr);
    cugl_memory_resource_release(device_mr);
    cugl_stream_release(stream);
    return rc;
}
