/*
 * graphics.c - GL buffers and images registered with CUDA (cuGraphicsGL*).
 *
 * No GL call and no GL header: names and targets are integers. The state
 * is registered -> mapped -> registered -> ... -> closed. Each buffer or
 * array handed out from a mapping is a "link": it holds a reference to the
 * resource, and the resource keeps the links of its current mapping so that
 * unmapping closes them all. The link of the object that map returned also
 * owns the mapping: closing that object unmaps.
 */
#include <stdlib.h>

#include "core_internal.h"

typedef struct link link;

struct cugl_graphics_resource {
    cugl__ref ref;
    CUgraphicsResource handle;
    cugl_device *device;
    uint32_t name;
    uint32_t target; /* 0 for buffers */
    unsigned flags;
    unsigned map_flags;
    bool is_buffer;
    bool mapped;
    bool closed;
    cugl_stream *map_stream;   /* a reference while mapped */
    cugl_stream *unmap_stream; /* a reference, or NULL: the map stream */
    link *links;               /* what the current mapping handed out */
};

struct link {
    link *next;
    cugl_graphics_resource *resource; /* a reference */
    cugl_buffer *buffer;              /* exactly one of buffer and array */
    cugl_array *array;
    bool owns_mapping;
};

enum {
    MAP_FLAGS = CUGL_GRAPHICS_READ_ONLY | CUGL_GRAPHICS_WRITE_DISCARD,
    IMAGE_FLAGS = CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_TEXTURE_GATHER,
    ALL_FLAGS = MAP_FLAGS | IMAGE_FLAGS,
};

static const struct {
    uint32_t target;
    const char *name;
} targets[] = {
    {CUGL_GL_TEXTURE_2D, "GL_TEXTURE_2D"},
    {CUGL_GL_TEXTURE_RECTANGLE, "GL_TEXTURE_RECTANGLE"},
    {CUGL_GL_TEXTURE_CUBE_MAP, "GL_TEXTURE_CUBE_MAP"},
    {CUGL_GL_TEXTURE_3D, "GL_TEXTURE_3D"},
    {CUGL_GL_TEXTURE_2D_ARRAY, "GL_TEXTURE_2D_ARRAY"},
    {CUGL_GL_RENDERBUFFER, "GL_RENDERBUFFER"},
};

static const char *target_name(uint32_t target)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (targets[i].target == target)
            return targets[i].name;
    return NULL;
}

static const char *const formats_that_work =
    "registrable images have a sized internal format of 1, 2 or 4 channels: GL_R, GL_RG or "
    "GL_RGBA x 8, 16, 16F, 32F, 8UI, 16UI, 32UI, 8I, 16I, 32I, and GL_RGB8 and "
    "GL_SRGB8_ALPHA8 as four bytes a texel (GL_RGB32F -> GL_RGBA32F); not depth, "
    "compressed, multisampled or bindless textures, and the texture needs storage "
    "(glTexStorage*) before it is registered";

static cugl_status check_resource(const cugl_graphics_resource *r, const char *who)
{
    if (!r)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "resource is NULL");
    if (r->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the graphics resource has been closed");
    return CUGL_OK;
}

static const char *kind_name(const cugl_graphics_resource *r)
{
    return r->is_buffer ? "GL buffer" : target_name(r->target);
}

/* ---- Registration ------------------------------------------------------ */

static cugl_status check_flags(unsigned flags, bool image, const char *who)
{
    if (flags & ~(unsigned)ALL_FLAGS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "unknown flags 0x%x; use CUGL_GRAPHICS_NONE, READ_ONLY, "
                          "WRITE_DISCARD, SURFACE_LOAD_STORE, TEXTURE_GATHER",
                          flags & ~(unsigned)ALL_FLAGS);
    if ((flags & MAP_FLAGS) == MAP_FLAGS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "READ_ONLY and WRITE_DISCARD exclude each other");
    if (!image && (flags & IMAGE_FLAGS))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "SURFACE_LOAD_STORE and TEXTURE_GATHER are for images, not buffers");
    return CUGL_OK;
}

