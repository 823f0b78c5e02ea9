/*
 * Every public function of libcugl, called with bad values (the table
 * bad_input_gen.py makes from the headers): NULL outputs and handles,
 * zeroed descs and shapes, descs and shapes of 0xff bytes, sizes of 0 and SIZE_MAX, negative and extreme
 * integers, enums out of range, NaN. Here there is no GPU (the unit suite;
 * the sanitized build runs it too). Each call must return: no crash, no
 * sanitizer report. Each one that returns a status other than CUGL_OK must
 * leave a message that starts with "<function>: ", and says something.
 * Calls that succeed are fine: a zeroed layout of 0 axes is a valid scalar.
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

static void every_function_refuses_cleanly(void **state)
{
    (void)state;
    size_t refused = 0, failures = 0;
    for (size_t i = 0; i < bad_input_count; i++) {
        const bad_input_case *c = &bad_input_cases[i];
        memset(scratch, 0, sizeof scratch);
        cugl_clear_error();
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
    }
    printf("# %zu calls of bad input, %zu refused with a status; %zu messages not naming the "
           "function\n",
           bad_input_count, refused, failures);
    assert_int_equal(failures, 0);
    assert_true(bad_input_count >= 100); /* the table is not empty: every header was read */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_function_refuses_cleanly),
    };
    return cugl_test_run(tests);
}
