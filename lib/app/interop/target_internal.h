/*
 * target_internal.h - what the files of a target share: the object, its
 * slots, and the table of functions each interop path fills in
 * (target_map.c, target_shared.c, target_host.c), as GLFW puts each
 * platform behind one table.
 *
 * A slot is one GL object and what CUDA reaches it by. A target has one;
 * pipelined, it rotates path->pipeline_slots of them (target.c): CUDA
 * takes the slot after the one it wrote last, GL the one written before.
 */
#ifndef CUGL_APP_TARGET_INTERNAL_H
#define CUGL_APP_TARGET_INTERNAL_H

#include "app_internal.h"
#include "cugl/app_target.h"

enum {
    CUGL__TARGET_SLOTS = 3,   /* the most slots a path rotates */
    CUGL__TARGET_RETIRED = 4, /* batches of retired CUDA objects awaiting their stream */
};

typedef struct cugl__app_slot {
    GLuint gl_name; /* what GL draws from or renders into */
    /* map: the registration, and during CUDA's turn the objects on it */
    cugl_graphics_resource *resource;
    cugl_buffer *mapped;
    cugl_surface *surface;
    cugl_texture *sampler;
    cugl_array *mapped_array; /* an image's array, held for copies in (copy_from) */
    bool held; /* written and still mapped: unmapped at the next turn */
    /* shared: the memory GL imports (an image's texture is its own; a
     * volume's is the target's 3-D texture in gl_name, filled from it) */
    cugl_app_shared *shared;
    bool filled; /* shared image: its texture holds this turn's pixels */
    /* host: the device memory CUDA uses, and the host memory between it
     * and GL: a staging buffer of GL's, mapped (staging_map) and
     * registered with CUDA (staged), with an event after CUDA's copy in
     * or out (staged_done; staged_pending: the copy not yet waited for)
     * and a fence after GL's use (gl_done); else pinned memory */
    cugl_buffer *device_buffer, *pinned_buffer;
    GLuint staging;
    void *staging_map;
    cugl_buffer *staged;
    cugl_event *staged_done;
    bool staged_pending;
    GLsync gl_done;
} cugl__app_slot;

/* The texture and surface objects of one map turn, released once the work
 * queued before `passed` has run. */
typedef struct cugl__app_retired {
    cugl_event *passed;
    cugl_texture *textures[CUGL_APP_TARGET_MAX_TURN];
    cugl_surface *surfaces[CUGL_APP_TARGET_MAX_TURN];
    int count;
} cugl__app_retired;

typedef struct cugl__app_path cugl__app_path;

struct cugl_app_target {
    const cugl__app_path *path;
    cugl_app_context *ctx;
    cugl_app_target_kind kind;
    cugl_app_direction direction;
    cugl_app_format format;
    int width, height, depth;
    size_t size;        /* bytes CUDA uses: a buffer's, or the linear image's */
    size_t pitch, slice; /* images and volumes in linear memory */
    GLenum internal_format, pixel_format, pixel_type;
    size_t texel;       /* bytes */
    cugl_device *device;       /* whose streams take the turns */
    cugl_device *gl_device;    /* the GL GPU's, where shared memory lives */
    cugl_device *writers[CUGL_APP_SHARED_MAX_WRITERS];
    int writer_count;
    cugl_app_timer *timer;
    cugl_app_cuda_use use; /* cugl_app_target_set_cuda_use's */
    char reason[512];

    cugl__app_slot slots[CUGL__TARGET_SLOTS];
    int slot_count;
    bool pipelined;
    int cuda_slot;    /* CUDA's slot this turn */
    int last_written; /* the slot of the last CUDA turn; -1: none */
    int previous;     /* the one written before it; -1: none */
    int gl_slot;      /* GL's slot this turn */
    bool cuda_open, gl_open;
    cugl_stream *turn_stream; /* the open CUDA turn's */
    cugl_event *turn_done;    /* after the last CUDA turn's work: destroy waits for it */
    long lockstep_turns;
    bool drawn_from_memory; /* shared RGBA8 image: drawn from the memory, no texture */
    bool host_staged;       /* host: through GL's staging buffers (target_host.c) */
    GLuint volume_texture;  /* shared volumes: the 3-D texture filled from the memory */