/* The most CUDA devices asked for that run one GL context; the driver
 * reports no more than fit. */
enum { GL_DEVICES_MAX = 16 };

/* The CUDA devices that run the current GL context: at most
 * GL_DEVICES_MAX into devs, their number into *count. */
static CUresult gl_devices(CUdevice devs[GL_DEVICES_MAX], unsigned *count)
{
    *count = 0;
    CUresult r = cugl__cu.cuGLGetDevices(count, devs, GL_DEVICES_MAX, CUGL__GL_DEVICE_LIST_ALL);
    if (*count > GL_DEVICES_MAX)
        *count = GL_DEVICES_MAX;
    return r;
}

/*
 * Whether the GL context current on this thread runs on `device`: the
 * driver's cuGLGetDevices says which CUDA devices run it. Its failures are
 * the common causes of registration errors, so they are explained here.
 */
static cugl_status check_gl_context(cugl_device *device, const char *who)
{
    if (!cugl__cu.cuGLGetDevices)
        return CUGL_OK; /* registration itself will say */
    CUdevice devs[GL_DEVICES_MAX];
    unsigned count = 0;
    CUresult r = gl_devices(devs, &count);
    if (r == CUDA_SUCCESS) {
        for (unsigned i = 0; i < count; i++)
            if (devs[i] == device->handle)
                return CUGL_OK;
        if (count == 0)
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                              "the current GL context runs on no CUDA device");
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the current GL context runs on CUDA device %d, not on device %d: "
                          "create the GL context on device %d's GPU (headless: the EGL "
                          "device whose EGL_CUDA_DEVICE_NV is %d)",
                          (int)devs[0], device->ordinal, device->ordinal, device->ordinal);
    }
    if (r == CUDA_ERROR_INVALID_GRAPHICS_CONTEXT || r == CUDA_ERROR_INVALID_CONTEXT)
        return cugl__fail_cu(CUGL_ERROR_INVALID_STATE, (int)r, who,
                             "no GL context of the NVIDIA driver is current on this thread "
                             "(%s): make the GL context current on this thread first",
                             cugl__cu_error_name(r));
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_OPERATING_SYSTEM || r == CUDA_ERROR_UNKNOWN)
        return cugl__fail_cu(CUGL_ERROR_NOT_SUPPORTED, (int)r, who,
                             "the current GL context does not run on a CUDA device "
                             "(cuGLGetDevices: %s): it "
                             "comes from Mesa (llvmpipe), another vendor or another GPU. Make "
                             "it on the NVIDIA GPU of device %d: headless, the EGL device "
                             "platform; on a hybrid desktop, __NV_PRIME_RENDER_OFFLOAD=1 "
                             "__GLX_VENDOR_LIBRARY_NAME=nvidia. Under WSL2, CUDA-GL interop is "
                             "not available",
                             cugl__cu_error_name(r), device->ordinal);
    return cugl__cu_status(r, who, "cuGLGetDevices");
}

