/*
 * cugl's array copy kernels against the driver's own cuMemcpy3D, byte for
 * byte: every format x channel count x kind of array (1D, 2D, 3D, layered
 * 1D and 2D, cube map, layered cube map), through each way the kernels
 * reach an array (see access). Whole arrays both ways; regions at offsets into pitched buffers,
 * with the bytes around them compared too; pitches the kernels cannot
 * take (the driver's copy then); pageable host memory large enough to go
 * through device memory. The bytes are random, so the float formats carry
 * NaNs with payloads, infinities and subnormals, which must survive.
 */
#include "gpu_kernels.h"
#include "core_internal.h"

static cugl_device *dev;
static cugl_stream *stream;
static cugl_memory_resource *device_mr;

typedef struct kind {
    const char *name;
    int ndim;
    size_t shape[3];
    size_t layers;
    bool cube;
} kind;

/* Odd sizes, so that no block's tile fits a side exactly; cube faces of a
 * size that is not a power of two, so that the directions through texel
 * centres are not exact binary fractions. Then rows of whole 16-byte
 * pieces for every element size, which move 16 bytes at a time. */
static const kind kinds[] = {
    {"1D", 1, {301}, 0, false},
    {"2D", 2, {37, 19}, 0, false},
    {"3D", 3, {37, 19, 5}, 0, false},
    {"1D layered", 1, {301}, 3, false},
    {"2D layered", 2, {37, 19}, 3, false},
    {"cube", 2, {13, 13}, 0, true},
    {"layered cube", 2, {13, 13}, 2, true},
    {"wide 1D", 1, {512}, 0, false},
    {"wide 2D", 2, {96, 19}, 0, false},
    {"wide 3D", 3, {64, 7, 5}, 0, false},
    {"wide 1D layered", 1, {256}, 3, false},
    {"wide 2D layered", 2, {64, 9}, 3, false},
    {"wide cube", 2, {48, 48}, 0, true},
    {"wide layered cube", 2, {32, 32}, 2, true},
};

static const int channel_counts[] = {1, 2, 4};

static void random_bytes(void *dst, size_t n, uint64_t seed)
{
    unsigned char *p = dst;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 32);
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

static void same_bytes(const void *got, const void *want, size_t n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i])
            fail_msg("%s: byte %zu of %zu is 0x%02x, the driver's copy gives 0x%02x", what, i,
                     n, g[i], w[i]);
}

/*
 * How the kernels reach an array: through a surface the caller asked for;
 * through the surface cugl_array_create adds on its own (the caller's
 * surface_load_store stays false); or, as for an array whose driver array
 * lacks the flag (GL's, or one past the device's surface limits), reads
 * through a texture and writes by the driver.
 */
typedef enum access { ACCESS_SURFACE, ACCESS_DEFAULT, ACCESS_TEXTURE, ACCESS_COUNT } access;
static const char *const access_name[] = {"surface asked for", "default", "texture only"};

static cugl_array *new_array(const kind *k, cugl_format f, int channels, access acc)
{
    cugl_array_desc d = {.ndim = k->ndim, .format = f, .num_channels = channels,
                         .surface_load_store = acc == ACCESS_SURFACE, .layers = k->layers,
                         .cubemap = k->cube};
    memcpy(d.shape, k->shape, sizeof d.shape);
    cugl_array *a = NULL;
    assert_ok(cugl_array_create(&a, dev, &d));
    assert_true(a->ldst); /* every shape here is within the surface limits */
    assert_int_equal(cugl_array_is_surface_load_store(a), acc == ACCESS_SURFACE);
    if (acc == ACCESS_TEXTURE)
        a->ldst = false;
    return a;
}

static void extent_of(const cugl_array *a, size_t e[3])
{
    size_t s[3];
    cugl_array_shape(a, s);
    e[0] = s[0];
    e[1] = cugl_array_ndim(a) >= 2 ? s[1] : 1;
    e[2] = cugl_array_ndim(a) == 3 ? s[2] : 1;
    if (cugl_array_layers(a) || cugl_array_is_cubemap(a))
        e[2] = (cugl_array_is_cubemap(a) ? 6 : 1) *
               (cugl_array_layers(a) ? cugl_array_layers(a) : 1);
}

/* One side of a driver copy: linear memory (host or device) or the array. */
typedef struct side {
    cugl_array *array;
    CUdeviceptr device;
    void *host;
    size_t pitch, rows; /* linear */
    size_t offset[3];   /* elements (x), rows, slices */
} side;

