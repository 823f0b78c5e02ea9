/*
 * A C program built by CMake against an installed cugl: statuses by name,
 * a layout computed, and the driver's absence or presence reported
 * cleanly. Exits 0 when every answer is the right one.
 */
#include <stdio.h>
#include <string.h>

#include <cugl/cugl.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s (last error: %s)\n", what, cugl_last_error());
        failures++;
    }
}

int main(void)
{
    expect(strcmp(cugl_status_name(CUGL_ERROR_CLOSED), "CUGL_ERROR_CLOSED") == 0,
           "cugl_status_name");
    cugl_layout l;
    int64_t shape[2] = {3, 4};
    expect(cugl_layout_init(&l, 2, shape, NULL, 4) == CUGL_OK, "cugl_layout_init");
    expect(cugl_layout_is_contiguous_c(&l), "a C-contiguous layout");
    int count = -1;
    cugl_status st = cugl_device_count(&count);
    /* Without a GPU the driver is missing: a clean status, never a crash. */
    expect(st == CUGL_OK ? count >= 0 : st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE,
           "cugl_device_count");
    printf("consumer_c: cugl_device_count: %s, %d device(s)\n", cugl_status_name(st),
           st == CUGL_OK ? count : 0);
    return failures ? 1 : 0;
}