static cugl_status register_common(cugl_graphics_resource **out, cugl_device *device,
                                   uint32_t name, uint32_t target, unsigned flags, bool image,
                                   const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    *out = NULL;
    if (!device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "device is NULL");
    if (name == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "GL name 0 is no %s", image ? "image" : "buffer");
    if (image && !target_name(target))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "target 0x%x cannot be registered; use GL_TEXTURE_2D, "
                          "GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D, "
                          "GL_TEXTURE_2D_ARRAY or GL_RENDERBUFFER",
                          target);
    CUGL__TRY(check_flags(flags, image, who));
    CUGL__TRY(cugl__device_activate(device, who));
    if (!cugl__cu.cuGraphicsGLRegisterBuffer || !cugl__cu.cuGraphicsGLRegisterImage)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "this CUDA driver has no OpenGL interop entry points");
    CUGL__TRY(check_gl_context(device, who));

    CUgraphicsResource handle = NULL;
    CUresult r = image ? cugl__cu.cuGraphicsGLRegisterImage(&handle, name, target, flags)
                       : cugl__cu.cuGraphicsGLRegisterBuffer(&handle, name, flags);
    if (r != CUDA_SUCCESS) {
        if (image && (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED ||
                      r == CUDA_ERROR_UNKNOWN))
            return cugl__fail_cu(CUGL_ERROR_NOT_SUPPORTED, (int)r, who,
                                 "cuGraphicsGLRegisterImage refused %s %u (%s): it is "
                                 "not a %s with storage, or its format cannot be "
                                 "registered; %s",
                                 target_name(target), name, cugl__cu_error_name(r),
                                 target_name(target), formats_that_work);
        if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE)
            return cugl__fail_cu(CUGL_ERROR_CUDA, (int)r, who,
                                 "%s refused GL %s %u (%s): not a name of the current "
                                 "GL context with storage",
                                 image ? "cuGraphicsGLRegisterImage"
                                       : "cuGraphicsGLRegisterBuffer",
                                 image ? target_name(target) : "buffer", name,
                                 cugl__cu_error_name(r));
        return cugl__cu_status(r, who, image ? "cuGraphicsGLRegisterImage"
                                             : "cuGraphicsGLRegisterBuffer");
    }
    /* Some drivers have returned success with no handle. */
    if (!handle)
        return cugl__fail(CUGL_ERROR_CUDA, who,
                          "the driver registered GL %s %u but returned no resource",
                          image ? "image" : "buffer", name);

    cugl_graphics_resource *res = calloc(1, sizeof *res);
    if (!res) {
        cugl__cu.cuGraphicsUnregisterResource(handle);
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a graphics resource");
    }
    cugl__ref_init(&res->ref);
    res->handle = handle;
    res->device = device;
    res->name = name;
    res->target = image ? target : 0;
    res->flags = flags;
    res->map_flags = flags & MAP_FLAGS;
    res->is_buffer = !image;
    *out = res;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_graphics_resource_from_gl_buffer(cugl_graphics_resource **out,
                                                           cugl_device *device,
                                                           uint32_t gl_buffer, unsigned flags)
{
    return register_common(out, device, gl_buffer, 0, flags, false, __func__);
}

CUGL_API cugl_status cugl_graphics_resource_from_gl_image(cugl_graphics_resource **out,
                                                          cugl_device *device,
                                                          uint32_t gl_image, uint32_t gl_target,
                                                          unsigned flags)
{
    return register_common(out, device, gl_image, gl_target, flags, true, __func__);
}

CUGL_API cugl_status cugl_gl_devices(int *ordinals, int capacity, int *count)
{
    CUGL__CHECK_NOT_NULL(count);
    *count = 0;
    CUGL__CHECK_ARG(capacity >= 0 && (ordinals || capacity == 0),
                    "ordinals is NULL or capacity (%d) negative", capacity);
    CUGL__TRY(cugl__driver_load(__func__));
    if (!cugl__cu.cuGLGetDevices)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "this CUDA driver has no OpenGL interop entry points");
    /* cuGLGetDevices needs a CUDA context: the current one, else device 0's
     * primary context for the call only. */
    CUcontext current = NULL;
    CUGL__TRY(CUGL_CU(cuCtxGetCurrent, &current));
    if (!current) {
        cugl_device *dev0 = NULL;
        CUGL__TRY(cugl_device_get(&dev0, 0));
        CUGL__TRY(cugl_device_set_current(dev0));
    }
    CUdevice devs[GL_DEVICES_MAX];
    unsigned n = 0;
    CUresult r = gl_devices(devs, &n);
    if (!current)
        cugl__cu.cuCtxSetCurrent(NULL);
    if (r == CUDA_ERROR_INVALID_GRAPHICS_CONTEXT || r == CUDA_ERROR_INVALID_CONTEXT)
        return cugl__fail_cu(CUGL_ERROR_INVALID_STATE, (int)r, __func__,
                             "no GL context of the NVIDIA driver is current on this thread (%s)",
                             cugl__cu_error_name(r));
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_OPERATING_SYSTEM || r == CUDA_ERROR_UNKNOWN)
        return cugl__fail_cu(CUGL_ERROR_NOT_SUPPORTED, (int)r, __func__,
                             "the current GL context runs on no CUDA device (%s)",
                             cugl__cu_error_name(r));
    CUGL__TRY(cugl__cu_status(r, __func__, "cuGLGetDevices"));
    for (unsigned i = 0; i < n && (int)i < capacity; i++)
        ordinals[i] = (int)devs[i];
    *count = (int)n;
    return CUGL_OK;
}

