/**
 * @file cugl/app_target.h
 * What CUDA writes and GL shows (or GL draws and CUDA reads), on any
 * interop path: the one object a program needs for "my kernel's output on
 * screen, every frame".
 *
 * A target is a GL object (a 2-D texture, a buffer of vertices or any data,
 * or a 3-D texture) that CUDA and GL take turns on, by one of the paths of
 * cugl/app_interop.h:
 *
 *   map     the GL object is registered with CUDA once and mapped each
 *           turn; the targets of one turn are mapped and unmapped in one
 *           driver call, each with the flags of its role; CUDA writes an
 *           image through a surface object and reads it through a texture
 *           object on the mapped array
 *   shared  CUDA memory that GL imports (cugl/app_shared.h): nothing is
 *           mapped, the two sides take turns with an event and a fence
 *   host    device memory CUDA uses, copied through host memory to or
 *           from the GL object: what works everywhere (GL on Mesa,
 *           another GPU, WSL). The host memory is a GL buffer's,
 *           persistently mapped, that CUDA registers: CUDA copies into it
 *           on the stream, GL uploads from it on the GPU, the CPU copies
 *           nothing; where CUDA cannot register it, pinned memory that GL
 *           reads on the CPU (the reason says so)
 *
 * CUGL_APP_INTEROP_AUTO (the default) takes the fastest path that works
 * between the context and the device (cugl_app_choose_interop), and the
 * target says which and why (cugl_app_target_reason).
 *
 * A frame where CUDA writes and GL shows:
 *
 *   cugl_app_target_cuda_begin(t, stream, &a);   CUDA's turn: a.ptr or a.surface
 *   my_kernel<<<..., stream>>>(a);               (queued, not waited for)
 *   cugl_app_target_cuda_end(t, stream);         hand it to GL
 *   cugl_app_target_draw(t);                     an image's blit (points:
 *                                                cugl_app_target_draw_points)
 *
 * and where GL draws and CUDA reads (CUGL_APP_FROM_GL):
 *
 *   cugl_app_target_gl_begin(t);  ... GL renders into cugl_app_target_gl_name(t) ...
 *   cugl_app_target_gl_end(t);    cugl_app_target_cuda_begin(t, stream, &a); ...
 *
 * Several targets take one turn together (cugl_app_targets_cuda_begin and
 * the others take arrays): on the map path that is one map and one unmap.
 * Pipelined (cugl_app_target_desc.pipelined), GL shows what CUDA wrote a
 * turn earlier and neither side waits for the other.
 *
 * A kernel writes an image at a.ptr (rows a.pitch bytes apart) where that
 * is not 0, else through the surface object a.surface; it reads a
 * CUGL_APP_FROM_GL image at a.ptr, else through the texture object
 * a.texture (point sampling, elements as stored). A buffer is at a.ptr.
 *
 * Timing: with a timer (cugl_app_target_desc.timer), each step of a hand-
 * over is a phase of it: CUGL_APP_PHASE_ACQUIRE ("map", "wait-gl",
 * "to-device"), CUGL_APP_PHASE_RELEASE ("unmap", "signal-gl", "download"),
 * CUGL_APP_PHASE_HANDOFF ("wait-cuda", "upload") and CUGL_APP_PHASE_GL_COPY
 * ("copy-out", "readback").
 *
 * Threads: a target is used by the thread whose GL context made it, with
 * that context current.
 */
#ifndef CUGL_APP_TARGET_H
#define CUGL_APP_TARGET_H

#include "cugl/app_interop.h"
#include "cugl/app_timer.h"

CUGL_BEGIN_DECLS

/** What CUDA writes and GL shows, on one interop path. Opaque. */
typedef struct cugl_app_target cugl_app_target;

/** Targets one turn takes together at most. */
enum { CUGL_APP_TARGET_MAX_TURN = 8 };

/** The GL object a target is (cugl_app_target_desc.kind). */
typedef enum cugl_app_target_kind {
    CUGL_APP_TARGET_IMAGE = 0,  /**< a 2-D texture, width x height */
    CUGL_APP_TARGET_BUFFER = 1, /**< a buffer of `size` bytes: vertices, or any data */
    CUGL_APP_TARGET_VOLUME = 2, /**< a 3-D texture, width x height x depth */
} cugl_app_target_kind;

/** Which side writes a target, the other reading it. */
typedef enum cugl_app_direction {
    CUGL_APP_TO_GL = 0,   /**< CUDA writes, GL shows (and CUDA may read back what it wrote) */
    CUGL_APP_FROM_GL = 1, /**< GL renders into it, CUDA reads */
} cugl_app_direction;

