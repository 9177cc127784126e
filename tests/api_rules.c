/* api_rules: the rules at the top of include/webtensor.h that a program can
 * check, checked on every declaration of the public headers (webtensor.h
 * with its parts, webtensor_io.h, webtensor_dist.h, webtensor_tokenizer.h;
 * the deprecated names excepted): out-pointers last, the argument order of
 * backward ops, where a tensor written in place goes, dtype right after
 * the context in creation functions, no float host scalars, arrays of
 * input tensors typed so that wt_tensor ** passes, struct_size first in
 * every options struct and an _init for each, 2-D padding of four values. A new function that breaks
 * one fails this test, naming the function and the rule.
 *
 * The checker is first run on declarations that break each rule, so a
 * checker that stopped seeing a violation would fail too. */
#include "header_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 16

typedef struct param {
    char type[128]; /* whitespace collapsed, e.g. "const wt_tensor *" */
    char name[64];
} param;

static int g_failures;

static void fail(const char *where, const char *fn, const char *rule)
{
    printf("FAIL %s: %s: %s\n", where, fn, rule);
    g_failures++;
}

/* The text without comments, preprocessor lines or line breaks. */
static char *strip(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    bool line_start = true;
    for (size_t i = 0; i < n;) {
        if (in[i] == '/' && in[i + 1] == '*') {
            const char *end = strstr(in + i + 2, "*/");
            i = end ? (size_t)(end - in) + 2 : n;
            *o++ = ' ';
            continue;
        }
        if (line_start && in[i] == '#') { /* a directive, with its continuations */
            while (i < n && !(in[i] == '\n' && in[i - 1] != '\\')) i++;
            continue;
        }
        if (in[i] == '\n') {
            line_start = true;
            *o++ = ' ';
            i++;
            continue;
        }
        if (!isspace((unsigned char)in[i])) line_start = false;
        *o++ = in[i++];
    }
    *o = '\0';
    return out;
}

/* Copies s[0..len) into dst with runs of spaces made one and a space
 * before each '*' run (so types compare as text). */
static void normalise(char *dst, size_t cap, const char *s, size_t len)
{
    size_t k = 0;
    bool space = false;
    for (size_t i = 0; i < len && k + 2 < cap; i++) {
        char c = s[i];
        if (isspace((unsigned char)c)) {
            space = k > 0;
            continue;
        }
        if (c == '*' && k > 0 && dst[k - 1] != '*') space = true;
        if (space && k > 0) dst[k++] = ' ';
        space = false;
        dst[k++] = c;
    }
    dst[k] = '\0';
}

static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* "const wt_tensor *x" -> type "const wt_tensor *", name "x". */
static void split_param(const char *s, size_t len, param *p)
{
    while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
    size_t end = len, begin = end;
    while (begin > 0 && is_ident(s[begin - 1])) begin--;
    size_t nlen = end - begin < sizeof p->name - 1 ? end - begin : sizeof p->name - 1;
    memcpy(p->name, s + begin, nlen);
    p->name[nlen] = '\0';
    normalise(p->type, sizeof p->type, s, begin);
    size_t tl = strlen(p->type);
    while (tl > 0 && p->type[tl - 1] == ' ') p->type[--tl] = '\0';
}

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static bool ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Whether the type names float as a word ("float", "const float *"). */
static bool has_float(const char *type)
{
    for (const char *p = strstr(type, "float"); p; p = strstr(p + 1, "float"))
        if ((p == type || !is_ident(p[-1])) && !is_ident(p[5])) return true;
    return false;
}

static const char *const STATE_NAMES[] = {"momentum_buf", "m", "v", "running_mean", "running_var"};