    cugl__app_retired retired[CUGL__TARGET_RETIRED];
    int retired_next;
};

/*
 * One interop path. The batch functions take the turn's targets, each on
 * its slot of this turn (t->slots[t->cuda_slot], or t->gl_slot for GL's).
 * Every function takes `who`, the public function its failures name.
 */
struct cugl__app_path {
    cugl_app_interop interop;
    int pipeline_slots; /* slots a pipelined target rotates */
    cugl_status (*slot_create)(cugl_app_target *t, cugl__app_slot *s, const void *initial,
                               cugl_stream *stream, const char *who);
    void (*slot_destroy)(cugl_app_target *t, cugl__app_slot *s);
    cugl_status (*cuda_begin)(cugl_app_target *const *t, int n, cugl_stream *stream,
                              cugl_app_access *out, const char *who);
    cugl_status (*cuda_end)(cugl_app_target *const *t, int n, cugl_stream *stream,
                            const char *who);
    cugl_status (*gl_begin)(cugl_app_target *const *t, int n, const char *who);
    cugl_status (*gl_end)(cugl_app_target *const *t, int n, const char *who);
};

extern const cugl__app_path cugl__app_path_map;
extern const cugl__app_path cugl__app_path_shared;
extern const cugl__app_path cugl__app_path_host;

/* target.c: the slot of CUDA's and of GL's turn. */
static inline cugl__app_slot *cugl__cuda_slot(cugl_app_target *t)
{
    return &t->slots[t->cuda_slot];
}

static inline cugl__app_slot *cugl__gl_slot(cugl_app_target *t)
{
    return &t->slots[t->gl_slot];
}

/* What the paths share (target_common.c). */

/* What CUDA does with the target this turn, the default resolved. */
cugl_app_cuda_use cugl__target_use(const cugl_app_target *t);

/* A phase of the target's timer (no-ops without one). */
void cugl__target_phase_begin(cugl_app_target *t, int phase, const char *name, bool cuda);
void cugl__target_phase_end(cugl_app_target *t, int phase);

/* A GL texture of the target's kind, format and size (2-D or
 * 3-D, nearest, clamped), or a buffer of its size with `flags` and
 * `initial` contents. */
cugl_status cugl__target_gl_texture(cugl_app_target *t, GLuint *name, const char *who);
cugl_status cugl__target_gl_buffer(cugl_app_target *t, GLuint *name, GLbitfield flags,
                                   const void *initial, const char *who);

/* `size` bytes of host memory into the start of `dst`, on
 * `stream`, waited for. */
cugl_status cugl__target_upload(cugl_stream *stream, cugl_buffer *dst, const void *data,
                                size_t size);

/* Host memory into slot `s`'s GL object, from `pixels` on the
 * CPU or from offset 0 of the GL buffer `unpack` (not 0) on the GPU:
 * `bytes` at a buffer's start, or an image of the target's size whose
 * rows are `row_pixels` apart (0: tight). The unpack state is put back;
 * GL's errors are the caller's to check. */
void cugl__target_upload_gl(const cugl_app_target *t, const cugl__app_slot *s, GLuint unpack,
                            const void *pixels, size_t bytes, GLint row_pixels);

/* The textures and surfaces of a retired set released; the set empty. */
void cugl__target_free_retired(cugl__app_retired *r);

/* Release these texture and surface objects once the work
 * queued on `stream` so far has run. */
cugl_status cugl__target_retire(cugl_app_target *t, cugl_stream *stream,
                                cugl_texture *const *textures, cugl_surface *const *surfaces,
                                int count);

#endif /* CUGL_APP_TARGET_INTERNAL_H */
