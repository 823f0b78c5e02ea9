/*
 * devices.c - the demo's devices: the GL GPU and CUDA's (--device,
 * --compute-device, --devices), and the interop path that reaches GL from
 * them (--interop, auto choosing and saying why).
 */
#include "demo_internal.h"

#include <stdio.h>
#include <string.h>

static int no_gpu(const demo *d, const char *why)
{
    fprintf(stderr,
            "%s: this demo needs an NVIDIA GPU with CUDA and its driver, and found none:\n"
            "  %s\n",
            d->info->program, why);
    return 1;
}

/* Device `ordinal` (named by `flag` in messages), initialized and current;
 * DEMO_RUN or the exit status. */
static int use_device(demo *d, cugl_device **out, const char *flag, int ordinal, int count)
{
    if (ordinal >= count) {
        fprintf(stderr, "%s: %s %d: this machine has %d CUDA device%s (0 to %d)\n",
                d->info->program, flag, ordinal, count, count == 1 ? "" : "s", count - 1);
        return DEMO_EXIT_USAGE;
    }
    if (cugl_device_get(out, ordinal) != CUGL_OK || cugl_device_set_current(*out) != CUGL_OK)
        return demo_fail(d, "cannot use the CUDA device");
    return DEMO_RUN;
}

/* The GL GPU of --device and CUDA's devices, the first made current;
 * DEMO_RUN or the exit status. */
int demo__set_up_devices(demo *d)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE)
        return no_gpu(d, cugl_last_error());
    if (st != CUGL_OK)
        return demo_fail(d, "cannot count the CUDA devices");
    if (count == 0)
        return no_gpu(d, "the CUDA driver sees no device");
    int rc = use_device(d, &d->gl_device, "--device", d->opt.device, count);
    if (rc != DEMO_RUN)
        return rc;
    const char *flag = d->opt.compute_count > 1 ? "--devices" : "--compute-device";
    d->device_count = d->opt.compute_count ? d->opt.compute_count : 1;
    d->gpus = d->device_count;
    d->devices[0] = d->gl_device;
    for (int i = 0; i < d->opt.compute_count && rc == DEMO_RUN; i++) {
        rc = use_device(d, &d->devices[i], flag, d->opt.compute[i], count);
        d->remote = d->remote || d->opt.compute[i] != d->opt.device;
    }
    d->device = d->devices[0];
    if (rc == DEMO_RUN && cugl_device_set_current(d->device) != CUGL_OK)
        rc = demo_fail(d, "cannot use the CUDA device");
    return rc;
}

/* A device's name, for messages. */
static const char *device_name(cugl_device *device, cugl_device_properties *p)
{
    return cugl_device_get_properties(device, p) == CUGL_OK ? p->name : "unknown";
}

/*
 * CUDA on GPUs other than the GL GPU: which paths reach GL from there, by
 * libcugl-app's one rule (cugl_app_choose_interop_for). Writes why not
 * into `why` and returns false.
 */
bool demo__path_reaches_gl(demo *d, demo_interop path, char *why, size_t size)
{
    if (!d->remote || path == CUGL_APP_INTEROP_AUTO)
        return true; /* demo__choose_interop picks one that does */
    cugl_app_interop checked;
    if (cugl_app_choose_interop_for(&checked, NULL, 0, d->ctx, d->gl_device, d->devices,
                                    d->device_count, path) == CUGL_OK)
        return true;
    snprintf(why, size, "--interop %s: %s", demo_interop_name(path), cugl_last_error());
    return false;
}

/* --interop auto: the fastest path this context and CUDA's devices share,
 * and why. */
int demo__choose_interop(demo *d)
{
    cugl_app_interop choice;
    char reason[768];
    if (cugl_app_choose_interop_for(&choice, reason, sizeof reason, d->ctx, d->gl_device,
                                    d->devices, d->device_count,
                                    CUGL_APP_INTEROP_AUTO) != CUGL_OK) {
        if (!d->remote)
            return demo_fail(d, "cannot choose the interop path");
        fprintf(stderr, "%s: --devices: no interop path reaches GL: %s\n", d->info->program,
                cugl_last_error());
        return 1;
    }
    d->opt.interop = choice;
    printf("%s: --interop auto: %s: %s\n", d->info->program, demo_interop_name(d->opt.interop),
           reason);
    return DEMO_RUN;
}

/* Where CUDA runs, when not on the GL GPU alone. */
void demo__print_devices(demo *d)
{
    if (!d->opt.compute_count)
        return;
    cugl_device_properties p;
    printf("%s: CUDA on device", d->info->program);
    for (int i = 0; i < d->device_count; i++)
        printf("%s %d", i ? "," : d->device_count > 1 ? "s" : "", d->opt.compute[i]);
    printf(" (%s); GL on device %d (%s)\n", device_name(d->device, &p), d->opt.device,
           device_name(d->gl_device, &p));
}
