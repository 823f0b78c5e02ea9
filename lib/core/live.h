/*
 * live.h - what this process holds through libcugl, for leak checks.
 *
 * Counted by the library itself, so that a check measures this process
 * alone: the free memory of the device moves with every other process on
 * it, and with tools such as compute-sanitizer inside this one.
 *
 * Exported for the library's tests, not part of the public API.
 */
#ifndef CUGL_CORE_LIVE_H
#define CUGL_CORE_LIVE_H

#include <stdint.h>

#include "cugl/base.h"

/* Objects created and not yet released to their last reference: buffers,
 * arrays, mipmapped arrays, views, streams, events, memory resources,
 * graphics resources, textures, surfaces, modules and kernels. */
CUGL_API int64_t cugl__live_objects(void);

/* Bytes allocated from memory resources and not yet given back (the size
 * each deallocation names). */
CUGL_API int64_t cugl__live_bytes(void);

#endif
