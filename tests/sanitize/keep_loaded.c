/* Preloaded into the sanitized test runs only: dlclose does nothing.
 *
 * The Vulkan loader and libglvnd dlclose the drivers (libvulkan_lvp,
 * libEGL_mesa, ...) when Dawn destroys an instance. Memory a driver still
 * points at from its globals then looks unreferenced, and LeakSanitizer
 * reports it against "<unknown module>": no symbol, nothing a suppression
 * can name. Keeping every library mapped lets LeakSanitizer see those
 * pointers, so whatever it still reports has a name. webtensor itself
 * never dlcloses the WebGPU library it loads. */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