static void set_side(const side *s, size_t elem, CUmemorytype *type, void **host,
                     CUdeviceptr *device, CUarray *array, size_t *pitch, size_t *height,
                     size_t *x, size_t *y, size_t *z)
{
    *x = s->offset[0] * elem;
    *y = s->offset[1];
    *z = s->offset[2];
    if (s->array) {
        *type = CU_MEMORYTYPE_ARRAY;
        *array = (CUarray)cugl_array_handle(s->array);
    } else if (s->host) {
        *type = CU_MEMORYTYPE_HOST;
        *host = s->host;
        *pitch = s->pitch;
        *height = s->rows;
    } else {
        *type = CU_MEMORYTYPE_DEVICE;
        *device = s->device;
        *pitch = s->pitch;
        *height = s->rows;
    }
}

/* The driver's copy of `extent` elements of `elem` bytes, then a wait. The
 * driver steps between the layers of a layered 1-D array by the pitch
 * times the copy's height (1), not by the linear side's rows: such a
 * linear side is given as one row per layer, as cugl does. */
static void driver_copy(const side *dst_in, const side *src_in, size_t elem,
                        const size_t extent[3])
{
    side dst = *dst_in, src = *src_in;
    side *lin = dst.array ? &src : &dst;
    const cugl_array *a = dst.array ? dst.array : src.array;
    if (cugl_array_ndim(a) == 1 && cugl_array_layers(a)) {
        size_t skip = (lin->offset[2] * lin->rows + lin->offset[1]) * lin->pitch;
        if (lin->host)
            lin->host = (char *)lin->host + skip;
        else
            lin->device += skip;
        lin->pitch *= lin->rows;
        lin->rows = 1;
        lin->offset[1] = lin->offset[2] = 0;
    }
    assert_ok(cugl_stream_sync(stream));
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    set_side(&src, elem, &c.srcMemoryType, (void **)&c.srcHost, &c.srcDevice, &c.srcArray,
             &c.srcPitch, &c.srcHeight, &c.srcXInBytes, &c.srcY, &c.srcZ);
    set_side(&dst, elem, &c.dstMemoryType, &c.dstHost, &c.dstDevice, &c.dstArray, &c.dstPitch,
             &c.dstHeight, &c.dstXInBytes, &c.dstY, &c.dstZ);
    c.WidthInBytes = extent[0] * elem;
    c.Height = extent[1];
    c.Depth = extent[2];
    gpu_copy3d(&c);
}

/* The whole array as the driver reads it. */
static void driver_download(cugl_array *a, void *host)
{
    size_t e[3];
    extent_of(a, e);
    size_t elem = cugl_array_element_size(a);
    side d = {.host = host, .pitch = e[0] * elem, .rows = e[1]}, s = {.array = a};
    driver_copy(&d, &s, elem, e);
}

static void driver_upload(cugl_array *a, const void *host)
{
    size_t e[3];
    extent_of(a, e);
    size_t elem = cugl_array_element_size(a);
    side d = {.array = a}, s = {.host = (void *)(uintptr_t)host, .pitch = e[0] * elem,
                                .rows = e[1]};
    driver_copy(&d, &s, elem, e);
}

static CUdeviceptr ptr_of(const cugl_buffer *b)
{
    return (CUdeviceptr)cugl_buffer_handle(b);
}

static cugl_buffer *device_buffer(size_t n)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, device_mr, n, stream));
    assert_ok(cugl_stream_sync(stream));
    return b;
}

/* ---- whole arrays ----------------------------------------------------- */

static void whole_array_one(const kind *k, cugl_format f, int ch, access acc, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "%s %s x%d (%s)", k->name, cugl_format_name(f), ch,
             access_name[acc]);
    cugl_array *a = new_array(k, f, ch, acc);
    size_t n = cugl_array_size_bytes(a);
    unsigned char *want = xmalloc(n), *got = xmalloc(n);
    cugl_buffer *b = device_buffer(n);

    /* Array to buffer: texture or surface reads. */
    random_bytes(want, n, seed);
    driver_upload(a, want);
    gpu_fill_u32(ptr_of(b), 0xdeadbeef, n / 4);
    assert_ok(cugl_array_copy_to_buffer(b, a, stream));
    assert_ok(cugl_stream_sync(stream));
    gpu_read(got, ptr_of(b), n);
    char step[200];
    snprintf(step, sizeof step, "%s: array to device buffer", what);
    same_bytes(got, want, n, step);

    /* Buffer to array: surface writes, or the driver's copy. */
    random_bytes(want, n, seed + 1);
    gpu_write(ptr_of(b), want, n);
    assert_ok(cugl_array_copy_from_buffer(a, b, stream));
    assert_ok(cugl_stream_sync(stream));
    memset(got, 0, n);
    driver_download(a, got);
    snprintf(step, sizeof step, "%s: device buffer to array", what);
    same_bytes(got, want, n, step);

    cugl_buffer_release(b);
    cugl_array_release(a);
    free(want);
    free(got);
}

