/*
 * vk_semaphore.c - binary semaphores that GL and CUDA both import, made by
 * Vulkan (loaded at run time, as libcuda is).
 *
 * Neither GL nor CUDA can make a semaphore the other imports; Vulkan can
 * (VK_KHR_external_semaphore_fd). One Vulkan device per GPU, found by the
 * CUDA device's UUID, is made at the first semaphore and kept for the
 * process: each semaphore is exported twice (GL and CUDA each import a
 * descriptor of the same payload) and Vulkan's own handle is let go at once.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "app_internal.h"

enum { MAX_GPUS = 16 };

typedef struct vk_gpu {
    uint8_t uuid[VK_UUID_SIZE];
    VkPhysicalDevice physical;
    VkDevice device; /* made at its first semaphore */
    bool failed;     /* making it failed: why_not says why */
} vk_gpu;

static struct {
    pthread_mutex_t lock;
    bool tried;
    char why_not[256]; /* why Vulkan is not there at all; "" where it is */
    void *lib;
    VkInstance instance;
    vk_gpu gpus[MAX_GPUS];
    int gpu_count;
    PFN_vkGetInstanceProcAddr get_instance_proc;
    PFN_vkGetDeviceProcAddr get_device_proc;
    PFN_vkCreateDevice create_device;
    PFN_vkCreateSemaphore create_semaphore;
    PFN_vkDestroySemaphore destroy_semaphore;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd;
} vk = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define INSTANCE_PROC(name) ((PFN_##name)vk.get_instance_proc(vk.instance, #name))

/* The loader, an instance and its GPUs' UUIDs; vk.why_not says why not. */
static void load(void)
{
    vk.tried = true;
    vk.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!vk.lib) {
        snprintf(vk.why_not, sizeof vk.why_not, "no Vulkan loader (libvulkan.so.1: %s)",
                 dlerror());
        return;
    }
    /* POSIX: a function pointer read through an object pointer. */
    *(void **)&vk.get_instance_proc = dlsym(vk.lib, "vkGetInstanceProcAddr");
    PFN_vkCreateInstance create_instance =
        vk.get_instance_proc ? INSTANCE_PROC(vkCreateInstance) : NULL;
    if (!create_instance) {
        snprintf(vk.why_not, sizeof vk.why_not, "the Vulkan loader has no vkCreateInstance");
        return;
    }
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "cugl",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkResult r = create_instance(&info, NULL, &vk.instance);
    if (r != VK_SUCCESS) {
        snprintf(vk.why_not, sizeof vk.why_not, "vkCreateInstance failed (VkResult %d)", r);
        return;
    }
    PFN_vkEnumeratePhysicalDevices enumerate = INSTANCE_PROC(vkEnumeratePhysicalDevices);
    PFN_vkGetPhysicalDeviceProperties2 properties =
        INSTANCE_PROC(vkGetPhysicalDeviceProperties2);
    vk.get_device_proc = INSTANCE_PROC(vkGetDeviceProcAddr);
    vk.create_device = INSTANCE_PROC(vkCreateDevice);
    uint32_t count = MAX_GPUS;
    VkPhysicalDevice physical[MAX_GPUS];
    if (!enumerate || !properties || !vk.get_device_proc || !vk.create_device ||
        (r = enumerate(vk.instance, &count, physical)) < 0) {
        snprintf(vk.why_not, sizeof vk.why_not,
                 "the Vulkan instance lists no physical devices (VkResult %d)", r);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceIDProperties id = {.sType =
                                               VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                         .pNext = &id};
        properties(physical[i], &p);
        vk_gpu *g = &vk.gpus[vk.gpu_count++];
        memcpy(g->uuid, id.deviceUUID, sizeof g->uuid);
        g->physical = physical[i];
    }
}

/* A logical device on `g` with external semaphores, and the entry points. */
static bool make_device(vk_gpu *g, char *why, size_t why_size)
{
    uint32_t families = 1;
    VkQueueFamilyProperties family;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties queue_families =
        INSTANCE_PROC(vkGetPhysicalDeviceQueueFamilyProperties);
    PFN_vkGetPhysicalDeviceExternalSemaphoreProperties external =
        INSTANCE_PROC(vkGetPhysicalDeviceExternalSemaphoreProperties);
    VkPhysicalDeviceExternalSemaphoreInfo ask = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
        .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT,
    };
    VkExternalSemaphoreProperties can = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    if (!queue_families || !external) {
        snprintf(why, why_size, "the Vulkan instance lacks Vulkan 1.1's queries");
        return false;
    }
    external(g->physical, &ask, &can);
    if (!(can.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT)) {
        snprintf(why, why_size, "Vulkan cannot export its semaphores as opaque descriptors "
                                "on this GPU");
        return false;
    }
    queue_families(g->physical, &families, &family);
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = 0,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    const char *extensions[] = {VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .enabledExtensionCount = 1,
        .ppEnabledExtensionNames = extensions,
    };
    VkResult r = vk.create_device(g->physical, &info, NULL, &g->device);
    if (r != VK_SUCCESS) {
        g->device = VK_NULL_HANDLE;
        snprintf(why, why_size, "vkCreateDevice with %s failed (VkResult %d)",
                 VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, r);
        return false;
    }
    /* Entry points of the first device serve all: one driver (NVIDIA's). */
    if (!vk.create_semaphore) {
        vk.create_semaphore = (PFN_vkCreateSemaphore)vk.get_device_proc(g->device,
                                                                        "vkCreateSemaphore");
        vk.destroy_semaphore = (PFN_vkDestroySemaphore)vk.get_device_proc(
            g->device, "vkDestroySemaphore");
        vk.get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)vk.get_device_proc(
            g->device, "vkGetSemaphoreFdKHR");
    }
    if (!vk.create_semaphore || !vk.destroy_semaphore || !vk.get_semaphore_fd) {
        snprintf(why, why_size, "the Vulkan device lacks vkGetSemaphoreFdKHR");
        return false;
    }
    return true;
}