/** What CUDA does with a target in its turns (cugl_app_target_set_cuda_use). */
typedef enum cugl_app_cuda_use {
    /** The direction's: CUGL_APP_TO_GL, CUDA writes all of it; CUGL_APP_FROM_GL, it reads. */
    CUGL_APP_CUDA_USE_DEFAULT = 0,
    CUGL_APP_CUDA_WRITES = 1,       /**< writes all of it; what it held before is undefined */
    CUGL_APP_CUDA_READS = 2,        /**< reads it only (what CUDA or GL wrote last) */
    CUGL_APP_CUDA_READS_WRITES = 3, /**< reads and writes it in place */
} cugl_app_cuda_use;

/** The texel format of an image or volume. */
typedef enum cugl_app_format {
    CUGL_APP_FORMAT_RGBA8 = 0,   /**< 4 bytes: unsigned normalized (GL_RGBA8) */
    CUGL_APP_FORMAT_RGBA16F = 1, /**< 8 bytes: half floats (GL_RGBA16F) */
    CUGL_APP_FORMAT_RGBA32F = 2, /**< 16 bytes: floats (GL_RGBA32F) */
    CUGL_APP_FORMAT_R32F = 3,    /**< 4 bytes: one float (GL_R32F) */
} cugl_app_format;

/** What cugl_app_target_create makes; a zero field takes its default
 * where it has one: the size has none (width and height for images and
 * volumes, depth for volumes, size for buffers must be set). */
typedef struct cugl_app_target_desc {
    cugl_app_target_kind kind;     /**< image (0), buffer or volume */
    cugl_app_direction direction;  /**< CUDA writes (0), or GL does */
    /** The path; CUGL_APP_INTEROP_AUTO (0): the fastest here. With `device`
     * or `writers` on other GPUs than GL's, the rule of
     * cugl_app_choose_interop_for chooses, or refuses what cannot reach GL. */
    cugl_app_interop interop;
    cugl_app_format format;        /**< images and volumes: RGBA8 (0) or a float format */
    int width,                     /**< images and volumes: texels a row, >= 1 */
        height,                    /**< images and volumes: rows, >= 1 */
        depth;                     /**< volumes: slices, >= 1 */
    size_t size;                   /**< buffers: bytes, >= 1 */
    /** Buffers: `size` bytes the buffer starts with, for GL and CUDA alike
     * (host memory, read during the call); NULL: undefined. */
    const void *initial;
    /** The CUDA device whose streams take the target's turns; NULL: the
     * device of the context's GL (cugl_app_context_desc.cuda_device); with
     * neither, the target takes host memory alone (cugl_app_target_copy_from)
     * on the host path. */
    cugl_device *device;
    /** Other devices whose streams also write it (compute on other GPUs),
     * `writer_count` of them: the shared path gives them peer access; the
     * other paths take no writers. */
    cugl_device *const *writers;
    int writer_count; /**< how many writers; 0: none */
    /** GL shows what CUDA wrote a turn earlier and neither waits for the
     * other (images and TO_GL buffers that CUDA writes whole each turn;
     * on the host path where it stages in GL's memory). */
    bool pipelined;
    /** Times each hand-over step as a phase of this timer; NULL: untimed. */
    cugl_app_timer *timer;
} cugl_app_target_desc;

/** Where CUDA finds a target during its turn (cugl_app_target_cuda_begin):
 * plain numbers, to pass to a kernel by value. */
typedef struct cugl_app_access {
    /** Linear memory: a buffer's first byte, or an image's first row; 0 where
     * the image is reached through a surface or texture object. */
    uint64_t ptr;
    uint64_t pitch;   /**< images in linear memory: bytes from a row to the next */
    uint64_t slice;   /**< volumes in linear memory: bytes from a slice to the next */
    uint64_t size;    /**< bytes at ptr CUDA may use (0 with no ptr) */
    uint64_t surface; /**< a CUsurfObject on the image's array (map path, CUDA writes), or 0 */
    uint64_t texture; /**< a CUtexObject on the image's array (map path, CUDA reads), or 0 */
} cugl_app_access;