/* ---- Links: what a mapping hands out ---------------------------------- */

static void unlink_from(cugl_graphics_resource *res, link *l)
{
    for (link **p = &res->links; *p; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            l->next = NULL;
            return;
        }
    }
}

static cugl_status unmap(cugl_graphics_resource *res, cugl_stream *stream, const char *who);
static cugl_status check_unmap_stream(const cugl_graphics_resource *res,
                                      const cugl_stream *stream, const char *who);

/* A handed-out object is closing: if it owns the mapping, unmap. The
 * object closes whatever happens, so a stream of another device is
 * refused and the unmap ordered as if none was given: nothing stays
 * mapped. */
static cugl_status link_on_close(link *l, cugl_stream *stream, const char *who)
{
    cugl_graphics_resource *res = l->resource;
    bool owner = l->owns_mapping;
    unlink_from(res, l);
    if (!owner || !res->mapped || res->closed)
        return CUGL_OK;
    cugl_status refused = check_unmap_stream(res, stream, who);
    if (refused == CUGL_OK)
        return unmap(res, stream, who);
    cugl_status st = unmap(res, NULL, who);
    return st != CUGL_OK ? st : refused;
}

/* The close hook of every buffer and array a mapping hands out. For an
 * array, whose close returns nothing, a failed unmap reaches the error
 * callback and cugl_last_error() only. */
static cugl_status object_on_close(void *owner, cugl_stream *stream)
{
    link *l = owner;
    return link_on_close(l, stream, l->buffer ? "cugl_buffer_close" : "cugl_array_close");
}

static void link_release(void *owner)
{
    link *l = owner;
    cugl_graphics_resource *res = l->resource;
    unlink_from(res, l);
    free(l);
    cugl_graphics_resource_release(res);
}

static link *link_new(cugl_graphics_resource *res, bool owns_mapping)
{
    link *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->resource = cugl_graphics_resource_retain(res);
    l->owns_mapping = owns_mapping;
    return l;
}

static void link_add(cugl_graphics_resource *res, link *l)
{
    l->next = res->links;
    res->links = l;
}

/* Close everything the current mapping handed out (without unmapping again). */
static void close_links(cugl_graphics_resource *res)
{
    while (res->links) {
        link *l = res->links;
        res->links = l->next;
        l->next = NULL;
        if (l->buffer) {
            l->buffer->owner.on_close = NULL;
            cugl_buffer_close(l->buffer, NULL); /* releases the link */
        } else {
            l->array->owner.on_close = NULL;
            cugl_array_close(l->array); /* releases the link */
        }
    }
}

static cugl_status new_buffer(cugl_buffer **out, cugl_graphics_resource *res,
                              bool owns_mapping, const char *who)
{
    CUdeviceptr ptr = 0;
    size_t size = 0;
    CUGL__TRY(CUGL_CU_AS(who, cuGraphicsResourceGetMappedPointer, &ptr, &size, res->handle));
    link *l = link_new(res, owns_mapping);
    if (!l)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a buffer");
    cugl_buffer *b = NULL;
    cugl_status st = cugl__buffer_wrap(
        &b, (uint64_t)ptr, size,
        &(cugl__memory_access){.device_id = res->device->ordinal, .device = true},
        (cugl__owner){l, object_on_close, link_release}, who);
    if (st != CUGL_OK) {
        link_release(l);
        return st;
    }
    l->buffer = b;
    link_add(res, l);
    *out = b;
    return CUGL_OK;
}

