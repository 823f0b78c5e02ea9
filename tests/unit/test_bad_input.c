/*
 * Every public function of libcugl, called with bad values (the table
 * bad_input_gen.py makes from the headers): NULL outputs and handles,
 * zeroed descs and shapes, descs and shapes of 0xff bytes, sizes of 0 and SIZE_MAX, negative and extreme
 * integers, enums out of range, NaN and infinities, empty, huge and endless
 * (/dev/zero) strings and paths, and where a device is, closed objects of
 * every kind. The unit suite runs it with a driver where there is one (the
 * GPU machine) and without (CI); the sanitized builds run it too. Each call
 * must return: no crash, no sanitizer report. Each one that returns a status other than CUGL_OK must
 * leave a message that starts with "<function>: ", and says something.
 * Calls that succeed are fine: a zeroed layout of 0 axes is a valid scalar.
 *
 * And each refusal must be as the function's header says (its @errors,
 * read by errors_doc.py): a status the header lists; for a call that
 * holds a NULL and no closed object, the status the header gives a NULL;
 * and nothing left behind (cugl_live_objects as before the call).
 */
#include <stdlib.h>
#include <string.h>

#include "cugl_test.h"

#include "bad_input.h"

enum { SLOTS = 8, SLOT_BYTES = 65536 };

static _Alignas(64) unsigned char scratch[SLOTS][SLOT_BYTES];

void *scratch_at(int slot)
{
    return scratch[slot % SLOTS];
}

void *scratch_ff(int slot)
{
    memset(scratch[slot % SLOTS], 0xff, SLOT_BYTES);
    return scratch[slot % SLOTS];
}

const char *huge_string(void)
{
    static char text[1 << 20];
    if (!text[0]) {
        memset(text, 'a', sizeof text - 1);
        text[sizeof text - 1] = '\0';
    }
    return text;
}

static cugl_device *device(void)
{
    static bool probed;
    static cugl_device *dev;
    if (!probed) {
        probed = true;
        if (cugl_device_get(&dev, 0) != CUGL_OK || cugl_device_set_current(dev) != CUGL_OK)
            dev = NULL;
    }
    return dev;
}

void *foreign_stream(void)
{
    static cugl_stream *stream;
    if (!stream && device() && cugl_stream_create(&stream, device(), NULL) != CUGL_OK)
        stream = NULL;
    return stream ? cugl_stream_handle(stream) : NULL;
}

/* Each kind of object, made and closed (a view: made over a buffer that is
 * then closed). Kept for the process: the calls must not free them. */
static void *make_closed(const char *kind, cugl_device *dev)
{
    cugl_stream *stream = NULL;
    if (cugl_device_default_stream(&stream, dev) != CUGL_OK)
        return NULL;
    const cugl_array_desc array_desc = {
        .ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_F32, .surface_load_store = true};
    if (strcmp(kind, "cugl_stream") == 0) {
        cugl_stream *s = NULL;
        if (cugl_stream_create(&s, dev, NULL) == CUGL_OK)
            cugl_stream_close(s);
        return s;
    }
    if (strcmp(kind, "cugl_event") == 0) {
        cugl_event *e = NULL;
        if (cugl_event_create(&e, dev, NULL) == CUGL_OK)
            cugl_event_close(e);
        return e;
    }
    if (strcmp(kind, "cugl_memory_resource") == 0) {
        cugl_memory_resource *mr = NULL;
        if (cugl_device_memory_resource_create(&mr, dev, NULL) == CUGL_OK)
            cugl_memory_resource_close(mr);
        return mr;
    }
    if (strcmp(kind, "cugl_buffer") == 0 || strcmp(kind, "cugl_view") == 0) {
        cugl_memory_resource *mr = NULL;
        cugl_buffer *b = NULL;
        cugl_view *v = NULL;
        if (cugl_device_memory_resource_create(&mr, dev, NULL) != CUGL_OK)
            return NULL;
        if (cugl_memory_resource_allocate(&b, mr, 4096, stream) == CUGL_OK) {
            cugl_layout layout;
            int64_t shape[1] = {1024};
            if (strcmp(kind, "cugl_view") == 0 &&
                (cugl_layout_init(&layout, 1, shape, NULL, 4) != CUGL_OK ||
                 cugl_view_from_buffer(&v, b, &layout, (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1},
                                       false) != CUGL_OK))
                v = NULL;
            cugl_buffer_close(b, stream);
            cugl_stream_sync(stream);
        }
        cugl_memory_resource_release(mr); /* this function's; what the buffer holds stays */
        return strcmp(kind, "cugl_view") == 0 ? (void *)v : (void *)b;
    }
    if (strcmp(kind, "cugl_array") == 0) {
        cugl_array *a = NULL;
        if (cugl_array_create(&a, dev, &array_desc) == CUGL_OK)
            cugl_array_close(a);
        return a;
    }
    if (strcmp(kind, "cugl_mipmapped_array") == 0) {
        cugl_mipmapped_array *m = NULL;
        if (cugl_mipmapped_array_create(&m, dev, &array_desc, 3) == CUGL_OK)
            cugl_mipmapped_array_close(m);
        return m;
    }
    if (strcmp(kind, "cugl_texture") == 0 || strcmp(kind, "cugl_surface") == 0) {
        cugl_array *a = NULL;
        if (cugl_array_create(&a, dev, &array_desc) != CUGL_OK)
            return NULL;
        const cugl_resource_desc res = {.kind = CUGL_RESOURCE_ARRAY, .array = a};
        void *made = NULL;
        if (strcmp(kind, "cugl_texture") == 0) {
            cugl_texture *t = NULL;
            if (cugl_texture_create(&t, dev, &res, NULL) == CUGL_OK)
                cugl_texture_close(t);
            made = t;
        } else {
            cugl_surface *sf = NULL;
            if (cugl_surface_create(&sf, dev, &res) == CUGL_OK)
                cugl_surface_close(sf);
            made = sf;
        }
        cugl_array_release(a); /* this function's; what the object holds stays */
        return made;
    }
    return NULL;
}

