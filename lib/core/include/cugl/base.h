/**
 * @file cugl/base.h
 * Export macro, version and the opaque handle types of cugl.
 *
 * Every other cugl header includes this one. It pulls in only the C standard
 * headers for fixed-width integers, sizes and booleans: no cuda.h, no GL.
 */
#ifndef CUGL_BASE_H
#define CUGL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(CUGL_BUILDING_SHARED)
/** Marks a public function: exported from the shared library. */
#define CUGL_API __attribute__((visibility("default")))
#else
/** Marks a public function (nothing in a static build). */
#define CUGL_API
#endif

#ifdef __cplusplus
#define CUGL_BEGIN_DECLS extern "C" {
#define CUGL_END_DECLS }
#else
/** Opens the headers' declarations: extern "C" in C++, nothing in C. */
#define CUGL_BEGIN_DECLS
/** Closes what CUGL_BEGIN_DECLS opened. */
#define CUGL_END_DECLS
#endif

#define CUGL_VERSION_MAJOR 0 /**< the major version of these headers */
#define CUGL_VERSION_MINOR 1 /**< the minor version */
#define CUGL_VERSION_PATCH 0 /**< the patch level */

/*
 * Opaque handles. All are reference counted: `cugl_X_close` frees the GPU
 * resource now (idempotent), `cugl_X_release` drops the caller's reference
 * and closes on the last one. Devices are process-wide and never released.
 */
typedef struct cugl_device cugl_device;   /**< a CUDA device and its primary context (device.h) */
typedef struct cugl_stream cugl_stream;   /**< a stream of work on a device (stream.h) */
typedef struct cugl_event cugl_event;     /**< a marker in a stream (event.h) */
typedef struct cugl_module cugl_module;   /**< loaded device code (module.h) */
typedef struct cugl_kernel cugl_kernel;   /**< a kernel of a module (module.h) */
typedef struct cugl_memory_resource cugl_memory_resource; /**< where buffers come from (memory.h) */
typedef struct cugl_buffer cugl_buffer;   /**< linear memory (buffer.h) */
typedef struct cugl_array cugl_array;     /**< a CUDA array (array.h) */
typedef struct cugl_mipmapped_array cugl_mipmapped_array; /**< a mipmapped CUDA array (array.h) */
typedef struct cugl_texture cugl_texture; /**< a texture object (texture.h) */
typedef struct cugl_surface cugl_surface; /**< a surface object (texture.h) */

#endif /* CUGL_BASE_H */
