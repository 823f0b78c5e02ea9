// The public headers in a C++ program, linked through cugl::cugl.
#include <cugl/cugl.h>

#include <cstdio>
#include <cstring>

int main()
{
    const char *name = cugl_status_name(CUGL_ERROR_INVALID_ARGUMENT);
    if (std::strcmp(name, "CUGL_ERROR_INVALID_ARGUMENT") != 0) {
        std::printf("FAIL: cugl_status_name gave %s\n", name);
        return 1;
    }
    std::printf("consumer_cxx: %s\n", name);
    return 0;
}
