/*
 * Validation of arrays, mipmapped arrays and array copies that happens
 * before the driver is touched: one case per branch, each with its status
 * and its exact message. Limits, bounds against real arrays and buffers,
 * and closed objects need a device: see tests/gpu/test_array.c.
 */
#include "cugl_test.h"

/*
 * Stand-ins for objects that only a GPU can make. They are never
 * dereferenced: in each case that uses one, the check that refuses the
 * call comes before anything reads the object.
 */
static int sentinel;
#define FAKE_DEVICE ((cugl_device *)&sentinel)
#define FAKE_BUFFER ((cugl_buffer *)&sentinel)

static cugl_array *array;
static cugl_mipmapped_array *mipmap;
static cugl_array_desc level;
static unsigned char bytes[64];
static const cugl_array_desc good = {.ndim = 2, .shape = {64, 32}, .format = CUGL_FORMAT_F32};
static const size_t extent[3] = {4, 4, 1};

#define CASE CUGL_TEST_CASE
#define ROW CUGL_TEST_ROW

#define BAD CUGL_ERROR_INVALID_ARGUMENT
/* A desc validated on its own; the parentheses keep the commas of the
 * compound literal inside one macro argument. */
#define VALIDATE(...) (cugl_array_desc_validate(&(cugl_array_desc){__VA_ARGS__}))
#define F32 .format = CUGL_FORMAT_F32

/* X(id, expr, status, message) */
#define DESC_CASES(X)                                                                           \
    X(d01, cugl_array_desc_validate(NULL), BAD, "cugl_array_desc_validate: desc is NULL")       \
    X(d02, VALIDATE(.ndim = 0, F32), BAD,                                                       \
      "cugl_array_desc_validate: ndim 0 is not 1, 2 or 3 (the rank of the shape)")              \
    X(d03, VALIDATE(.ndim = 4, .shape = {1, 1, 1}, F32), BAD,                                   \
      "cugl_array_desc_validate: ndim 4 is not 1, 2 or 3 (the rank of the shape)")              \
    X(d04, VALIDATE(.ndim = -1, F32), BAD,                                                      \
      "cugl_array_desc_validate: ndim -1 is not 1, 2 or 3 (the rank of the shape)")             \
    X(d05, VALIDATE(.ndim = 1, F32), BAD,                                                       \
      "cugl_array_desc_validate: shape[0] is 0; each of the 1 extents must be >= 1")            \
    X(d06, VALIDATE(.ndim = 3, .shape = {4, 4, 0}, F32), BAD,                                   \
      "cugl_array_desc_validate: shape[2] is 0; each of the 3 extents must be >= 1")            \
    X(d07, VALIDATE(.ndim = 2, .shape = {4, 4, 5}, F32), BAD,                                   \
      "cugl_array_desc_validate: shape[2] is 5 but ndim is 2; extents past ndim must be 0")     \
    X(d08, VALIDATE(.ndim = 1, .shape = {4, 3}, F32), BAD,                                      \
      "cugl_array_desc_validate: shape[1] is 3 but ndim is 1; extents past ndim must be 0")     \
    X(d09, VALIDATE(.ndim = 1, .shape = {4}), BAD,                                              \
      "cugl_array_desc_validate: format 0 is not a cugl_format (CUGL_FORMAT_U8 to "             \
      "CUGL_FORMAT_F32)")                                                                       \
    X(d10, VALIDATE(.ndim = 1, .shape = {4}, .format = (cugl_format)9), BAD,                    \
      "cugl_array_desc_validate: format 9 is not a cugl_format (CUGL_FORMAT_U8 to "             \
      "CUGL_FORMAT_F32)")                                                                       \
    X(d11, VALIDATE(.ndim = 2, .shape = {4, 4}, F32, .num_channels = 3), BAD,                   \
      "cugl_array_desc_validate: num_channels 3 is not supported: arrays have 1, 2 or 4 "       \
      "channels (store RGB as 4 channels)")                                                     \
    X(d12, VALIDATE(.ndim = 2, .shape = {4, 4}, F32, .num_channels = 5), BAD,                   \
      "cugl_array_desc_validate: num_channels 5 is not 1, 2 or 4")                              \
    X(d13, VALIDATE(.ndim = 2, .shape = {4, 4}, F32, .num_channels = -1), BAD,                  \
      "cugl_array_desc_validate: num_channels -1 is not 1, 2 or 4")                             \
    X(d14, VALIDATE(.ndim = 3, .shape = {4, 4, 4}, F32, .layers = 2), BAD,                      \
      "cugl_array_desc_validate: layers is 2 but ndim is 3; a layered array is a stack of 1D "  \
      "or 2D images")                                                                           \
    X(d15, VALIDATE(.ndim = 1, .shape = {4}, F32, .cubemap = true), BAD,                        \
      "cugl_array_desc_validate: a cube map has ndim 2 (square faces), not 1")                  \
    X(d16, VALIDATE(.ndim = 3, .shape = {4, 4, 6}, F32, .cubemap = true), BAD,                  \
      "cugl_array_desc_validate: a cube map has ndim 2 (square faces), not 3")                  \
    X(d17, VALIDATE(.ndim = 2, .shape = {8, 4}, F32, .cubemap = true, .layers = 2), BAD,        \
      "cugl_array_desc_validate: a cube map's faces are square, but the shape is 8x4")          \
    X(d18, VALIDATE(.ndim = 2, .shape = {SIZE_MAX / 2, 4}, F32), BAD,                           \
      "cugl_array_desc_validate: the array's size in bytes overflows size_t")                   \
    X(d19, VALIDATE(.ndim = 2, .shape = {1u << 20, 1u << 20}, F32, .layers = SIZE_MAX / 4),     \
      BAD,                                                                                      \
      "cugl_array_desc_validate: the array's size in bytes overflows size_t")

