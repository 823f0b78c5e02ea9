/*
 * Validation of resource descriptors, texture options and texture/surface
 * creation that happens before the driver is touched: one case per branch,
 * each with its status and exact message. Checks against real arrays and
 * buffers (sizes, alignment, closed objects, mipmaps) need a device: see
 * tests/gpu/test_texture.c.
 */
#include <math.h>

#include "cugl_test.h"

/*
 * Stand-ins for objects only a GPU can make. They are never dereferenced:
 * in each case that uses one, the check that refuses the call comes before
 * anything reads the object.
 */
static int sentinel;
#define FAKE_DEVICE ((cugl_device *)&sentinel)
#define FAKE_BUFFER ((cugl_buffer *)&sentinel)
#define FAKE_ARRAY ((cugl_array *)&sentinel)
#define FAKE_MIPMAP ((cugl_mipmapped_array *)&sentinel)

static cugl_texture *texture;
static cugl_surface *surface;
static cugl_texture_desc options;
static cugl_resource_desc resource;

#define CASE CUGL_TEST_CASE
#define ROW CUGL_TEST_ROW

#define BAD CUGL_ERROR_INVALID_ARGUMENT
#define RES(...) (&(cugl_resource_desc){__VA_ARGS__})
#define OPT(...) (&(cugl_texture_desc){__VA_ARGS__})
#define CHECK_RES(...) (cugl_resource_desc_validate(RES(__VA_ARGS__)))
#define CHECK_OPT(...) (cugl_texture_desc_validate(OPT(__VA_ARGS__), NULL))
/* A pitch2d image in a (fake) buffer; cases add width, height and pitch. */
#define PITCH2D .kind = CUGL_RESOURCE_PITCH2D, .buffer = FAKE_BUFFER
#define W16H4 .width = 16, .height = 4
#define LINEAR .kind = CUGL_RESOURCE_LINEAR, .buffer = FAKE_BUFFER