void *bad_object(const char *kind)
{
    static const char *kinds[16];
    static void *objects[16];
    if (!device())
        return NULL;
    int i = 0;
    for (; i < 16 && kinds[i]; i++)
        if (strcmp(kinds[i], kind) == 0)
            return objects[i];
    if (i == 16)
        return NULL;
    kinds[i] = kind;
    objects[i] = make_closed(kind, device());
    if (!objects[i])
        printf("# could not make a closed %s: %s\n", kind, cugl_last_error());
    return objects[i];
}

/* Why a refusal is not as the header says, or NULL. */
static const char *against_header(const bad_input_case *c, cugl_status st)
{
    if (!(c->documented & (1u << st)))
        return "a status its header does not list";
    if (c->has_null && !c->has_closed && c->null_status != CUGL_OK && st != c->null_status)
        return "not the status its header gives a NULL";
    return NULL;
}

static void every_function_refuses_cleanly(void **state)
{
    (void)state;
    /* The closed objects the calls take, made before any is counted: a
     * call that makes one on first use is not leaving it behind. */
    static const char *const kinds[] = {"cugl_stream", "cugl_event", "cugl_memory_resource",
                                        "cugl_buffer", "cugl_view", "cugl_array",
                                        "cugl_mipmapped_array", "cugl_texture", "cugl_surface"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        (void)bad_object(kinds[k]);
    (void)foreign_stream();
    size_t refused = 0, failures = 0, undocumented = 0, left = 0;
    for (size_t i = 0; i < bad_input_count; i++) {
        const bad_input_case *c = &bad_input_cases[i];
        memset(scratch, 0, sizeof scratch);
        cugl_clear_error();
        long long objects = cugl_live_objects();
        cugl_status st = c->call();
        if (!c->returns_status || st == CUGL_OK)
            continue;
        refused++;
        const char *msg = cugl_last_error();
        size_t n = strlen(c->function);
        if (strncmp(msg, c->function, n) != 0 || strncmp(msg + n, ": ", 2) != 0 ||
            strlen(msg) < n + 4) {
            printf("# %s(%s) -> %s, message \"%s\"\n", c->function, c->args,
                   cugl_status_name(st), msg);
            failures++;
        }
        const char *why = against_header(c, st);
        if (why) {
            printf("# %s(%s) -> %s: %s (\"%s\")\n", c->function, c->args, cugl_status_name(st),
                   why, msg);
            undocumented++;
        }
        if (cugl_live_objects() != objects) {
            printf("# %s(%s) -> %s, and %lld objects more alive than before it\n", c->function,
                   c->args, cugl_status_name(st), cugl_live_objects() - objects);
            left++;
        }
    }
    printf("# %zu calls of bad input (%s), %zu refused with a status; %zu messages not naming "
           "the function, %zu refusals not as the header says, %zu leaving objects behind\n",
           bad_input_count, device() ? "a device is here: closed objects too" : "no device",
           refused, failures, undocumented, left);
    assert_int_equal(failures, 0);
    assert_int_equal(undocumented, 0);
    assert_int_equal(left, 0);
    assert_true(bad_input_count >= 100); /* the table is not empty: every header was read */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_function_refuses_cleanly),
    };
    return cugl_test_run(tests);
}