static void whole_arrays_match_the_driver(void **state)
{
    (void)state;
    uint64_t seed = 1;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++)
            for (int c = 0; c < 3; c++)
                for (int acc = 0; acc < ACCESS_COUNT; acc++, seed += 2)
                    whole_array_one(&kinds[k], (cugl_format)f, channel_counts[c], (access)acc,
                                    seed);
}

/* ---- regions ------------------------------------------------------------ */

/*
 * A region at an offset in the array, to and from a pitched buffer at an
 * offset of its own; the same copy by the driver into a twin; every byte
 * of both buffers (or arrays) compared. `pad` bytes widen the pitch: a pad
 * that is not a whole number of elements makes the kernels step aside.
 */
static void region_one(const kind *k, cugl_format f, int ch, access acc, size_t pad,
                       uint64_t seed)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s x%d (%s), pitch pad %zu", k->name, cugl_format_name(f),
             ch, access_name[acc], pad);
    cugl_array *a = new_array(k, f, ch, acc), *twin = new_array(k, f, ch, acc);
    size_t elem = cugl_array_element_size(a), full[3], off[3], ext[3];
    extent_of(a, full);
    /* Wide kinds: x offsets and extents of whole 16-byte pieces. */
    bool wide = strncmp(k->name, "wide", 4) == 0;
    for (int i = 0; i < 3; i++) {
        off[i] = full[i] > 2 ? 1 + (full[i] > 6) : 0;
        ext[i] = full[i] - off[i] - (full[i] > 6);
    }
    size_t lin_off[3] = {2, 1, 1}, pitch_extra = 3;
    if (wide) {
        off[0] = 16;
        ext[0] = full[0] - (full[0] > 32 ? 32 : 16);
        lin_off[0] = 16;
        pitch_extra = 16;
    }
    size_t pitch = (ext[0] + lin_off[0] + pitch_extra) * elem + pad;
    size_t rows = ext[1] + lin_off[1] + 2;
    size_t n = pitch * rows * (ext[2] + lin_off[2]);
    cugl_buffer *b = device_buffer(n), *bt = device_buffer(n);
    size_t an = cugl_array_size_bytes(a);
    unsigned char *arr = xmalloc(an), *lin = xmalloc(n), *got = xmalloc(n > an ? n : an),
                  *want = xmalloc(n > an ? n : an);
    char step[260];

    /* Array to buffer. */
    random_bytes(arr, an, seed);
    random_bytes(lin, n, seed + 1);
    driver_upload(a, arr);
    gpu_write(ptr_of(b), lin, n);
    gpu_write(ptr_of(bt), lin, n);
    cugl_copy_endpoint dst = {.buffer = b, .pitch = pitch, .rows = rows};
    cugl_copy_endpoint src = {.array = a};
    memcpy(dst.offset, lin_off, sizeof lin_off);
    memcpy(src.offset, off, sizeof off);
    assert_ok(cugl_array_copy_region(&dst, &src, ext, stream));
    side ds = {.device = ptr_of(bt), .pitch = pitch, .rows = rows}, ss = {.array = a};
    memcpy(ds.offset, lin_off, sizeof lin_off);
    memcpy(ss.offset, off, sizeof off);
    driver_copy(&ds, &ss, elem, ext);
    assert_ok(cugl_stream_sync(stream));
    gpu_read(got, ptr_of(b), n);
    gpu_read(want, ptr_of(bt), n);
    snprintf(step, sizeof step, "%s: region to buffer", what);
    same_bytes(got, want, n, step);

    /* Buffer to array. */
    random_bytes(arr, an, seed + 2);
    driver_upload(a, arr);
    driver_upload(twin, arr);
    cugl_copy_endpoint rd = {.array = a};
    cugl_copy_endpoint rs = {.buffer = b, .pitch = pitch, .rows = rows};
    memcpy(rd.offset, off, sizeof off);
    memcpy(rs.offset, lin_off, sizeof lin_off);
    assert_ok(cugl_array_copy_region(&rd, &rs, ext, stream));
    side td = {.array = twin}, ts = {.device = ptr_of(b), .pitch = pitch, .rows = rows};
    memcpy(td.offset, off, sizeof off);
    memcpy(ts.offset, lin_off, sizeof lin_off);
    driver_copy(&td, &ts, elem, ext);
    driver_download(a, got);
    driver_download(twin, want);
    snprintf(step, sizeof step, "%s: region from buffer", what);
    same_bytes(got, want, an, step);

    cugl_buffer_release(b);
    cugl_buffer_release(bt);
    cugl_array_release(a);
    cugl_array_release(twin);
    free(arr);
    free(lin);
    free(got);
    free(want);
}