/* X(id, expr, status, message) */
#define RESOURCE_CASES(X)                                                                       \
    X(r01, cugl_resource_desc_validate(NULL), BAD,                                              \
      "cugl_resource_desc_validate: resource is NULL")                                          \
    X(r02, CHECK_RES(.buffer = FAKE_BUFFER), BAD,                                               \
      "cugl_resource_desc_validate: resource.kind 0 is not a cugl_resource_kind "               \
      "(CUGL_RESOURCE_ARRAY to CUGL_RESOURCE_PITCH2D)")                                         \
    X(r03, CHECK_RES(.kind = (cugl_resource_kind)5), BAD,                                       \
      "cugl_resource_desc_validate: resource.kind 5 is not a cugl_resource_kind "               \
      "(CUGL_RESOURCE_ARRAY to CUGL_RESOURCE_PITCH2D)")                                         \
    X(r04, CHECK_RES(.kind = CUGL_RESOURCE_ARRAY), BAD,                                         \
      "cugl_resource_desc_validate: resource.array is NULL (kind CUGL_RESOURCE_ARRAY)")         \
    X(r05, CHECK_RES(.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY), BAD,                               \
      "cugl_resource_desc_validate: resource.mipmapped_array is NULL (kind "                    \
      "CUGL_RESOURCE_MIPMAPPED_ARRAY)")                                                         \
    X(r06, CHECK_RES(.kind = CUGL_RESOURCE_LINEAR, .format = CUGL_FORMAT_F32), BAD,             \
      "cugl_resource_desc_validate: resource.buffer is NULL (kind CUGL_RESOURCE_LINEAR)")       \
    X(r07, CHECK_RES(.kind = CUGL_RESOURCE_PITCH2D), BAD,                                       \
      "cugl_resource_desc_validate: resource.buffer is NULL (kind CUGL_RESOURCE_PITCH2D)")      \
    X(r08, CHECK_RES(.kind = CUGL_RESOURCE_ARRAY, .buffer = FAKE_BUFFER), BAD,                  \
      "cugl_resource_desc_validate: resource.buffer is set, but a resource of kind "            \
      "CUGL_RESOURCE_ARRAY reads resource.array; leave the others NULL")                        \
    X(r09, CHECK_RES(LINEAR, .array = FAKE_ARRAY), BAD,                                         \
      "cugl_resource_desc_validate: resource.array is set, but a resource of kind "             \
      "CUGL_RESOURCE_LINEAR reads resource.buffer; leave the others NULL")                      \
    X(r10, CHECK_RES(PITCH2D, .mipmapped_array = FAKE_MIPMAP), BAD,                             \
      "cugl_resource_desc_validate: resource.mipmapped_array is set, but a resource of kind "   \
      "CUGL_RESOURCE_PITCH2D reads resource.buffer; leave the others NULL")                     \
    X(r11, CHECK_RES(.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY, .array = FAKE_ARRAY), BAD,          \
      "cugl_resource_desc_validate: resource.array is set, but a resource of kind "             \
      "CUGL_RESOURCE_MIPMAPPED_ARRAY reads resource.mipmapped_array; leave the others NULL")    \
    X(r12, CHECK_RES(LINEAR), BAD,                                                              \
      "cugl_resource_desc_validate: resource.format 0 is not a cugl_format (CUGL_FORMAT_U8 to " \
      "CUGL_FORMAT_F32)")                                                                       \
    X(r13, CHECK_RES(LINEAR, .format = (cugl_format)12), BAD,                                   \
      "cugl_resource_desc_validate: resource.format 12 is not a cugl_format (CUGL_FORMAT_U8 "   \
      "to CUGL_FORMAT_F32)")                                                                    \
    X(r14, CHECK_RES(LINEAR, .format = CUGL_FORMAT_U8, .num_channels = 3), BAD,                 \
      "cugl_resource_desc_validate: resource.num_channels 3 is not supported: textures read "   \
      "1, 2 or 4 channels (store RGB as 4 channels)")                                           \
    X(r15, CHECK_RES(PITCH2D, .format = CUGL_FORMAT_U8, .num_channels = 8), BAD,                \
      "cugl_resource_desc_validate: resource.num_channels 8 is not 1, 2 or 4")                  \
    X(r16, CHECK_RES(PITCH2D, .format = CUGL_FORMAT_F32, .height = 4, .pitch_bytes = 64), BAD,  \
      "cugl_resource_desc_validate: resource.width and height must be >= 1, got 0x4")           \
    X(r17, CHECK_RES(PITCH2D, .format = CUGL_FORMAT_F32, .width = 16, .pitch_bytes = 64), BAD,  \
      "cugl_resource_desc_validate: resource.width and height must be >= 1, got 16x0")          \
    X(r18, CHECK_RES(PITCH2D, W16H4, .format = CUGL_FORMAT_F32, .pitch_bytes = 60), BAD,        \
      "cugl_resource_desc_validate: resource.pitch_bytes 60 is smaller than width 16 x "        \
      "element size 4 = 64 bytes")                                                              \
    X(r19,                                                                                      \
      CHECK_RES(PITCH2D, W16H4, .format = CUGL_FORMAT_F32, .num_channels = 4,                   \
                .pitch_bytes = 128),                                                            \
      BAD,                                                                                      \
      "cugl_resource_desc_validate: resource.pitch_bytes 128 is smaller than width 16 x "       \
      "element size 16 = 256 bytes")                                                            \
    X(r20, CHECK_RES(PITCH2D, .format = CUGL_FORMAT_U8, .width = SIZE_MAX / 2, .height = 4,     \
                     .num_channels = 4),                                                        \
      BAD,                                                                                      \
      "cugl_resource_desc_validate: resource.width 9223372036854775807 x element size 4 "       \
      "overflows size_t")