#define MIP(levels, ...)                                                                        \
    (cugl_mipmapped_array_desc_validate(&(cugl_array_desc){__VA_ARGS__}, levels))

#define CREATE_CASES(X)                                                                         \
    X(c01, cugl_array_create(NULL, FAKE_DEVICE, &good), BAD, "cugl_array_create: out is NULL")  \
    X(c02, cugl_array_create(&array, NULL, &good), BAD, "cugl_array_create: device is NULL")    \
    X(c03, cugl_array_create(&array, FAKE_DEVICE, NULL), BAD,                                   \
      "cugl_array_create: desc is NULL")                                                        \
    X(c04,                                                                                      \
      (cugl_array_create(&array, FAKE_DEVICE,                                                   \
                         &(cugl_array_desc){.ndim = 1, .shape = {4}, F32, .num_channels = 3})), \
      BAD,                                                                                      \
      "cugl_array_create: num_channels 3 is not supported: arrays have 1, 2 or 4 channels "     \
      "(store RGB as 4 channels)")                                                              \
    X(c05,                                                                                      \
      (cugl_array_create(&array, FAKE_DEVICE, &(cugl_array_desc){.ndim = 1, .shape = {4}})),    \
      BAD,                                                                                      \
      "cugl_array_create: format 0 is not a cugl_format (CUGL_FORMAT_U8 to CUGL_FORMAT_F32)")   \
    X(m01, MIP(0, .ndim = 2, .shape = {64, 32}, F32), BAD,                                      \
      "cugl_mipmapped_array_desc_validate: num_levels is 0; it must be >= 1")                   \
    X(m02, MIP(8, .ndim = 2, .shape = {64, 32}, F32), BAD,                                      \
      "cugl_mipmapped_array_desc_validate: num_levels 8 exceeds the 7 levels of a shape whose " \
      "largest extent is 64 (halving until 1)")                                                 \
    X(m03, MIP(2, .ndim = 1, .shape = {1}, F32), BAD,                                           \
      "cugl_mipmapped_array_desc_validate: num_levels 2 exceeds the 1 level of a shape whose "  \
      "largest extent is 1 (halving until 1)")                                                  \
    X(m04, MIP(6, .ndim = 3, .shape = {5, 9, 17}, F32), BAD,                                    \
      "cugl_mipmapped_array_desc_validate: num_levels 6 exceeds the 5 levels of a shape whose " \
      "largest extent is 17 (halving until 1)")                                                 \
    X(m05, MIP(4, .ndim = 2, .shape = {4, 4}, F32, .layers = 64), BAD,                          \
      "cugl_mipmapped_array_desc_validate: num_levels 4 exceeds the 3 levels of a shape whose " \
      "largest extent is 4 (halving until 1)")                                                  \
    X(m06, cugl_mipmapped_array_desc_validate(NULL, 1), BAD,                                    \
      "cugl_mipmapped_array_desc_validate: desc is NULL")                                       \
    X(m07, MIP(1, .ndim = 2, .shape = {4, 4}, F32, .num_channels = 3), BAD,                     \
      "cugl_mipmapped_array_desc_validate: num_channels 3 is not supported: arrays have 1, 2 "  \
      "or 4 channels (store RGB as 4 channels)")                                                \
    X(m08, cugl_mipmapped_array_create(NULL, FAKE_DEVICE, &good, 1), BAD,                       \
      "cugl_mipmapped_array_create: out is NULL")                                               \
    X(m09, cugl_mipmapped_array_create(&mipmap, NULL, &good, 1), BAD,                           \
      "cugl_mipmapped_array_create: device is NULL")                                            \
    X(m10, cugl_mipmapped_array_create(&mipmap, FAKE_DEVICE, &good, 0), BAD,                    \
      "cugl_mipmapped_array_create: num_levels is 0; it must be >= 1")                          \
    X(m11, cugl_mipmapped_array_create(&mipmap, FAKE_DEVICE, &good, 9), BAD,                    \
      "cugl_mipmapped_array_create: num_levels 9 exceeds the 7 levels of a shape whose "        \
      "largest extent is 64 (halving until 1)")                                                 \
    X(m12, cugl_mipmapped_array_get_level(NULL, mipmap, 0), BAD,                                \
      "cugl_mipmapped_array_get_level: out is NULL")                                            \
    X(m13, cugl_mipmapped_array_get_level(&array, NULL, 0), BAD,                                \
      "cugl_mipmapped_array_get_level: mipmap is NULL")                                         \
    X(m14, cugl_mipmapped_array_level_desc(NULL, 0, &level), BAD,                               \
      "cugl_mipmapped_array_level_desc: mipmap is NULL")