static cugl_status new_array(cugl_array **out, cugl_graphics_resource *res, unsigned layer,
                             unsigned level, bool owns_mapping, const char *who)
{
    CUarray handle = NULL;
    CUresult r = cugl__cu.cuGraphicsSubResourceGetMappedArray(&handle, res->handle, layer, level);
    if (r == CUDA_ERROR_INVALID_VALUE)
        return cugl__fail_cu(CUGL_ERROR_INVALID_ARGUMENT, (int)r, who,
                             "%s %u has no layer %u at mip level %u (%s)", kind_name(res),
                             res->name, layer, level, cugl__cu_error_name(r));
    CUGL__TRY(cugl__cu_status(r, who, "cuGraphicsSubResourceGetMappedArray"));
    link *l = link_new(res, owns_mapping);
    if (!l)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate an array");
    cugl_array *a = NULL;
    unsigned flags = 0;
    if (res->flags & CUGL_GRAPHICS_SURFACE_LOAD_STORE)
        flags |= CUDA_ARRAY3D_SURFACE_LDST;
    if (res->flags & CUGL_GRAPHICS_TEXTURE_GATHER)
        flags |= CUDA_ARRAY3D_TEXTURE_GATHER;
    cugl_status st = cugl__array_wrap(&a, handle, res->device, flags,
                                      (cugl__owner){l, object_on_close, link_release}, who);
    if (st != CUGL_OK) {
        link_release(l);
        return st;
    }
    l->array = a;
    link_add(res, l);
    *out = a;
    return CUGL_OK;
}

/* ---- Map and unmap ------------------------------------------------------ */

static void forget_streams(cugl_graphics_resource *res)
{
    cugl_stream_release(res->map_stream);
    cugl_stream_release(res->unmap_stream);
    res->map_stream = res->unmap_stream = NULL;
}

/* The stream an unmap without one is ordered on: the override, else the
 * mapping stream; one closed since is replaced by the legacy default stream. */
static CUstream unmap_stream_of(const cugl_graphics_resource *res)
{
    const cugl_stream *s = res->unmap_stream ? res->unmap_stream : res->map_stream;
    return s && !s->closed ? s->handle : NULL;
}

/* A stream an unmap of `res` may be ordered on: none (NULL), or an open
 * stream of the resource's device. */
static cugl_status check_unmap_stream(const cugl_graphics_resource *res,
                                      const cugl_stream *stream, const char *who)
{
    if (!stream)
        return CUGL_OK;
    CUGL__TRY(cugl__stream_check(stream, who));
    if (stream->device != res->device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is on device %d, the resource on device %d",
                          stream->device->ordinal, res->device->ordinal);
    return CUGL_OK;
}

/* Unmap; the handed-out objects are closed either way, but a resource the
 * driver failed to unmap stays mapped (unmap or close may try again). */
static cugl_status unmap(cugl_graphics_resource *res, cugl_stream *stream, const char *who)
{
    CUstream h = stream ? stream->handle : unmap_stream_of(res);
    close_links(res);
    CUGL__TRY(cugl__device_activate(res->device, who));
    CUGL__TRY(CUGL_CU_AS(who, cuGraphicsUnmapResources, 1, &res->handle, h));
    res->mapped = false;
    forget_streams(res);
    return CUGL_OK;
}

/* Undo a map whose hand-out failed, keeping that failure's message. */
static void unmap_quietly(cugl_graphics_resource *res, cugl_stream *stream)
{
    close_links(res);
    cugl__cu.cuGraphicsUnmapResources(1, &res->handle, stream->handle);
    res->mapped = false;
    forget_streams(res);
}

/*
 * Check a list of resources for map (`mapped` false: each must be unmapped)
 * or unmap (`mapped` true): none NULL or closed, none twice, all on one
 * device, and the stream (NULL allowed for unmap) on it too.
 */
