/*
 * dlpack_compat.h - <dlpack/dlpack.h>, and DLPack 1.x's versioned tensor
 * where the installed header predates it (Debian 12 has 0.6), laid out as
 * the DLPack 1.0 specification fixes it.
 */
#ifndef CUGL_TEST_DLPACK_COMPAT_H
#define CUGL_TEST_DLPACK_COMPAT_H

#include <stdint.h>

#include <dlpack/dlpack.h>

#ifndef DLPACK_MAJOR_VERSION
struct DLManagedTensorVersioned {
    struct {
        uint32_t major, minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
};
#endif

#endif /* CUGL_TEST_DLPACK_COMPAT_H */
