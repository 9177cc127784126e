/* Preloaded by the runtime_gles_runtime_egl test: makes dlopen("libEGL.so")
 * fail, as on a machine with only the runtime EGL package (libEGL.so.1),
 * so the test shows the OpenGL ES path does not depend on the development
 * symlink. Every other name goes to the real dlopen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

void *dlopen(const char *file, int mode)
{
    static void *(*real_dlopen)(const char *, int);
    if (!real_dlopen) {
        void *sym = dlsym(RTLD_NEXT, "dlopen");
        memcpy(&real_dlopen, &sym, sizeof sym);
    }
    if (file) {
        const char *base = strrchr(file, '/');
        base = base ? base + 1 : file;
        if (strcmp(base, "libEGL.so") == 0)
            return real_dlopen("/nonexistent/libEGL.so", mode); /* fails, with dlerror set */
    }
    return real_dlopen(file, mode);
}