static cugl_status check_list(cugl_graphics_resource *const *resources, size_t count,
                              cugl_stream *stream, bool mapped, const char *who)
{
    if (!resources)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "resources is NULL");
    if (count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "count is 0");
    if (stream || !mapped)
        CUGL__TRY(cugl__stream_check(stream, who));
    for (size_t i = 0; i < count; i++) {
        cugl_graphics_resource *r = resources[i];
        if (!r)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "resources[%zu] is NULL", i);
        if (r->closed)
            return cugl__fail(CUGL_ERROR_CLOSED, who,
                              "resources[%zu] (%s %u) has been closed", i, kind_name(r), r->name);
        if (r->mapped != mapped)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                              mapped ? "resources[%zu] (%s %u) is not mapped; nothing was unmapped"
                                     : "resources[%zu] (%s %u) is already mapped; unmap it first",
                              i, kind_name(r), r->name);
        if (r->device != resources[0]->device)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "resources[%zu] is on device %d, resources[0] on device %d", i,
                              r->device->ordinal, resources[0]->device->ordinal);
        for (size_t j = 0; j < i; j++)
            if (resources[j] == r)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "resources[%zu] and resources[%zu] are the same resource", j, i);
    }
    if (stream && stream->device && stream->device != resources[0]->device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is on device %d, the resources on device %d",
                          stream->device->ordinal, resources[0]->device->ordinal);
    return CUGL_OK;
}

/* Map `count` checked resources in one driver call. */
static cugl_status map_many(cugl_graphics_resource *const *resources, size_t count,
                            cugl_stream *stream, const char *who)
{
    enum { LOCAL = 16 };
    CUgraphicsResource local[LOCAL];
    CUgraphicsResource *handles = count <= LOCAL ? local : malloc(count * sizeof *handles);
    if (!handles)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate %zu handles", count);
    for (size_t i = 0; i < count; i++)
        handles[i] = resources[i]->handle;
    cugl_status st = cugl__device_activate(resources[0]->device, who);
    if (st == CUGL_OK) {
        if (count > UINT32_MAX)
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "count %zu is too large", count);
        else
            st = CUGL_CU_AS(who, cuGraphicsMapResources, (unsigned)count, handles,
                            stream->handle);
    }
    if (handles != local)
        free(handles);
    if (st != CUGL_OK)
        return st;
    for (size_t i = 0; i < count; i++) {
        resources[i]->mapped = true;
        resources[i]->map_stream = cugl_stream_retain(stream);
    }
    return CUGL_OK;
}

CUGL_API cugl_status cugl_graphics_map(cugl_graphics_resource *const *resources, size_t count,
                                       cugl_stream *stream)
{
    CUGL__TRY(check_list(resources, count, stream, false, __func__));
    return map_many(resources, count, stream, __func__);
}

CUGL_API cugl_status cugl_graphics_resource_map(cugl_buffer **out,
                                                cugl_graphics_resource *resource,
                                                cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(check_resource(resource, __func__));
    CUGL__CHECK_ARG(resource->is_buffer,
                    "%s %u is an image; map it with cugl_graphics_resource_map_array",
                    kind_name(resource), resource->name);
    CUGL__TRY(check_list(&resource, 1, stream, false, __func__));
    CUGL__TRY(map_many(&resource, 1, stream, __func__));
    cugl_status st = new_buffer(out, resource, true, __func__);
    if (st != CUGL_OK)
        unmap_quietly(resource, stream);
    return st;
}

CUGL_API cugl_status cugl_graphics_resource_map_array(cugl_array **out,
                                                      cugl_graphics_resource *resource,
                                                      cugl_stream *stream, unsigned layer,
                                                      unsigned level)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(check_resource(resource, __func__));
    CUGL__CHECK_ARG(!resource->is_buffer,
                    "GL buffer %u is not an image; map it with cugl_graphics_resource_map",
                    resource->name);
    CUGL__TRY(check_list(&resource, 1, stream, false, __func__));
    CUGL__TRY(map_many(&resource, 1, stream, __func__));
    cugl_status st = new_array(out, resource, layer, level, true, __func__);
    if (st != CUGL_OK)
        unmap_quietly(resource, stream);
    return st;
}