#define HOST(...) (&(cugl_copy_endpoint){.host = bytes, .host_size = sizeof bytes, __VA_ARGS__})
#define REGION(dst, src, ext) (cugl_array_copy_region(dst, src, ext, NULL))

#define COPY_CASES(X)                                                                           \
    X(r01, REGION(NULL, HOST(), extent), BAD, "cugl_array_copy_region: dst is NULL")            \
    X(r02, REGION(HOST(), NULL, extent), BAD, "cugl_array_copy_region: src is NULL")            \
    X(r03, REGION(&(cugl_copy_endpoint){.host_size = 4}, HOST(), extent), BAD,                  \
      "cugl_array_copy_region: dst sets none of array, buffer and host; set exactly one")       \
    X(r04, REGION(HOST(), HOST(.buffer = FAKE_BUFFER), extent), BAD,                            \
      "cugl_array_copy_region: src sets more than one of array, buffer and host; set exactly "  \
      "one")                                                                                    \
    X(r05, REGION(HOST(), HOST(), NULL), BAD, "cugl_array_copy_region: extent is NULL")         \
    X(r06, REGION(HOST(), HOST(), ((const size_t[3]){4, 0, 1})), BAD,                           \
      "cugl_array_copy_region: extent[1] is 0; every extent must be >= 1 (1 for unused axes)")  \
    X(r07, REGION(HOST(), HOST(), ((const size_t[3]){4, 4, 0})), BAD,                           \
      "cugl_array_copy_region: extent[2] is 0; every extent must be >= 1 (1 for unused axes)")  \
    X(r08, REGION(HOST(), HOST(.pitch = 16), extent), BAD,                                      \
      "cugl_array_copy_region: neither dst nor src is an array; copy between buffers with "     \
      "cugl_buffer_copy_from")                                                                  \
    X(f01, cugl_array_copy_from_host(NULL, bytes, sizeof bytes, NULL), BAD,                     \
      "cugl_array_copy_from_host: array is NULL")                                               \
    X(f02, cugl_array_copy_to_host(NULL, sizeof bytes, array, NULL), BAD,                       \
      "cugl_array_copy_to_host: dst is NULL")                                                   \
    X(f03, cugl_array_copy_to_host(bytes, sizeof bytes, NULL, NULL), BAD,                       \
      "cugl_array_copy_to_host: array is NULL")                                                 \
    X(f04, cugl_array_copy_from_buffer(NULL, FAKE_BUFFER, NULL), BAD,                           \
      "cugl_array_copy_from_buffer: array is NULL")                                             \
    X(f05, cugl_array_copy_to_buffer(NULL, array, NULL), BAD,                                   \
      "cugl_array_copy_to_buffer: buffer is NULL")

DESC_CASES(CASE)
CREATE_CASES(CASE)
COPY_CASES(CASE)

