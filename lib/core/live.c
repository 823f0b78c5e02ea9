/*
 * live.c - the counts of what this process holds through libcugl.
 */
#include "core_internal.h"

atomic_llong cugl__live_object_count;
atomic_llong cugl__live_byte_count;

CUGL_API int64_t cugl_live_objects(void)
{
    return atomic_load_explicit(&cugl__live_object_count, memory_order_relaxed);
}

CUGL_API int64_t cugl_live_bytes(void)
{
    return atomic_load_explicit(&cugl__live_byte_count, memory_order_relaxed);
}