/**
 * Make a target for the context `ctx` (current on this thread).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a kind, direction, path or
 *   format that is none of the enum's; a size not positive or past GL's
 *   limits; writers with a path other than shared, or more than
 *   CUGL_APP_SHARED_MAX_WRITERS), CUGL_ERROR_NOT_SUPPORTED (the path asked
 *   for does not work here, or none reaches GL from the writing devices:
 *   the message says why and which would),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL, CUGL_ERROR_CUDA; a device
 *   without a driver: CUGL_ERROR_NO_DRIVER. Nothing is left behind.
 * @thread_safety The thread whose GL context is `ctx`.
 * @param[out] out Receives the target; NULL on failure.
 * @param ctx The context whose GL shows it; it must outlive the target.
 * @param desc What to make.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_create(cugl_app_target **out, cugl_app_context *ctx,
                                            const cugl_app_target_desc *desc);

/**
 * Free the target and its GL and CUDA objects, once CUDA's queued work on
 * it is done. NULL: no-op.
 * @errors none.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target, or NULL.
 */
CUGL_API void cugl_app_target_destroy(cugl_app_target *target);

/**
 * CUDA's turn on `count` targets begins, on `stream`: they are mapped (in
 * one call), waited for (GL's use of shared memory), or GL's pixels copied
 * to the device (host path, CUGL_APP_FROM_GL); `out[i]` says where target
 * i is. Nothing waits for queued work on the map and shared paths'
 * fast cases. On a failure no target is left mapped.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; count not 1 to
 *   CUGL_APP_TARGET_MAX_TURN; targets of different paths or contexts; a
 *   stream of a device the target does not take), CUGL_ERROR_CLOSED (a
 *   closed stream), CUGL_ERROR_INVALID_STATE (a target's CUDA turn is open
 *   already, or its GL turn is), the statuses of what it calls
 *   (CUGL_ERROR_CUDA, CUGL_ERROR_GL). A refused turn changes nothing: no
 *   turn is open after it.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param targets The targets.
 * @param count How many.
 * @param stream The stream CUDA's work on them is queued on.
 * @param[out] out `count` accesses, one a target.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_targets_cuda_begin(cugl_app_target *const *targets, int count,
                                                 cugl_stream *stream, cugl_app_access *out);

/**
 * CUDA's turn ends, its work queued on `stream`: the targets go to GL
 * (unmapped in one call, marked for GL's wait, or copied into host memory
 * by a DMA on the stream, which GL's turn waits for and uploads; through
 * pinned memory, the copy is waited for and uploaded here). Pipelined
 * targets on the map path stay mapped until their next turn, so GL never
 * waits for this turn.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; count out of range; another
 *   stream than the turn's), CUGL_ERROR_INVALID_STATE (no CUDA turn open),
 *   the statuses of what it calls.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param targets The targets.
 * @param count How many.
 * @param stream The stream of cugl_app_targets_cuda_begin.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_targets_cuda_end(cugl_app_target *const *targets, int count,
                                               cugl_stream *stream);

/**
 * GL's turn on `count` targets begins: on the shared path GL waits for
 * CUDA's writes (and fills a shared image's texture); on the host path it
 * waits for CUDA's copy into GL's staging memory and uploads it into the
 * GL object (on the GPU); the map path needs nothing. Between this and cugl_app_targets_gl_end, GL draws from
 * cugl_app_target_gl_name (or renders into it, CUGL_APP_FROM_GL).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; count out of range),
 *   CUGL_ERROR_INVALID_STATE (a CUDA turn is open), the statuses of what it
 *   calls.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param targets The targets.
 * @param count How many.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_targets_gl_begin(cugl_app_target *const *targets, int count);

/**
 * GL's turn ends: shared memory marks GL's use; an image GL rendered into
 * (CUGL_APP_FROM_GL) goes where CUDA reads it (shared memory, or pinned host
 * memory on the host path).
 * @errors as cugl_app_targets_gl_begin.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param targets The targets.
 * @param count How many.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_targets_gl_end(cugl_app_target *const *targets, int count);

/**
 * cugl_app_targets_cuda_begin for one target.
 * @errors as cugl_app_targets_cuda_begin.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param stream The stream CUDA's work is queued on.
 * @param[out] out Where CUDA finds it.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_cuda_begin(cugl_app_target *target, cugl_stream *stream,
                                                cugl_app_access *out);

/**
 * cugl_app_targets_cuda_end for one target.
 * @errors as cugl_app_targets_cuda_end.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param stream The stream of the turn.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_cuda_end(cugl_app_target *target, cugl_stream *stream);

/**
 * cugl_app_targets_gl_begin for one target.
 * @errors as cugl_app_targets_gl_begin.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_gl_begin(cugl_app_target *target);

/**
 * cugl_app_targets_gl_end for one target.
 * @errors as cugl_app_targets_gl_end.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_gl_end(cugl_app_target *target);

/**
 * Copy `src` into the target, as a CUDA turn of its own on `stream` (begin,
 * the copy, end): GL shows it after. An image takes a view of shape
 * (height, width, components), a volume (depth, height, width,
 * components), of elements the size of the format's components (1 byte
 * for RGBA8, 2 for RGBA16F, 4 for the float formats; any dtype of that
 * size); a buffer takes any view of at most its bytes, at its start (the
 * rest keeps what it held). The view is host or
 * device memory with any strides: one copy where its rows are dense (a
 * strided source is packed on the way). A source on another device than
 * the target's memory (a tensor on a compute device, the memory on GL's
 * and open to it) is copied across by its own device: `stream` must then
 * be that device's. A target without a CUDA device
 * (the host path where the context runs on none) takes host memory alone,
 * uploaded to GL at once, and no stream.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a source of another shape or
 *   element size, or more bytes than a buffer holds; device memory for a
 *   target without a device; a source on another device than the target's
 *   memory and a stream not of the source's device; a CUGL_APP_FROM_GL
 *   target), CUGL_ERROR_CLOSED
 *   (the view's buffer, or the stream), CUGL_ERROR_INVALID_STATE (a turn is open), and the statuses
 *   of a CUDA turn and of cugl_view_copy_from.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param src What to show.
 * @param stream The stream the copy is queued on; NULL only for a target without a device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_copy_from(cugl_app_target *target, cugl_view *src,
                                               cugl_stream *stream);

/**
 * Draw an image over the current viewport of the bound framebuffer, in a
 * GL turn of its own (gl_begin, the blit, gl_end): nearest-sampled, a
 * float image's values clamped to 0 .. 1, R32F as grey. On the shared path
 * an RGBA8 image is drawn straight from the memory CUDA wrote. Row 0 (the
 * first row at cugl_app_access.ptr, or row 0 of its surface) is drawn at
 * the bottom of the viewport, as GL's textures are: a kernel whose row 0
 * is the top of its picture writes row height - 1 - y.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not an image: a buffer is
 *   drawn with cugl_app_target_draw_points, a volume by a shader of the
 *   program's own), CUGL_ERROR_INVALID_STATE (a turn is open), the
 *   statuses of gl_begin and gl_end, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_draw(cugl_app_target *target);

/** Where cugl_app_target_draw_origin puts an image's row 0 (its first row
 * in memory): at the bottom of the viewport, as GL's textures and
 * cugl_app_target_draw have it, or at the top, as NumPy, image files and
 * most CPU code lay a picture out (matplotlib's imshow `origin`). */