static void check_function(const char *where, const char *fn, const param *ps, int np)
{
    bool out_seen = false;
    for (int i = 0; i < np; i++) {
        const param *p = &ps[i];
        if (has_float(p->type)) fail(where, fn, "rule 7: a float argument (host scalars are double)");
        if (!strcmp(p->type, "const wt_tensor *const *"))
            fail(where, fn, "rule 8: an array of inputs typed const wt_tensor *const * (use wt_tensor *const *)");
        bool is_out = !strcmp(p->type, "wt_tensor **");
        if (out_seen && !is_out) fail(where, fn, "rule 2: an argument after a wt_tensor ** out-pointer");
        out_seen = out_seen || is_out;
        if (!strcmp(p->type, "wt_tensor *") && i > 0) {
            /* These hand a reference on and write nothing: wt_scope_keep; the
             * gradient synchroniser's give (its finish writes the tensor,
             * as wt_dist_allreduce writes its list). */
            bool state = !strcmp(fn, "wt_scope_keep") || !strcmp(fn, "wt_dist_grad_sync_give");
            for (size_t s = 0; s < sizeof STATE_NAMES / sizeof STATE_NAMES[0]; s++)
                state = state || !strcmp(p->name, STATE_NAMES[s]);
            if (!state) fail(where, fn, "rule 4: a tensor written in place that is not the first argument");
        }
    }
    /* wt_<op>_backward[_vN]; wt_backward and wt_backward_ex are autograd's
     * entry points, not an op's backward. */
    if ((ends(fn, "_backward") || strstr(fn, "_backward_v")) && strncmp(fn, "wt_backward", 11) != 0) {
        if (np < 1 || strcmp(ps[0].type, "const wt_tensor *") || ps[0].name[0] != 'd')
            fail(where, fn, "rule 3: a backward op takes the upstream gradient (dy, dloss) first");
        int outs = 0;
        for (int i = 0; i < np; i++)
            if (!strcmp(ps[i].type, "wt_tensor **")) {
                outs++;
                if (ps[i].name[0] != 'd') fail(where, fn, "rule 3: a gradient out-pointer not named d...");
            }
        if (outs == 0) fail(where, fn, "rule 3: a backward op without gradient out-pointers");
    }
    if (starts(fn, "wt_tensor_") && np > 0 && !strcmp(ps[0].type, "wt_context *"))
        for (int i = 0; i < np; i++)
            if (!strcmp(ps[i].type, "wt_dtype") && i != 1)
                fail(where, fn, "rule 5: dtype is not right after the context");
}

typedef struct scan {
    char options[64][96]; /* wt_*_options struct names */
    int noptions;
    char inits[64][96];   /* wt_*_options_init functions */
    int ninits;
    int functions;
} scan;

/* Every "WT_API ... name(params);" and "typedef struct wt_*_options { ... }"
 * of text (already stripped). */
static void check_text(const char *where, const char *text, scan *sc)
{
    for (const char *p = strstr(text, "WT_API "); p; p = strstr(p + 1, "WT_API ")) {
        const char *open = strchr(p, '('), *semi = strchr(p, ';');
        if (!open || !semi || semi < open) continue;
        /* The name: the identifier before '(' (past a WT_DEPRECATED(...) tag). */
        const char *e = open;
        while (e > p && isspace((unsigned char)e[-1])) e--;
        const char *b = e;
        while (b > p && is_ident(b[-1])) b--;
        char fn[96];
        size_t len = (size_t)(e - b) < sizeof fn - 1 ? (size_t)(e - b) : sizeof fn - 1;
        memcpy(fn, b, len);
        fn[len] = '\0';
        if (!starts(fn, "wt_")) continue;
        sc->functions++;
        if (ends(fn, "_options_init") && sc->ninits < 64) snprintf(sc->inits[sc->ninits++], 96, "%s", fn);
        /* The parameters, split at top-level commas. */
        param ps[MAX_PARAMS];
        int np = 0, depth = 0;
        const char *start = open + 1, *q = open + 1;
        for (; *q && np < MAX_PARAMS; q++) {
            if (*q == '(') depth++;
            if (*q == ')' && depth-- == 0) break;
            if (*q == ',' && depth == 0) {
                split_param(start, (size_t)(q - start), &ps[np++]);
                start = q + 1;
            }
        }
        if (np < MAX_PARAMS && q > start) split_param(start, (size_t)(q - start), &ps[np++]);
        if (np == 1 && !strcmp(ps[0].type, "") && !strcmp(ps[0].name, "void")) np = 0;
        check_function(where, fn, ps, np);
    }
    for (const char *p = strstr(text, "typedef struct wt_"); p; p = strstr(p + 1, "typedef struct wt_")) {
        const char *name = p + strlen("typedef struct ");
        const char *brace = strchr(p, '{'), *semi = strchr(p, ';');
        if (!brace || (semi && semi < brace)) continue; /* an opaque handle */
        char sname[64];
        size_t len = 0;
        while (is_ident(name[len]) && len < sizeof sname - 1) len++;
        memcpy(sname, name, len);
        sname[len] = '\0';
        if (!ends(sname, "_options")) continue;
        if (sc->noptions < 64) snprintf(sc->options[sc->noptions++], 96, "%s", sname);
        /* The first member, and every member's type. */
        const char *close = strchr(brace, '}');
        char first[128];
        const char *m1 = brace + 1, *m1e = strchr(m1, ';');
        normalise(first, sizeof first, m1, m1e ? (size_t)(m1e - m1) : 0);
        if (strcmp(first, "uint32_t struct_size"))
            fail(where, sname, "rule 6: an options struct whose first member is not uint32_t struct_size");
        for (const char *m = brace + 1; close && m < close;) {
            const char *me = strchr(m, ';');
            if (!me || me > close) break;
            char member[160];
            normalise(member, sizeof member, m, (size_t)(me - m));
            if (has_float(member)) fail(where, sname, "rule 7: a float field (host scalars are double)");
            if (strstr(member, "padding[2]") && !strstr(member, "output_padding"))
                fail(where, sname, "rule 9: a padding of two values (2-D padding is top, bottom, left, right)");
            m = me + 1;
        }
    }
}