static cugl_status check_mapped(const cugl_graphics_resource *r, const char *who)
{
    CUGL__TRY(check_resource(r, who));
    if (!r->mapped)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who, "%s %u is not mapped", kind_name(r),
                          r->name);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_graphics_resource_buffer(cugl_buffer **out,
                                                   cugl_graphics_resource *resource)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(check_resource(resource, __func__));
    CUGL__CHECK_ARG(resource->is_buffer, "%s %u is an image; use cugl_graphics_resource_array",
                    kind_name(resource), resource->name);
    CUGL__TRY(check_mapped(resource, __func__));
    CUGL__TRY(cugl__device_activate(resource->device, __func__));
    return new_buffer(out, resource, false, __func__);
}

CUGL_API cugl_status cugl_graphics_resource_array(cugl_array **out,
                                                  cugl_graphics_resource *resource,
                                                  unsigned layer, unsigned level)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(check_resource(resource, __func__));
    CUGL__CHECK_ARG(!resource->is_buffer,
                    "GL buffer %u is not an image; use cugl_graphics_resource_buffer",
                    resource->name);
    CUGL__TRY(check_mapped(resource, __func__));
    CUGL__TRY(cugl__device_activate(resource->device, __func__));
    return new_array(out, resource, layer, level, false, __func__);
}

CUGL_API cugl_status cugl_graphics_resource_unmap(cugl_graphics_resource *resource,
                                                  cugl_stream *stream)
{
    CUGL__TRY(check_mapped(resource, __func__));
    CUGL__TRY(check_unmap_stream(resource, stream, __func__));
    return unmap(resource, stream, __func__);
}

CUGL_API cugl_status cugl_graphics_unmap(cugl_graphics_resource *const *resources,
                                         size_t count, cugl_stream *stream)
{
    CUGL__TRY(check_list(resources, count, stream, true, __func__));
    CUGL__TRY(cugl__device_activate(resources[0]->device, __func__));
    enum { LOCAL = 16 };
    CUgraphicsResource local[LOCAL];
    CUgraphicsResource *handles = count <= LOCAL ? local : malloc(count * sizeof *handles);
    /* Per resource: 0 to do, 1 in the current call, 2 unmapped, 3 failed. */
    unsigned char *state = calloc(count, 1);
    if (!handles || !state) {
        if (handles != local)
            free(handles);
        free(state);
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate %zu handles",
                          count);
    }
    /* One driver call per distinct stream, in the order streams first appear. */
    cugl_status st = CUGL_OK;
    for (size_t i = 0; i < count; i++) {
        if (state[i])
            continue;
        CUstream s = stream ? stream->handle : unmap_stream_of(resources[i]);
        unsigned n = 0;
        for (size_t j = i; j < count; j++) {
            if (state[j] || (stream == NULL && unmap_stream_of(resources[j]) != s))
                continue;
            close_links(resources[j]);
            handles[n++] = resources[j]->handle;
            state[j] = 1;
        }
        cugl_status one = CUGL_CU(cuGraphicsUnmapResources, n, handles, s);
        for (size_t j = i; j < count; j++)
            if (state[j] == 1)
                state[j] = one == CUGL_OK ? 2 : 3;
        if (st == CUGL_OK)
            st = one;
    }
    /* Those the driver failed to unmap stay mapped. */
    for (size_t i = 0; i < count; i++) {
        if (state[i] == 2) {
            resources[i]->mapped = false;
            forget_streams(resources[i]);
        }
    }
    if (handles != local)
        free(handles);
    free(state);
    return st;
}

