/*
 * cugl-devices: list the CUDA devices cugl finds, with the properties that
 * matter for interop and rendering. Without a driver or a device it says so
 * and exits with status 0: that is a valid answer, not a failure.
 */
#include <stdio.h>
#include <string.h>

#include <cugl/cugl.h>

static void print_uuid(const uint8_t uuid[16])
{
    static const int dash_after[] = {3, 5, 7, 9};
    printf("GPU-");
    for (int i = 0, d = 0; i < 16; i++) {
        printf("%02x", uuid[i]);
        if (d < 4 && i == dash_after[d]) {
            putchar('-');
            d++;
        }
    }
}

static int print_device(int ordinal)
{
    cugl_device *dev;
    cugl_device_properties p;
    if (cugl_device_get(&dev, ordinal) != CUGL_OK ||
        cugl_device_get_properties(dev, &p) != CUGL_OK) {
        fprintf(stderr, "cugl-devices: %s\n", cugl_last_error());
        return 1;
    }
    printf("Device %d: %s\n", ordinal, p.name);
    printf("  UUID                 ");
    print_uuid(p.uuid);
    printf("\n  PCI bus id           %s\n", p.pci_bus_id);
    printf("  compute capability   %d.%d\n", p.compute_capability_major,
           p.compute_capability_minor);
    printf("  memory               %.1f GiB\n", (double)p.total_memory / (1u << 30));
    printf("  multiprocessors      %d\n", p.multiprocessor_count);
    printf("  threads per block    %d (block %d x %d x %d)\n", p.max_threads_per_block,
           p.max_block_dim[0], p.max_block_dim[1], p.max_block_dim[2]);
    printf("  shared per block     %zu KiB (%zu KiB opt-in)\n",
           p.max_shared_memory_per_block / 1024, p.max_shared_memory_per_block_optin / 1024);
    printf("  texture 2D max       %d x %d\n", p.max_texture_2d[0], p.max_texture_2d[1]);
    printf("  texture 3D max       %d x %d x %d\n", p.max_texture_3d[0], p.max_texture_3d[1],
           p.max_texture_3d[2]);
    printf("  surface 2D max       %d x %d\n", p.max_surface_2d[0], p.max_surface_2d[1]);
    printf("  pitch alignment      %zu bytes\n", p.texture_pitch_alignment);
    printf("  memory pools         %s\n", p.memory_pools_supported ? "yes" : "no");
    printf("  VMM + POSIX fd       %s\n",
           p.virtual_memory_management_supported && p.handle_type_posix_fd_supported ? "yes"
                                                                                      : "no");
    printf("  cluster launch       %s\n", p.cluster_launch ? "yes" : "no");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: %s\nLists the CUDA devices cugl can use.\n", argv[0]);
        return 0;
    }
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER) {
        printf("cugl-devices: no CUDA driver on this machine.\n  %s\n", cugl_last_error());
        return 0;
    }
    if (st != CUGL_OK) {
        fprintf(stderr, "cugl-devices: %s\n", cugl_last_error());
        return 1;
    }
    int version = 0;
    cugl_driver_version(&version);
    printf("CUDA driver %d.%d, %d device%s\n", version / 1000, version % 1000 / 10, count,
           count == 1 ? "" : "s");
    if (count == 0) {
        printf("cugl-devices: no CUDA device on this machine.\n");
        return 0;
    }
    int failed = 0;
    for (int i = 0; i < count; i++)
        failed |= print_device(i);
    return failed;
}