typedef enum cugl_app_origin {
    CUGL_APP_ORIGIN_LOWER = 0, /**< row 0 at the bottom (cugl_app_target_draw) */
    CUGL_APP_ORIGIN_UPPER = 1, /**< row 0 at the top */
} cugl_app_origin;

/**
 * cugl_app_target_draw with row 0 where `origin` says: CUGL_APP_ORIGIN_UPPER
 * draws an image whose row 0 is the top of its picture upright, with no
 * copy and no kernel writing rows in reverse (the draw samples the rows
 * from the top); CUGL_APP_ORIGIN_LOWER is cugl_app_target_draw.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not an image; an origin that
 *   is neither), CUGL_ERROR_INVALID_STATE (a turn is open), the statuses
 *   of gl_begin and gl_end, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param origin Where row 0 is drawn.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_draw_origin(cugl_app_target *target,
                                                 cugl_app_origin origin);

/**
 * Draw a buffer's first `count` points, `components` floats each (x, y, z
 * and an ignored w: 3 or 4), as clip-space positions transformed by
 * `matrix` (column-major 4x4; NULL: none), `point_size` pixels square in
 * `rgba`, in a GL turn of its own, into the bound framebuffer.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL target or rgba; not a buffer;
 *   components not 3 or 4; more points than the buffer holds; a point size
 *   that is not a positive number), CUGL_ERROR_INVALID_STATE (a turn is
 *   open), the statuses of gl_begin and gl_end, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param count Points to draw.
 * @param components Floats a point: 3 or 4.
 * @param matrix Column-major 4x4 applied to each position, or NULL.
 * @param point_size Pixels a side.
 * @param rgba The points' colour, 4 floats in 0 .. 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_draw_points(cugl_app_target *target, size_t count,
                                                 int components, const float matrix[16],
                                                 float point_size, const float rgba[4]);

/**
 * The GL object to draw from (or render into) in GL's turn: a texture
 * (GL_TEXTURE_2D, GL_TEXTURE_3D) or a buffer. Pipelined, it changes from
 * turn to turn: ask each frame. On the shared path, an image's texture is
 * filled from the memory CUDA wrote the first time it is asked for in a
 * GL turn (a copy on the GPU; cugl_app_target_draw needs none).
 * @errors CUGL_ERROR_GL where that fill fails (0 is returned, the message
 *   left in cugl_last_error()).
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target, or NULL.
 * @return The GL name; 0 for NULL or a failed fill.
 */
