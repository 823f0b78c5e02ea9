/*
 * kernels.c - the library's own kernels (kernels/lib), loaded the first
 * time a device needs them and kept for the life of the process.
 */
#include <pthread.h>

#include "core_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

cugl_status cugl__kernel_get(cugl__kernel_set *set, cugl_device *dev, int slot,
                             const char *name, cugl_kernel **out, const char *who)
{
    int d = dev->ordinal;
    if (d >= CUGL__KERNEL_DEVICES)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who, "%s run on the first %d devices; this is device %d",
                          set->what, CUGL__KERNEL_DEVICES, d);
    if (slot < 0 || slot >= CUGL__KERNEL_SLOTS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "kernel slot %d of %s is out of range",
                          slot, set->what);
    pthread_mutex_lock(&lock);
    cugl_status st = CUGL_OK;
    if (!set->module[d])
        st = cugl_module_load_data(&set->module[d], dev, set->fatbin, *set->fatbin_size);
    cugl_kernel **k = &set->kernel[d][slot];
    if (st == CUGL_OK && !*k)
        st = cugl_module_get_kernel(k, set->module[d], name);
    *out = *k;
    pthread_mutex_unlock(&lock);
    if (st != CUGL_OK)
        return cugl__fail(st, who, "cannot load %s: %s", set->what, cugl_last_error());
    return CUGL_OK;
}
