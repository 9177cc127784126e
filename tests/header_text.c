/* header_text_read: a public header with the parts it includes spliced
 * in (header_text.h). */
#include "header_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) s = malloc((size_t)n + 1);
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!s) return NULL;
    s[got] = '\0';
    *len = got;
    return s;
}

/* Appends n bytes of s to *buf (length *len, capacity *cap). */
static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = (*len + n + 1) * 2;
        char *grown = realloc(*buf, want);
        if (!grown) return -1;
        *buf = grown;
        *cap = want;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

char *header_text_read(const char *path, char *failed, size_t size)
{
    static const char directive[] = "#include \"";
    size_t n = 0;
    char *text = read_whole(path, &n);
    if (!text) {
        snprintf(failed, size, "%s", path);
        return NULL;
    }
    /* The parts are named relative to the header's own folder. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    char *out = NULL;
    size_t len = 0, cap = 0;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t linelen = eol ? (size_t)(eol - line) + 1 : strlen(line);
        const char *name = line + sizeof directive - 1;
        const char *close = !strncmp(line, directive, sizeof directive - 1) ? strchr(name, '"') : NULL;
        const char *sep = close ? memchr(name, '/', (size_t)(close - name)) : NULL;
        if (sep && close < line + linelen) {
            char part[512];
            snprintf(part, sizeof part, "%.*s%.*s", (int)dirlen, path, (int)(close - name), name);
            size_t plen = 0;
            char *ptext = read_whole(part, &plen);
            if (!ptext || append(&out, &len, &cap, ptext, plen) != 0) {
                snprintf(failed, size, "%s", part);
                free(ptext);
                free(out);
                free(text);
                return NULL;
            }
            free(ptext);
        } else if (append(&out, &len, &cap, line, linelen) != 0) {
            snprintf(failed, size, "%s (out of memory)", path);
            free(out);
            free(text);
            return NULL;
        }
        line += linelen;
    }
    free(text);
    if (!out) out = calloc(1, 1); /* an empty header */
    if (!out) snprintf(failed, size, "%s (out of memory)", path);
    return out;
}
