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
 * CUDA on GPUs other than the GL GPU: which paths reach GL from there. The
 * map path maps for the GL GPU only; shared memory needs a peer path from
 * each device to the GL GPU; host copies suit one device. Writes why not
 * into `why` and returns false.
 */
bool demo__path_reaches_gl(demo *d, demo_interop path, char *why, size_t size)
{
    if (!d->remote)
        return true;
    switch (path) {
    case CUGL_APP_INTEROP_AUTO:
        return true; /* demo__choose_interop picks one that does */
    case CUGL_APP_INTEROP_MAP:
        snprintf(why, size,
                 "--interop map maps GL objects for CUDA on the GL GPU (device %d) only; with "
                 "CUDA on another device use --interop shared (or host)",
                 d->opt.device);
        return false;
    case CUGL_APP_INTEROP_SHARED:
        for (int i = 0; i < d->device_count; i++) {
            bool peer = true;
            if (d->opt.compute[i] == d->opt.device)
                continue;
            if (cugl_device_can_access_peer(&peer, d->devices[i], d->gl_device) != CUGL_OK ||
                !peer) {
                snprintf(why, size,
                         "device %d has no peer path to the GL GPU (device %d), so it cannot "
                         "write the memory GL draws from; %s",
                         d->opt.compute[i], d->opt.device,
                         d->device_count == 1 ? "--interop host copies through host memory"
                                              : "leave it out of --devices");
                return false;
            }
        }
        return true;
    case CUGL_APP_INTEROP_HOST:
        if (d->device_count == 1)
            return true;
        snprintf(why, size, "--interop host copies from one device only; --devices with %d "
                            "devices needs --interop shared",
                 d->device_count);
        return false;
    }
    return false;
}

/* --interop auto: the fastest path this context and CUDA's devices share,
 * and why. */
int demo__choose_interop(demo *d)
{
    cugl_app_interop choice;
    char reason[768];
    if (cugl_app_choose_interop(&choice, reason, sizeof reason, d->ctx, d->gl_device) != CUGL_OK)
        return demo_fail(d, "cannot choose the interop path");
    d->opt.interop = choice;
    if (d->remote) {
        /* The choice for the GL GPU; from another device, shared memory if
         * GL imports it there and a peer path leads to it, else host. */
        char why[1024];
        cugl_device_properties p;
        if (d->opt.interop == CUGL_APP_INTEROP_MAP)
            /* Shared memory was tried first and refused; a mapping is the
             * GL GPU's alone. */
            snprintf(why, sizeof why,
                     "GL cannot import memory here (%s), and a mapping serves only CUDA on the "
                     "GL GPU (device %d); drawing through host copies",
                     reason, d->opt.device);
        if (d->opt.interop == CUGL_APP_INTEROP_SHARED &&
            demo__path_reaches_gl(d, CUGL_APP_INTEROP_SHARED, why, sizeof why)) {
            snprintf(reason, sizeof reason,
                     "CUDA on device %d writes memory of the GL GPU (device %d, %s) over their "
                     "peer path, and GL imports it",
                     d->opt.compute[0], d->opt.device, device_name(d->gl_device, &p));
        } else if (d->device_count == 1) {
            /* A reason longer than the line holds is cut. */
            if (d->opt.interop != CUGL_APP_INTEROP_HOST &&
                snprintf(reason, sizeof reason, "%s", why) >= (int)sizeof reason)
                reason[sizeof reason - 1] = '\0';
            d->opt.interop = CUGL_APP_INTEROP_HOST;
        } else {
            fprintf(stderr, "%s: --devices: no interop path reaches GL: %s\n", d->info->program,
                    d->opt.interop == CUGL_APP_INTEROP_HOST ? reason : why);
            return 1;
        }
    }
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