static void bad_descs_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {DESC_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void bad_creations_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {CREATE_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void bad_copies_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {COPY_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

/* Every format x channel count x rank, and every layered and cube kind, passes. */
static void good_descs_pass(void **state)
{
    (void)state;
    static const int channels[] = {0, 1, 2, 4};
    static const size_t shapes[3][3] = {{7}, {7, 5}, {7, 5, 3}};
    for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++)
        for (size_t c = 0; c < 4; c++)
            for (int ndim = 1; ndim <= 3; ndim++) {
                cugl_array_desc d = {.ndim = ndim, .format = (cugl_format)f,
                                     .num_channels = channels[c]};
                memcpy(d.shape, shapes[ndim - 1], sizeof d.shape);
                cugl_status st = cugl_array_desc_validate(&d);
                if (st != CUGL_OK)
                    fail_msg("format %s, %d channels, ndim %d: %s", cugl_format_name(d.format),
                             channels[c], ndim, cugl_last_error());
            }
    static const cugl_array_desc kinds[] = {
        {.ndim = 1, .shape = {16}, F32, .layers = 3},
        {.ndim = 2, .shape = {16, 8}, F32, .layers = 1},
        {.ndim = 2, .shape = {16, 16}, F32, .cubemap = true},
        {.ndim = 2, .shape = {16, 16}, F32, .cubemap = true, .layers = 2},
        {.ndim = 2, .shape = {16, 16}, F32, .surface_load_store = true},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        assert_ok(cugl_array_desc_validate(&kinds[i]));
    assert_ok(MIP(7, .ndim = 2, .shape = {64, 32}, F32));
    assert_ok(MIP(1, .ndim = 1, .shape = {1}, F32));
    assert_ok(MIP(5, .ndim = 3, .shape = {5, 9, 17}, F32));
    assert_ok(MIP(3, .ndim = 2, .shape = {4, 4}, F32, .layers = 64));
    assert_ok(MIP(5, .ndim = 2, .shape = {16, 16}, F32, .cubemap = true));
}

static void formats_have_names_and_sizes(void **state)
{
    (void)state;
    static const struct {
        cugl_format format;
        const char *name;
        size_t size;
    } table[] = {
        {CUGL_FORMAT_U8, "u8", 1},   {CUGL_FORMAT_U16, "u16", 2}, {CUGL_FORMAT_U32, "u32", 4},
        {CUGL_FORMAT_I8, "i8", 1},   {CUGL_FORMAT_I16, "i16", 2}, {CUGL_FORMAT_I32, "i32", 4},
        {CUGL_FORMAT_F16, "f16", 2}, {CUGL_FORMAT_F32, "f32", 4},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        assert_string_equal(cugl_format_name(table[i].format), table[i].name);
        assert_int_equal(cugl_format_size(table[i].format), table[i].size);
    }
    assert_string_equal(cugl_format_name((cugl_format)0), "invalid");
    assert_int_equal(cugl_format_size((cugl_format)0), 0);
    assert_string_equal(cugl_format_name((cugl_format)42), "invalid");
    assert_int_equal(cugl_format_size((cugl_format)-1), 0);
}

/* Getters of NULL answer "nothing"; close and release of NULL are no-ops. */
static void null_objects(void **state)
{
    (void)state;
    size_t shape[3] = {1, 2, 3};
    cugl_array_shape(NULL, shape);
    assert_true(shape[0] == 0 && shape[1] == 0 && shape[2] == 0);
    assert_int_equal(cugl_array_ndim(NULL), 0);
    assert_int_equal(cugl_array_layers(NULL), 0);
    assert_false(cugl_array_is_cubemap(NULL));
    assert_int_equal(cugl_array_format(NULL), 0);
    assert_int_equal(cugl_array_num_channels(NULL), 0);
    assert_false(cugl_array_is_surface_load_store(NULL));
    assert_int_equal(cugl_array_element_size(NULL), 0);
    assert_int_equal(cugl_array_size_bytes(NULL), 0);
    assert_null(cugl_array_handle(NULL));
    assert_null(cugl_array_device(NULL));
    assert_true(cugl_array_is_closed(NULL));
    assert_null(cugl_array_retain(NULL));
    cugl_array_close(NULL);
    cugl_array_release(NULL);
    assert_int_equal(cugl_mipmapped_array_num_levels(NULL), 0);
    assert_null(cugl_mipmapped_array_handle(NULL));
    assert_null(cugl_mipmapped_array_device(NULL));
    assert_true(cugl_mipmapped_array_is_closed(NULL));
    assert_null(cugl_mipmapped_array_retain(NULL));
    cugl_mipmapped_array_close(NULL);
    cugl_mipmapped_array_release(NULL);
}

/* Out-parameters are cleared on failure, so a caller never sees garbage. */
static void outputs_are_cleared_on_failure(void **state)
{
    (void)state;
    array = (cugl_array *)&sentinel;
    assert_status(cugl_array_create(&array, NULL, &good), BAD);
    assert_null(array);
    mipmap = (cugl_mipmapped_array *)&sentinel;
    assert_status(cugl_mipmapped_array_create(&mipmap, FAKE_DEVICE, &good, 0), BAD);
    assert_null(mipmap);
    array = (cugl_array *)&sentinel;
    assert_status(cugl_mipmapped_array_get_level(&array, NULL, 0), BAD);
    assert_null(array);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_descs_are_refused),
        cmocka_unit_test(bad_creations_are_refused),
        cmocka_unit_test(bad_copies_are_refused),
        cmocka_unit_test(good_descs_pass),
        cmocka_unit_test(formats_have_names_and_sizes),
        cmocka_unit_test(null_objects),
        cmocka_unit_test(outputs_are_cleared_on_failure),
    };
    return cugl_test_run(tests);
}
