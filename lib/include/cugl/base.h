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
#define CUGL_API __attribute__((visibility("default")))
#else
#define CUGL_API
#endif

#ifdef __cplusplus
#define CUGL_BEGIN_DECLS extern "C" {
#define CUGL_END_DECLS }
#else
#define CUGL_BEGIN_DECLS
#define CUGL_END_DECLS
#endif

#define CUGL_VERSION_MAJOR 0
#define CUGL_VERSION_MINOR 1
#define CUGL_VERSION_PATCH 0

/*
 * Opaque handles. All are reference counted: `cugl_X_close` frees the GPU
 * resource now (idempotent), `cugl_X_release` drops the caller's reference
 * and closes on the last one. Devices are process-wide and never released.
 */
typedef struct cugl_device cugl_device;
typedef struct cugl_stream cugl_stream;
typedef struct cugl_event cugl_event;
typedef struct cugl_module cugl_module;
typedef struct cugl_kernel cugl_kernel;
typedef struct cugl_memory_resource cugl_memory_resource;
typedef struct cugl_buffer cugl_buffer;
typedef struct cugl_array cugl_array;
typedef struct cugl_mipmapped_array cugl_mipmapped_array;
typedef struct cugl_texture cugl_texture;
typedef struct cugl_surface cugl_surface;

#endif /* CUGL_BASE_H */