CUGL_API cugl_status cugl_graphics_resource_set_unmap_stream(cugl_graphics_resource *resource,
                                                             cugl_stream *stream)
{
    CUGL__TRY(check_mapped(resource, __func__));
    CUGL__TRY(check_unmap_stream(resource, stream, __func__));
    cugl_stream *old = resource->unmap_stream;
    resource->unmap_stream = cugl_stream_retain(stream);
    cugl_stream_release(old);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_graphics_resource_set_map_flags(cugl_graphics_resource *resource,
                                                          unsigned flags)
{
    CUGL__TRY(check_resource(resource, __func__));
    CUGL__CHECK_ARG((flags & ~(unsigned)MAP_FLAGS) == 0,
                    "map flags 0x%x: use CUGL_GRAPHICS_NONE, READ_ONLY or WRITE_DISCARD", flags);
    CUGL__CHECK_ARG(flags != MAP_FLAGS, "READ_ONLY and WRITE_DISCARD exclude each other");
    if (resource->mapped)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "%s %u is mapped; change its map flags between maps",
                          kind_name(resource), resource->name);
    CUGL__TRY(cugl__device_activate(resource->device, __func__));
    CUGL__TRY(CUGL_CU(cuGraphicsResourceSetMapFlags, resource->handle, flags));
    resource->map_flags = flags;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_graphics_resource_close(cugl_graphics_resource *resource,
                                                  cugl_stream *stream)
{
    if (!resource || resource->closed)
        return CUGL_OK;
    CUGL__TRY(check_unmap_stream(resource, stream, __func__));
    cugl_status st = CUGL_OK;
    if (resource->mapped)
        st = unmap(resource, stream, __func__);
    /* Unregistered even where the device cannot be made current: the
     * handle knows its context, and a registration left behind holds the
     * driver's memory until the process ends. */
    cugl_status act = cugl__device_activate(resource->device, __func__);
    cugl_status un = CUGL_CU(cuGraphicsUnregisterResource, resource->handle);
    if (st == CUGL_OK)
        st = act != CUGL_OK ? act : un;
    /* Closed whatever the driver said: nothing of it is used again. */
    resource->mapped = false;
    forget_streams(resource);
    resource->handle = NULL;
    resource->closed = true;
    return st;
}

CUGL_API bool cugl_graphics_resource_is_mapped(const cugl_graphics_resource *resource)
{
    return resource && resource->mapped;
}

CUGL_API bool cugl_graphics_resource_is_closed(const cugl_graphics_resource *resource)
{
    return !resource || resource->closed;
}

CUGL_API bool cugl_graphics_resource_is_buffer(const cugl_graphics_resource *resource)
{
    return resource && resource->is_buffer;
}

CUGL_API unsigned cugl_graphics_resource_flags(const cugl_graphics_resource *resource)
{
    return resource ? resource->flags : 0;
}

CUGL_API unsigned cugl_graphics_resource_map_flags(const cugl_graphics_resource *resource)
{
    return resource ? resource->map_flags : 0;
}

CUGL_API uint32_t cugl_graphics_resource_gl_name(const cugl_graphics_resource *resource)
{
    return resource ? resource->name : 0;
}

CUGL_API uint32_t cugl_graphics_resource_gl_target(const cugl_graphics_resource *resource)
{
    return resource ? resource->target : 0;
}

CUGL_API void *cugl_graphics_resource_handle(const cugl_graphics_resource *resource)
{
    return resource ? (void *)resource->handle : NULL;
}

CUGL_API cugl_device *cugl_graphics_resource_device(const cugl_graphics_resource *resource)
{
    return resource ? resource->device : NULL;
}

CUGL_API cugl_graphics_resource *cugl_graphics_resource_retain(cugl_graphics_resource *resource)
{
    if (resource)
        cugl__ref_inc(&resource->ref);
    return resource;
}

CUGL_API void cugl_graphics_resource_release(cugl_graphics_resource *resource)
{
    if (!resource || !cugl__ref_dec(&resource->ref))
        return;
    cugl_graphics_resource_close(resource, NULL);
    free(resource);
}