#define OPTION_CASES(X)                                                                         \
    X(t01, CHECK_OPT(.address_mode = {0, (cugl_address_mode)7}), BAD,                           \
      "cugl_texture_desc_validate: address_mode[1] 7 is not a cugl_address_mode")               \
    X(t02, CHECK_OPT(.address_mode = {(cugl_address_mode)-1}), BAD,                             \
      "cugl_texture_desc_validate: address_mode[0] -1 is not a cugl_address_mode")              \
    X(t03, CHECK_OPT(.filter_mode = (cugl_filter_mode)2), BAD,                                  \
      "cugl_texture_desc_validate: filter_mode 2 is not a cugl_filter_mode")                    \
    X(t04, CHECK_OPT(.mipmap_filter_mode = (cugl_filter_mode)3), BAD,                           \
      "cugl_texture_desc_validate: mipmap_filter_mode 3 is not a cugl_filter_mode")             \
    X(t05, CHECK_OPT(.read_mode = (cugl_read_mode)2), BAD,                                      \
      "cugl_texture_desc_validate: read_mode 2 is not a cugl_read_mode")                        \
    X(t06, CHECK_OPT(.border_color = {0, 0, NAN, 0}), BAD,                                      \
      "cugl_texture_desc_validate: border_color[2] is not a finite number")                     \
    X(t07, CHECK_OPT(.border_color = {INFINITY}), BAD,                                          \
      "cugl_texture_desc_validate: border_color[0] is not a finite number")                     \
    X(t08, CHECK_OPT(.max_anisotropy = 17), BAD,                                                \
      "cugl_texture_desc_validate: max_anisotropy 17 exceeds 16, the hardware's maximum")       \
    X(t09, CHECK_OPT(.mipmap_level_bias = NAN), BAD,                                            \
      "cugl_texture_desc_validate: mipmap_level_bias is not a finite number")                   \
    X(t10, CHECK_OPT(.min_mipmap_level_clamp = -1), BAD,                                        \
      "cugl_texture_desc_validate: min_mipmap_level_clamp -1 is not a level (a finite number "  \
      ">= 0)")                                                                                  \
    X(t11, CHECK_OPT(.max_mipmap_level_clamp = INFINITY), BAD,                                  \
      "cugl_texture_desc_validate: max_mipmap_level_clamp inf is not a level (a finite number " \
      ">= 0)")                                                                                  \
    X(t12, CHECK_OPT(.min_mipmap_level_clamp = 3, .max_mipmap_level_clamp = 2.5f), BAD,         \
      "cugl_texture_desc_validate: min_mipmap_level_clamp 3 exceeds max_mipmap_level_clamp "    \
      "2.5")                                                                                    \
    X(t13, CHECK_OPT(.address_mode = {CUGL_ADDRESS_WRAP}), BAD,                                 \
      "cugl_texture_desc_validate: address_mode[0] is CUGL_ADDRESS_WRAP, which needs "          \
      "normalized_coords (unnormalized coordinates only clamp or use the border)")              \
    X(t14, CHECK_OPT(.address_mode = {0, 0, CUGL_ADDRESS_MIRROR}), BAD,                         \
      "cugl_texture_desc_validate: address_mode[2] is CUGL_ADDRESS_MIRROR, which needs "        \
      "normalized_coords (unnormalized coordinates only clamp or use the border)")

/* Options against a resource; each pair is refused before the buffer is read. */
#define PAIR(opt, res) (cugl_texture_desc_validate(opt, res))