CUGL_API uint32_t cugl_app_target_gl_name(cugl_app_target *target);

/**
 * The path the target takes (CUGL_APP_INTEROP_AUTO resolved).
 * @errors none. @thread_safety Any thread.
 * @param target The target, or NULL.
 * @return The path; CUGL_APP_INTEROP_AUTO for NULL.
 */
CUGL_API cugl_app_interop cugl_app_target_interop(const cugl_app_target *target);

/**
 * Why the target takes its path: one sentence for the user (the choice of
 * CUGL_APP_INTEROP_AUTO and what refused the faster ones, or "asked for").
 * @errors none. @thread_safety Any thread.
 * @param target The target, or NULL.
 * @return The sentence, held by the target; "" for NULL.
 */
CUGL_API const char *cugl_app_target_reason(const cugl_app_target *target);

/**
 * Turn pipelining on or off from the next turn (cugl_app_target_desc.pipelined).
 * Off, GL shows what CUDA writes this turn: a frame kept as a screenshot
 * turns it off first.
 * A target whose path cannot pipeline (the host path without a CUDA device
 * or through pinned memory) stays in lockstep: cugl_app_target_is_pipelined
 * says which.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; on for a target that cannot
 *   be pipelined: CUGL_APP_FROM_GL), CUGL_ERROR_INVALID_STATE (a turn is
 *   open), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL, CUGL_ERROR_CUDA (the
 *   second copy it needs the first time).
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param target The target.
 * @param on Whether to pipeline.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_set_pipelined(cugl_app_target *target, bool on);

/**
 * What CUDA does with the target from its next turn on: on the map path
 * the map flags of its role (write-discard, read-only, none), on the host
 * path which copies its turn makes. A pair of buffers CUDA reads one of and
 * writes the other, swapping each step, sets each one's use before each
 * turn. Pipelining rotates copies only of what CUDA writes whole: a target
 * CUDA reads takes the copy written last.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a cugl_app_cuda_use; a
 *   use that writes what GL draws for CUDA, CUGL_APP_FROM_GL),
 *   CUGL_ERROR_INVALID_STATE (CUDA's turn is open).
 * @thread_safety The thread whose GL context made the target.
 * @param target The target.
 * @param use What CUDA does with it.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_target_set_cuda_use(cugl_app_target *target,
                                                  cugl_app_cuda_use use);

/**
 * Whether the target's turns wait for each other on the GPU: the shared
 * path where Vulkan makes the semaphores GL and CUDA share and CUDA writes
 * on the GL GPU (cugl/app_shared.h). Then no turn blocks the CPU, and the
 * GPU times of the timer's phases include the waiting. false for NULL.
 * @errors none. @thread_safety Any thread.
 * @param target the target, or NULL.
 * @return true where the waits are GPU waits.
 */
CUGL_API bool cugl_app_target_waits_on_gpu(const cugl_app_target *target);

/**
 * Whether the target is pipelined now. @errors none. @thread_safety Any thread.
 * @param target The target, or NULL.
 * @return true while pipelined; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_target_is_pipelined(const cugl_app_target *target);

/**
 * Turns CUDA took in lockstep with GL (not pipelined) so far: a pipelined
 * run has none but the frames it kept.
 * @errors none. @thread_safety Any thread.
 * @param target The target, or NULL.
 * @return The count; 0 for NULL.
 */
CUGL_API long cugl_app_target_lockstep_turns(const cugl_app_target *target);

/**
 * The target's size: texels a row, rows and slices (images: depth 1;
 * buffers: 0, 0, 0), and its bytes as CUDA sees them (linear memory with
 * its pitch; a buffer's size); any output may be NULL.
 * @errors none. @thread_safety Any thread.
 * @param target The target, or NULL (zeros).
 * @param[out] width Receives the width.
 * @param[out] height Receives the height.
 * @param[out] depth Receives the depth.
 * @param[out] bytes Receives the bytes.
 */
CUGL_API void cugl_app_target_size(const cugl_app_target *target, int *width, int *height,
                                   int *depth, size_t *bytes);

CUGL_END_DECLS

#endif /* CUGL_APP_TARGET_H */