/* Two descriptors of one new semaphore on the GPU `g`. */
static bool export_pair(vk_gpu *g, int fds[2], char *why, size_t why_size)
{
    VkExportSemaphoreCreateInfo exported = {
        .sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
        .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT,
    };
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                  .pNext = &exported};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VkResult r = vk.create_semaphore(g->device, &info, NULL, &semaphore);
    if (r != VK_SUCCESS) {
        snprintf(why, why_size, "vkCreateSemaphore failed (VkResult %d)", r);
        return false;
    }
    VkSemaphoreGetFdInfoKHR get = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
        .semaphore = semaphore,
        .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT,
    };
    fds[0] = fds[1] = -1;
    for (int i = 0; i < 2 && r == VK_SUCCESS; i++)
        r = vk.get_semaphore_fd(g->device, &get, &fds[i]);
    /* The descriptors hold the payload; Vulkan's handle is not needed. */
    vk.destroy_semaphore(g->device, semaphore, NULL);
    if (r != VK_SUCCESS) {
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        fds[0] = fds[1] = -1;
        snprintf(why, why_size, "vkGetSemaphoreFdKHR failed (VkResult %d)", r);
        return false;
    }
    return true;
}

bool cugl__app_vk_semaphore_fds(const uint8_t uuid[16], int fds[2], char *why, size_t why_size)
{
    why[0] = '\0';
    pthread_mutex_lock(&vk.lock);
    if (!vk.tried)
        load();
    vk_gpu *g = NULL;
    if (vk.why_not[0]) {
        snprintf(why, why_size, "%s", vk.why_not);
    } else {
        for (int i = 0; i < vk.gpu_count && !g; i++)
            if (!memcmp(vk.gpus[i].uuid, uuid, VK_UUID_SIZE))
                g = &vk.gpus[i];
        if (!g)
            snprintf(why, why_size, "Vulkan does not see the CUDA device (no device of its "
                                    "UUID among %d)",
                     vk.gpu_count);
        else if (g->failed)
            snprintf(why, why_size, "Vulkan's device on this GPU could not be made");
        else if (!g->device && !make_device(g, why, why_size))
            g->failed = true;
    }
    bool ok = !why[0] && export_pair(g, fds, why, why_size);
    pthread_mutex_unlock(&vk.lock);
    return ok;
}