#define PAIR_CASES(X)                                                                           \
    X(p01,                                                                                      \
      PAIR(OPT(.filter_mode = CUGL_FILTER_LINEAR), RES(LINEAR, .format = CUGL_FORMAT_F32)),     \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: a linear resource is read with tex1Dfetch, which does not "  \
      "filter; use CUGL_FILTER_POINT, or a pitch2d or array resource")                          \
    X(p02,                                                                                      \
      PAIR(OPT(.filter_mode = CUGL_FILTER_LINEAR),                                              \
           RES(PITCH2D, W16H4, .format = CUGL_FORMAT_U8, .pitch_bytes = 64)),                   \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: linear filtering of u8 data read as element type is not "    \
      "done by the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float format")      \
    X(p03,                                                                                      \
      PAIR(OPT(.filter_mode = CUGL_FILTER_LINEAR),                                              \
           RES(PITCH2D, W16H4, .format = CUGL_FORMAT_I32, .pitch_bytes = 64)),                  \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: linear filtering of i32 data read as element type is not "   \
      "done by the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float format")      \
    X(p04,                                                                                      \
      PAIR(OPT(.read_mode = CUGL_READ_NORMALIZED_FLOAT),                                        \
           RES(PITCH2D, W16H4, .format = CUGL_FORMAT_U32, .pitch_bytes = 64)),                  \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: CUGL_READ_NORMALIZED_FLOAT converts 8- and 16-bit integers " \
      "only; u32 data would be returned unconverted")                                           \
    X(p05,                                                                                      \
      PAIR(OPT(.read_mode = CUGL_READ_NORMALIZED_FLOAT),                                        \
           RES(LINEAR, .format = CUGL_FORMAT_I32)),                                             \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: CUGL_READ_NORMALIZED_FLOAT converts 8- and 16-bit integers " \
      "only; i32 data would be returned unconverted")                                           \
    X(p06,                                                                                      \
      PAIR(OPT(.seamless_cubemap = true),                                                       \
           RES(PITCH2D, W16H4, .format = CUGL_FORMAT_F32, .pitch_bytes = 64)),                  \
      BAD,                                                                                      \
      "cugl_texture_desc_validate: seamless_cubemap needs a cube-map array or mipmapped "       \
      "array, and the resource is not a cube map")                                              \
    X(p07, PAIR(NULL, RES(.kind = (cugl_resource_kind)0)), BAD,                                 \
      "cugl_texture_desc_validate: resource.kind 0 is not a cugl_resource_kind "                \
      "(CUGL_RESOURCE_ARRAY to CUGL_RESOURCE_PITCH2D)")                                         \
    X(p08, PAIR(OPT(.address_mode = {CUGL_ADDRESS_WRAP}), NULL), BAD,                           \
      "cugl_texture_desc_validate: address_mode[0] is CUGL_ADDRESS_WRAP, which needs "          \
      "normalized_coords (unnormalized coordinates only clamp or use the border)")

#define CREATE_CASES(X)                                                                         \
    X(x01, cugl_texture_create(NULL, FAKE_DEVICE, &resource, NULL), BAD,                        \
      "cugl_texture_create: out is NULL")                                                       \
    X(x02, cugl_texture_create(&texture, NULL, &resource, NULL), BAD,                           \
      "cugl_texture_create: device is NULL")                                                    \
    X(x03, cugl_texture_create(&texture, FAKE_DEVICE, NULL, NULL), BAD,                         \
      "cugl_texture_create: resource is NULL")                                                  \
    X(x04,                                                                                      \
      cugl_texture_create(&texture, FAKE_DEVICE, RES(LINEAR, .format = CUGL_FORMAT_F32),        \
                          OPT(.address_mode = {0, CUGL_ADDRESS_MIRROR})),                       \
      BAD,                                                                                      \
      "cugl_texture_create: address_mode[1] is CUGL_ADDRESS_MIRROR, which needs "               \
      "normalized_coords (unnormalized coordinates only clamp or use the border)")              \
    X(x05,                                                                                      \
      cugl_texture_create(&texture, FAKE_DEVICE, RES(LINEAR, .format = CUGL_FORMAT_F32),        \
                          OPT(.filter_mode = CUGL_FILTER_LINEAR)),                              \
      BAD,                                                                                      \
      "cugl_texture_create: a linear resource is read with tex1Dfetch, which does not filter; " \
      "use CUGL_FILTER_POINT, or a pitch2d or array resource")                                  \
    X(x06, cugl_texture_create(&texture, FAKE_DEVICE, RES(.kind = CUGL_RESOURCE_ARRAY), NULL),  \
      BAD, "cugl_texture_create: resource.array is NULL (kind CUGL_RESOURCE_ARRAY)")            \
    X(x07, cugl_texture_get_desc(NULL, &options), BAD,                                          \
      "cugl_texture_get_desc: texture is NULL")                                                 \
    X(x08, cugl_texture_get_resource(NULL, &resource), BAD,                                     \
      "cugl_texture_get_resource: texture is NULL")                                             \
    X(s01, cugl_surface_create(NULL, FAKE_DEVICE, &resource), BAD,                              \
      "cugl_surface_create: out is NULL")                                                       \
    X(s02, cugl_surface_create(&surface, NULL, &resource), BAD,                                 \
      "cugl_surface_create: device is NULL")                                                    \
    X(s03, cugl_surface_create(&surface, FAKE_DEVICE, NULL), BAD,                               \
      "cugl_surface_create: resource is NULL")                                                  \
    X(s04, cugl_surface_create(&surface, FAKE_DEVICE, RES(LINEAR, .format = CUGL_FORMAT_F32)),  \
      BAD,                                                                                      \
      "cugl_surface_create: a surface writes an array; resource.kind is CUGL_RESOURCE_LINEAR "  \
      "(for one level of a mipmapped array, pass the level from "                               \
      "cugl_mipmapped_array_get_level as an array)")                                            \
    X(s05, cugl_surface_create(&surface, FAKE_DEVICE, RES(PITCH2D, .format = CUGL_FORMAT_F32)), \
      BAD,                                                                                      \
      "cugl_surface_create: a surface writes an array; resource.kind is CUGL_RESOURCE_PITCH2D " \
      "(for one level of a mipmapped array, pass the level from "                               \
      "cugl_mipmapped_array_get_level as an array)")                                            \
    X(s06,                                                                                      \
      cugl_surface_create(&surface, FAKE_DEVICE,                                                \
                          RES(.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY,                            \
                              .mipmapped_array = FAKE_MIPMAP)),                                 \
      BAD,                                                                                      \
      "cugl_surface_create: a surface writes an array; resource.kind is "                       \
      "CUGL_RESOURCE_MIPMAPPED_ARRAY (for one level of a mipmapped array, pass the level from " \
      "cugl_mipmapped_array_get_level as an array)")                                            \
    X(s07, cugl_surface_create(&surface, FAKE_DEVICE, RES(.kind = CUGL_RESOURCE_ARRAY)), BAD,   \
      "cugl_surface_create: resource.array is NULL (kind CUGL_RESOURCE_ARRAY)")                 \
    X(s08, cugl_surface_create(&surface, FAKE_DEVICE, RES(.kind = (cugl_resource_kind)9)), BAD, \
      "cugl_surface_create: resource.kind 9 is not a cugl_resource_kind "                       \
      "(CUGL_RESOURCE_ARRAY to CUGL_RESOURCE_PITCH2D)")                                         \
    X(s09,                                                                                      \
      cugl_surface_create(&surface, FAKE_DEVICE,                                                \
                          RES(.kind = CUGL_RESOURCE_ARRAY, .buffer = FAKE_BUFFER)),             \
      BAD,                                                                                      \
      "cugl_surface_create: resource.buffer is set, but a resource of kind "                    \
      "CUGL_RESOURCE_ARRAY reads resource.array; leave the others NULL")

RESOURCE_CASES(CASE)
OPTION_CASES(CASE)
PAIR_CASES(CASE)
CREATE_CASES(CASE)

static void bad_resources_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {RESOURCE_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void bad_options_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {OPTION_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void bad_pairs_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {PAIR_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void bad_creations_are_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {CREATE_CASES(ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

/* What is allowed stays allowed: the defaults and each option in range. */
static void good_options_pass(void **state)
{
    (void)state;
    static const cugl_texture_desc good[] = {
        {.filter_mode = CUGL_FILTER_POINT},
        {.address_mode = {CUGL_ADDRESS_WRAP, CUGL_ADDRESS_MIRROR, CUGL_ADDRESS_BORDER},
         .normalized_coords = true},
        {.address_mode = {CUGL_ADDRESS_BORDER, CUGL_ADDRESS_BORDER, CUGL_ADDRESS_CLAMP},
         .border_color = {1, 2, 3, 4}},
        {.filter_mode = CUGL_FILTER_LINEAR, .read_mode = CUGL_READ_NORMALIZED_FLOAT,
         .srgb = true},
        {.max_anisotropy = 16, .mipmap_filter_mode = CUGL_FILTER_LINEAR,
         .mipmap_level_bias = -0.5f, .min_mipmap_level_clamp = 1, .max_mipmap_level_clamp = 3,
         .disable_trilinear_optimization = true},
        /* A max clamp of 0 means "the default", whatever the min clamp. */
        {.min_mipmap_level_clamp = 2},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cugl_status st = cugl_texture_desc_validate(&good[i], NULL);
        if (st != CUGL_OK)
            fail_msg("options %zu: %s", i, cugl_last_error());
    }
    assert_ok(cugl_texture_desc_validate(NULL, NULL));
}

/* Getters of NULL answer "nothing"; close and release of NULL are no-ops. */
static void null_objects(void **state)
{
    (void)state;
    assert_int_equal(cugl_texture_handle(NULL), 0);
    assert_null(cugl_texture_device(NULL));
    assert_true(cugl_texture_is_closed(NULL));
    assert_null(cugl_texture_retain(NULL));
    cugl_texture_close(NULL);
    cugl_texture_release(NULL);
    assert_int_equal(cugl_surface_handle(NULL), 0);
    assert_null(cugl_surface_device(NULL));
    assert_null(cugl_surface_array(NULL));
    assert_true(cugl_surface_is_closed(NULL));
    assert_null(cugl_surface_retain(NULL));
    cugl_surface_close(NULL);
    cugl_surface_release(NULL);
}

static void outputs_are_cleared_on_failure(void **state)
{
    (void)state;
    texture = (cugl_texture *)&sentinel;
    assert_status(cugl_texture_create(&texture, NULL, &resource, NULL), BAD);
    assert_null(texture);
    surface = (cugl_surface *)&sentinel;
    assert_status(cugl_surface_create(&surface, FAKE_DEVICE, NULL), BAD);
    assert_null(surface);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_resources_are_refused),
        cmocka_unit_test(bad_options_are_refused),
        cmocka_unit_test(bad_pairs_are_refused),
        cmocka_unit_test(bad_creations_are_refused),
        cmocka_unit_test(good_options_pass),
        cmocka_unit_test(null_objects),
        cmocka_unit_test(outputs_are_cleared_on_failure),
    };
    return cugl_test_run(tests);
}