static void regions_match_the_driver(void **state)
{
    (void)state;
    /* Element sizes 1, 2, 4, 8 and 16, integer and float. */
    static const struct {
        cugl_format f;
        int ch;
    } types[] = {{CUGL_FORMAT_U8, 1}, {CUGL_FORMAT_I16, 1}, {CUGL_FORMAT_F16, 2},
                 {CUGL_FORMAT_F32, 2}, {CUGL_FORMAT_I32, 4}, {CUGL_FORMAT_F16, 4}};
    uint64_t seed = 7;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int acc = 0; acc < ACCESS_COUNT; acc++)
                for (size_t pad = 0; pad <= 1; pad++, seed += 3)
                    region_one(&kinds[k], types[t].f, types[t].ch, (access)acc,
                               pad * (types[t].ch > 1 ? 3 : 1), seed);
}

/* ---- pageable host memory, through device memory ------------------------ */

static void pageable_host_goes_through_device_memory(void **state)
{
    (void)state;
    /* 2 MiB and more: past the size that is staged. */
    static const kind big = {"2D", 2, {521, 1031}, 0, false};
    for (int s = 0; s < ACCESS_COUNT; s++)
        for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++) {
            cugl_array *a = new_array(&big, (cugl_format)f, 4, (access)s);
            size_t n = cugl_array_size_bytes(a);
            assert_true(n >= ((size_t)2 << 20));
            unsigned char *want = xmalloc(n), *got = xmalloc(n);
            char what[120];

            random_bytes(want, n, (uint64_t)(100 + 2 * f + s));
            assert_ok(cugl_array_copy_from_host(a, want, n, stream));
            assert_ok(cugl_stream_sync(stream));
            driver_download(a, got);
            snprintf(what, sizeof what, "%s x4 (%s): from pageable host", cugl_format_name(f),
                     access_name[s]);
            same_bytes(got, want, n, what);

            random_bytes(want, n, (uint64_t)(200 + 2 * f + s));
            driver_upload(a, want);
            memset(got, 0, n);
            assert_ok(cugl_array_copy_to_host(got, n, a, stream));
            assert_ok(cugl_stream_sync(stream));
            snprintf(what, sizeof what, "%s x4 (%s): to pageable host", cugl_format_name(f),
                     access_name[s]);
            same_bytes(got, want, n, what);

            cugl_array_release(a);
            free(want);
            free(got);
        }
}

/* A closed array's objects go with it; a new array at the same place gets
 * its own (a stale object would read the old array or fault). */
static void objects_die_with_the_array(void **state)
{
    (void)state;
    cugl_array_desc d = {.ndim = 2, .shape = {64, 64}, .format = CUGL_FORMAT_U32,
                         .surface_load_store = true};
    size_t n = 64 * 64 * 4;
    unsigned char *want = xmalloc(n), *got = xmalloc(n);
    cugl_buffer *b = device_buffer(n);
    for (int round = 0; round < 50; round++) {
        cugl_array *a = NULL;
        assert_ok(cugl_array_create(&a, dev, &d));
        random_bytes(want, n, (uint64_t)(300 + round));
        gpu_write(ptr_of(b), want, n);
        assert_ok(cugl_array_copy_from_buffer(a, b, stream));
        assert_ok(cugl_stream_sync(stream)); /* before the fill, on another stream */
        gpu_fill_u32(ptr_of(b), 0, n / 4);
        assert_ok(cugl_array_copy_to_buffer(b, a, stream));
        assert_ok(cugl_stream_sync(stream));
        gpu_read(got, ptr_of(b), n);
        same_bytes(got, want, n, "round trip through a new array (bytes written)");
        cugl_array_close(a);
        assert_int_equal(cugl_array_copy_to_buffer(b, a, stream), CUGL_ERROR_CLOSED);
        cugl_array_release(a);
    }
    cugl_buffer_release(b);
    free(want);
    free(got);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_device_memory_resource_create(&device_mr, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_arrays_match_the_driver),
        cmocka_unit_test(regions_match_the_driver),
        cmocka_unit_test(pageable_host_goes_through_device_memory),
        cmocka_unit_test(objects_die_with_the_array),
    };
    int rc = cugl_test_run(tests);
    cugl_memory_resource_release(device_mr);
    cugl_stream_release(stream);
    return rc;
}