static void check_inits(const char *where, const scan *sc)
{
    for (int i = 0; i < sc->noptions; i++) {
        char want[80];
        snprintf(want, sizeof want, "%s_init", sc->options[i]);
        bool have = false;
        for (int j = 0; j < sc->ninits; j++) have = have || !strcmp(sc->inits[j], want);
        if (!have) fail(where, sc->options[i], "rule 6: an options struct without its _init");
    }
}

/* Declarations that each break one rule: the checker must flag every one. */
static const char *const BROKEN[] = {
    "WT_API wt_status wt_a(const wt_tensor *x, float eps, wt_tensor **out);",
    "WT_API wt_status wt_b(const wt_tensor *x, wt_tensor **out, int axis);",
    "WT_API wt_status wt_c_backward(const wt_tensor *x, const wt_tensor *dy, wt_tensor **dx);",
    "WT_API wt_status wt_d_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **grad);",
    "WT_API wt_status wt_e(const wt_tensor *x, wt_tensor *dst);",
    "WT_API wt_status wt_tensor_f(wt_context *ctx, int n, wt_dtype dtype, wt_tensor **out);",
    "WT_API wt_status wt_g(int n, const wt_tensor *const *xs, wt_tensor **out);",
    "typedef struct wt_h_options { bool flag; uint32_t struct_size; } wt_h_options;"
    " WT_API void wt_h_options_init(wt_h_options *o);",
    "typedef struct wt_i_options { uint32_t struct_size; float eps; } wt_i_options;"
    " WT_API void wt_i_options_init(wt_i_options *o);",
    "typedef struct wt_j_options { uint32_t struct_size; double eps; } wt_j_options;",
    "typedef struct wt_l_options { uint32_t struct_size; int64_t padding[2]; } wt_l_options;"
    " WT_API void wt_l_options_init(wt_l_options *o);",
};

int main(void)
{
    /* The checker against broken declarations. */
    int missed = 0;
    for (size_t i = 0; i < sizeof BROKEN / sizeof BROKEN[0]; i++) {
        int before = g_failures;
        scan sc = {0};
        printf("expected: ");
        check_text("self-test", BROKEN[i], &sc);
        check_inits("self-test", &sc);
        if (g_failures == before) {
            printf("MISSED: the checker passed a broken declaration: %s\n", BROKEN[i]);
            missed++;
        }
        g_failures = before;
    }
    /* A declaration that keeps every rule passes. */
    {
        scan sc = {0};
        check_text("self-test", "typedef struct wt_k_options { uint32_t struct_size; double eps; } wt_k_options;"
                   " WT_API void wt_k_options_init(wt_k_options *o);"
                   " WT_API wt_status wt_k_backward(const wt_tensor *dy, const wt_tensor *x, int axis,"
                   " const wt_k_options *opts, wt_tensor **dx, wt_tensor **dw);", &sc);
        check_inits("self-test", &sc);
        if (g_failures) {
            printf("MISSED: the checker refused a declaration that keeps the rules\n");
            missed++;
            g_failures = 0;
        }
    }

    static const char *const headers[4] = {WT_INCLUDE_DIR "/webtensor.h", WT_INCLUDE_DIR "/webtensor_io.h",
                                           WT_INCLUDE_DIR "/webtensor_dist.h",
                                           WT_INCLUDE_DIR "/webtensor_tokenizer.h"};
    int functions = 0, structs = 0;
    scan all = {0};
    for (int h = 0; h < 4; h++) {
        char failed[512];
        char *raw = header_text_read(headers[h], failed, sizeof failed);
        if (!raw) {
            printf("FAIL: cannot read %s\n", failed);
            return 1;
        }
        /* The deprecated names keep their old forms: not checked. */
        char *dep = strstr(raw, "======== 16. Deprecated names");
        if (dep) *dep = '\0';
        if (h == 0 && !dep) fail(headers[h], "section 16", "the deprecated section's heading is missing");
        char *text = strip(raw);
        free(raw);
        if (!text) return 1;
        scan sc = {0};
        check_text(headers[h], text, &sc);
        functions += sc.functions;
        structs += sc.noptions;
        for (int i = 0; i < sc.noptions && all.noptions < 64; i++) memcpy(all.options[all.noptions++], sc.options[i], 96);
        for (int i = 0; i < sc.ninits && all.ninits < 64; i++) memcpy(all.inits[all.ninits++], sc.inits[i], 96);
        free(text);
    }
    check_inits("headers", &all);
    printf("api_rules: %d functions and %d options structs checked, %d failures; checker self-test: %d missed\n",
           functions, structs, g_failures, missed);
    return g_failures || missed || functions < 100 ? 1 : 0;
}
