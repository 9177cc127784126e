/* Tokenizer loaders: GGUF metadata (tokenizer.ggml.*) and Hugging Face
 * tokenizer.json, each into a tk_spec for tk_build. */
#include "io/io.h"
#include "io/json.h"
#include "io/tokenizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pre-tokenizer patterns as tokenizer.json writes them (after JSON
 * unescaping). */
static const char PAT_GPT2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char PAT_LLAMA3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                                 "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char PAT_QWEN2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static void spec_free(tk_spec *sp)
{
    free(sp->tokens);
    free(sp->types);
    free(sp->merge_left);
    free(sp->merge_right);
}

/* Splits a merge "a b" at its first space after the first byte. */
static bool split_merge(const char *s, size_t n, tk_str *a, tk_str *b)
{
    for (size_t i = 1; i < n; i++)
        if (s[i] == ' ') {
            *a = (tk_str){s, i};
            *b = (tk_str){s + i + 1, n - i - 1};
            return b->n > 0;
        }
    return false;
}

/* ------------------------------------------------------------------ GGUF */

static wt_status gguf_opt_id(const wt_gguf *f, const char *key, int32_t *out)
{
    int64_t v;
    *out = -1;
    wt_status st = wt_gguf_get_int(f, key, &v);
    if (st == WT_ERR_NOT_FOUND) return WT_OK;
    if (st) return st;
    if (v < -1 || v > INT32_MAX) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_from_gguf: %s = %lld", key, (long long)v);
    *out = (int32_t)v;
    return WT_OK;
}

static wt_status gguf_opt_bool(const wt_gguf *f, const char *key, bool *out, bool *set)
{
    wt_status st = wt_gguf_get_bool(f, key, out);
    if (st == WT_ERR_NOT_FOUND) return WT_OK;
    if (!st && set) *set = true;
    return st;
}

wt_status wt_tokenizer_from_gguf(const wt_gguf *f, wt_tokenizer **out)
{
    const char *fn = "wt_tokenizer_from_gguf";
    if (out) *out = NULL;
    if (!f || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !f ? "f" : "out");
    const char *model;
    wt_status st = wt_gguf_get_string(f, "tokenizer.ggml.model", &model, NULL);
    if (st) return st;
    tk_spec sp = {0};
    if (strcmp(model, "llama") == 0) {
        sp.kind = WT_TOKENIZER_SPM;
        sp.merge_by_score = true;
    } else if (strcmp(model, "gpt2") == 0) {
        sp.kind = WT_TOKENIZER_BPE;
    } else {
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: tokenizer.ggml.model \"%s\" (supported: llama, gpt2)", fn, model);
    }
    wt_gguf_value tokens, v;
    if ((st = wt_gguf_get_array(f, "tokenizer.ggml.tokens", WT_GGUF_STRING, &tokens))) return st;
    if (tokens.count == 0 || tokens.count > (uint64_t)INT32_MAX / 4)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tokenizer.ggml.tokens has %llu entries", fn,
                       (unsigned long long)tokens.count);
    sp.n_vocab = (int32_t)tokens.count;
    sp.tokens = malloc(sizeof *sp.tokens * tokens.count);
    if (!sp.tokens) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (uint64_t i = 0; i < tokens.count; i++) {
        if (tokens.items[i].str_len > SIZE_MAX / 8) {
            spec_free(&sp);
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token %llu is too long", fn, (unsigned long long)i);
        }
        sp.tokens[i] = (tk_str){tokens.items[i].str, (size_t)tokens.items[i].str_len};
    }
    if (sp.kind == WT_TOKENIZER_SPM) {
        if ((st = wt_gguf_get_array(f, "tokenizer.ggml.scores", WT_GGUF_F32, &v))) goto fail;
        if (v.count != tokens.count) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %llu scores for %llu tokens", fn, (unsigned long long)v.count,
                         (unsigned long long)tokens.count);
            goto fail;
        }
        sp.scores = v.elems;
        bool prefix = true, set = false;
        if ((st = gguf_opt_bool(f, "tokenizer.ggml.add_space_prefix", &prefix, &set))) goto fail;
        sp.no_prefix_space = set && !prefix;
    } else {
        const char *pre = NULL;
        st = wt_gguf_get_string(f, "tokenizer.ggml.pre", &pre, NULL);
        if (st && st != WT_ERR_NOT_FOUND) goto fail;
        if (st || !pre) pre = "gpt2"; /* llama.cpp's default */
        if (strcmp(pre, "gpt2") == 0 || strcmp(pre, "default") == 0) sp.pre = TK_PRE_GPT2;
        else if (strcmp(pre, "llama-bpe") == 0 || strcmp(pre, "llama3") == 0 || strcmp(pre, "llama-v3") == 0) {
            sp.pre = TK_PRE_LLAMA3;
            sp.ignore_merges = true; /* as Llama 3's tokenizer.json says, and llama.cpp does */
        } else if (strcmp(pre, "smaug-bpe") == 0) sp.pre = TK_PRE_LLAMA3; /* the pattern without ignore_merges */
        else if (strcmp(pre, "qwen2") == 0) sp.pre = TK_PRE_QWEN2;
        else {
            st = wt_fail(WT_ERR_UNSUPPORTED, "%s: tokenizer.ggml.pre \"%s\" (supported: gpt2, llama-bpe, qwen2)", fn, pre);
            goto fail;
        }
        if ((st = wt_gguf_get_array(f, "tokenizer.ggml.merges", WT_GGUF_STRING, &v))) goto fail;
        sp.n_merges = (size_t)v.count;
        sp.merge_left = malloc(sizeof *sp.merge_left * (sp.n_merges + 1));
        sp.merge_right = malloc(sizeof *sp.merge_right * (sp.n_merges + 1));
        if (!sp.merge_left || !sp.merge_right) {
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu merges", fn, sp.n_merges);
            goto fail;
        }
        for (size_t i = 0; i < sp.n_merges; i++)
            if (!split_merge(v.items[i].str, (size_t)v.items[i].str_len, &sp.merge_left[i], &sp.merge_right[i])) {
                st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: merge %zu is not two pieces separated by a space", fn, i);
                goto fail;
            }
    }
    st = wt_gguf_get_array(f, "tokenizer.ggml.token_type", WT_GGUF_I32, &v);
    if (st && st != WT_ERR_NOT_FOUND) goto fail;
    if (!st) {
        if (v.count != tokens.count) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %llu token types for %llu tokens", fn,
                         (unsigned long long)v.count, (unsigned long long)tokens.count);
            goto fail;
        }
        sp.types = malloc(tokens.count);
        if (!sp.types) {
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            goto fail;
        }
        for (uint64_t i = 0; i < v.count; i++) {
            int32_t type;
            memcpy(&type, (const char *)v.elems + 4 * i, 4);
            if (type < 0 || type > WT_TOKEN_BYTE) {
                st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token %llu has type %d, not one of 0..6", fn,
                             (unsigned long long)i, type);
                goto fail;
            }
            sp.types[i] = (uint8_t)type;
        }
    }
    st = WT_OK;
    if ((st = gguf_opt_id(f, "tokenizer.ggml.bos_token_id", &sp.bos))) goto fail;
    if ((st = gguf_opt_id(f, "tokenizer.ggml.eos_token_id", &sp.eos))) goto fail;
    if ((st = gguf_opt_id(f, "tokenizer.ggml.unknown_token_id", &sp.unk))) goto fail;
    if ((st = gguf_opt_id(f, "tokenizer.ggml.eot_token_id", &sp.eot))) goto fail;
    if ((st = gguf_opt_id(f, "tokenizer.ggml.eom_token_id", &sp.eom))) goto fail;
    if ((st = gguf_opt_bool(f, "tokenizer.ggml.add_bos_token", &sp.add_bos, &sp.add_bos_set))) goto fail;
    st = tk_build(fn, &sp, out);
fail:
    spec_free(&sp);
    return st;
}

/* ------------------------------------------------------- tokenizer.json */

static bool str_is(const wt_json_node *n, const char *s)
{
    return n && n->type == WT_JSON_STRING && n->len == strlen(s) && memcmp(n->str, s, n->len) == 0;
}

/* The type of a component ("BPE", "ByteLevel", "Sequence" ...), or NULL. */
static const wt_json_node *type_of(const wt_json *d, const wt_json_node *n) { return wt_json_get(d, n, "type"); }

/* Finds the pre-tokenizer: a ByteLevel (use_regex -> GPT-2's pattern),
 * a Split by a known pattern, or a Sequence of them. */
static wt_status read_pre(const char *fn, const wt_json *d, const wt_json_node *pt, tk_spec *sp, bool *byte_level)
{
    if (!pt || pt->type == WT_JSON_NULL) return WT_OK;
    const wt_json_node *type = type_of(d, pt);
    if (str_is(type, "Sequence")) {
        const wt_json_node *list = wt_json_get(d, pt, "pretokenizers");
        if (!list || list->type != WT_JSON_ARRAY)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a Sequence pre-tokenizer without pretokenizers", fn);
        for (const wt_json_node *c = wt_json_first(d, list); c; c = wt_json_next(d, c)) {
            wt_status st = read_pre(fn, d, c, sp, byte_level);
            if (st) return st;
        }
        return WT_OK;
    }
    if (str_is(type, "ByteLevel")) {
        *byte_level = true;
        const wt_json_node *prefix = wt_json_get(d, pt, "add_prefix_space");
        if (prefix && prefix->type == WT_JSON_BOOL && prefix->boolean)
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: a ByteLevel pre-tokenizer with add_prefix_space", fn);
        const wt_json_node *re = wt_json_get(d, pt, "use_regex");
        if (!re || re->type != WT_JSON_BOOL || re->boolean) {
            if (sp->pre && sp->pre != TK_PRE_GPT2)
                return wt_fail(WT_ERR_UNSUPPORTED, "%s: two pre-tokenizer patterns in a row", fn);
            sp->pre = TK_PRE_GPT2;
        }
        return WT_OK;
    }
    if (str_is(type, "Split")) {
        const wt_json_node *pat = wt_json_get(d, wt_json_get(d, pt, "pattern"), "Regex");
        const wt_json_node *behavior = wt_json_get(d, pt, "behavior");
        if (!pat || pat->type != WT_JSON_STRING || (behavior && !str_is(behavior, "Isolated")))
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: a Split pre-tokenizer other than an isolating regex", fn);
        tk_pre pre = str_is(pat, PAT_GPT2) ? TK_PRE_GPT2 : str_is(pat, PAT_LLAMA3) ? TK_PRE_LLAMA3
                   : str_is(pat, PAT_QWEN2) ? TK_PRE_QWEN2 : 0;
        if (!pre)
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: the Split pattern \"%.200s\" is none of GPT-2's, Llama 3's, Qwen 2's",
                           fn, pat->str);
        if (sp->pre) return wt_fail(WT_ERR_UNSUPPORTED, "%s: two pre-tokenizer patterns in a row", fn);
        sp->pre = pre;
        return WT_OK;
    }
    if (str_is(type, "Metaspace")) return WT_OK; /* SPM's own handling of spaces */
    return wt_fail(WT_ERR_UNSUPPORTED, "%s: pre-tokenizer type %s", fn,
                   type && type->type == WT_JSON_STRING ? type->str : "(none)");
}

/* The ids of the special tokens a TemplateProcessing puts around a single
 * sequence: before ("A" not yet seen) -> BOS, after -> EOS. */
static int32_t find_text(const tk_spec *sp, const wt_json_node *s);

static void read_template(const wt_json *d, const wt_json_node *pp, tk_spec *sp)
{
    if (!pp) return;
    const wt_json_node *type = type_of(d, pp);
    if (str_is(type, "Sequence")) {
        for (const wt_json_node *c = wt_json_first(d, wt_json_get(d, pp, "processors")); c; c = wt_json_next(d, c))
            read_template(d, c, sp);
        return;
    }
    if (!str_is(type, "TemplateProcessing")) return;
    bool seen_a = false;
    for (const wt_json_node *c = wt_json_first(d, wt_json_get(d, pp, "single")); c; c = wt_json_next(d, c)) {
        if (wt_json_get(d, c, "Sequence")) {
            seen_a = true;
            continue;
        }
        const int32_t id = find_text(sp, wt_json_get(d, wt_json_get(d, c, "SpecialToken"), "id"));
        if (id < 0) continue;
        if (!seen_a) {
            sp->bos = id;
            sp->add_bos = sp->add_bos_set = true;
        } else {
            sp->eos = id;
        }
    }
}

/* Linear search of a token by its text (used a handful of times). */
static int32_t find_text(const tk_spec *sp, const wt_json_node *s)
{
    if (!s || s->type != WT_JSON_STRING) return -1;
    for (int32_t i = 0; i < sp->n_vocab; i++)
        if (sp->tokens[i].s && sp->tokens[i].n == s->len && memcmp(sp->tokens[i].s, s->str, s->len) == 0) return i;
    return -1;
}

static wt_status set_token(const char *fn, tk_spec *sp, double idv, const char *s, size_t n, uint8_t type)
{
    if (!(idv >= 0 && idv < sp->n_vocab) || idv != (double)(int32_t)idv)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token id %g outside [0, %d) or not an integer", fn, idv,
                       sp->n_vocab);
    const int32_t id = (int32_t)idv;
    if (sp->tokens[id].s && (sp->tokens[id].n != n || memcmp(sp->tokens[id].s, s, n) != 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token id %d given twice, to different texts", fn, id);
    sp->tokens[id] = (tk_str){s, n};
    if (type) sp->types[id] = type;
    return WT_OK;
}

static wt_status from_json(const char *fn, const wt_json *d, wt_tokenizer **out)
{
    const wt_json_node *root = &d->nodes[0];
    const wt_json_node *model = wt_json_get(d, root, "model");
    if (!model || model->type != WT_JSON_OBJECT)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: no \"model\" object", fn);
    const wt_json_node *mtype = type_of(d, model);
    if (mtype && !str_is(mtype, "BPE"))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: model type %s (supported: BPE)", fn,
                       mtype->type == WT_JSON_STRING ? mtype->str : "(not a string)");
    const wt_json_node *vocab = wt_json_get(d, model, "vocab"), *merges = wt_json_get(d, model, "merges");
    if (!vocab || vocab->type != WT_JSON_OBJECT || !merges || merges->type != WT_JSON_ARRAY)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a BPE model needs a vocab object and a merges array", fn);
    const wt_json_node *added = wt_json_get(d, root, "added_tokens");
    if (added && added->type != WT_JSON_ARRAY && added->type != WT_JSON_NULL)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: added_tokens is not an array", fn);
    /* The vocabulary's size: one past the largest id. */
    double max_id = -1;
    for (const wt_json_node *c = wt_json_first(d, vocab); c; c = wt_json_next(d, c)) {
        if (c->type != WT_JSON_NUMBER) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a vocab id that is not a number", fn);
        if (c->number > max_id) max_id = c->number;
    }
    for (const wt_json_node *c = added ? wt_json_first(d, added) : NULL; c; c = wt_json_next(d, c)) {
        const wt_json_node *id = wt_json_get(d, c, "id");
        if (!id || id->type != WT_JSON_NUMBER)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: an added token without a numeric id", fn);
        if (id->number > max_id) max_id = id->number;
    }
    if (!(max_id >= 0 && max_id < INT32_MAX / 4))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token ids up to %g", fn, max_id);
    /* The tables have a row for every id up to the largest, named or not:
     * a few bytes naming a huge id would cost gigabytes. Vocabularies are
     * dense; ids beyond twice the named tokens (and a margin for small
     * ones) are refused rather than allocated. */
    const size_t named = vocab->len + (added && added->type == WT_JSON_ARRAY ? added->len : 0);
    if (max_id >= 2.0 * (double)named + 65536.0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: token id %.0f, but only %zu tokens are named (ids past twice that, plus 65536, are refused)",
                       fn, max_id, named);
    tk_spec sp = {0};
    sp.n_vocab = (int32_t)max_id + 1;
    sp.bos = sp.eos = sp.unk = sp.eot = sp.eom = -1;
    sp.tokens = calloc((size_t)sp.n_vocab, sizeof *sp.tokens);
    sp.types = calloc((size_t)sp.n_vocab, 1);
    if (!sp.tokens || !sp.types) {
        spec_free(&sp);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %d tokens", fn, sp.n_vocab);
    }
    wt_status st = WT_OK;
    const wt_json_node *fallback = wt_json_get(d, model, "byte_fallback");
    const bool spm = fallback && fallback->type == WT_JSON_BOOL && fallback->boolean;
    sp.kind = spm ? WT_TOKENIZER_SPM : WT_TOKENIZER_BPE;
    for (const wt_json_node *c = wt_json_first(d, vocab); c && !st; c = wt_json_next(d, c)) {
        st = set_token(fn, &sp, c->number, c->key, c->key_len, WT_TOKEN_NORMAL);
    }
    for (const wt_json_node *c = added ? wt_json_first(d, added) : NULL; c && !st; c = wt_json_next(d, c)) {
        const wt_json_node *content = wt_json_get(d, c, "content"), *special = wt_json_get(d, c, "special");
        if (!content || content->type != WT_JSON_STRING || content->len == 0) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: an added token without content", fn);
            break;
        }
        const bool is_special = special && special->type == WT_JSON_BOOL && special->boolean;
        st = set_token(fn, &sp, wt_json_get(d, c, "id")->number, content->str, content->len,
                       is_special ? WT_TOKEN_CONTROL : WT_TOKEN_USER_DEFINED);
    }
    if (st) goto done;
    /* SPM's byte tokens; the unknown token. */
    for (int32_t i = 0; i < sp.n_vocab; i++) {
        int byte;
        if (!sp.tokens[i].s) sp.types[i] = WT_TOKEN_UNUSED;
        else if (spm && sp.types[i] == WT_TOKEN_NORMAL && tk_byte_token_value(sp.tokens[i].s, sp.tokens[i].n, &byte))
            sp.types[i] = WT_TOKEN_BYTE;
    }
    const wt_json_node *unk = wt_json_get(d, model, "unk_token");
    if (unk && unk->type == WT_JSON_STRING) {
        sp.unk = find_text(&sp, unk);
        if (sp.unk >= 0) sp.types[sp.unk] = WT_TOKEN_UNKNOWN;
    }
    const wt_json_node *ignore = wt_json_get(d, model, "ignore_merges");
    sp.ignore_merges = ignore && ignore->type == WT_JSON_BOOL && ignore->boolean;
    if (!spm) {
        bool byte_level = false;
        if ((st = read_pre(fn, d, wt_json_get(d, root, "pre_tokenizer"), &sp, &byte_level))) goto done;
        if (!byte_level) {
            st = wt_fail(WT_ERR_UNSUPPORTED,
                         "%s: a BPE model without byte_fallback needs a ByteLevel pre-tokenizer (byte-level BPE)", fn);
            goto done;
        }
        if (!sp.pre) {
            st = wt_fail(WT_ERR_UNSUPPORTED, "%s: a ByteLevel pre-tokenizer without a pattern (use_regex false, no Split)", fn);
            goto done;
        }
    }
    /* Merges: "a b" strings or ["a", "b"] pairs. */
    sp.n_merges = merges->len;
    sp.merge_left = malloc(sizeof *sp.merge_left * (sp.n_merges + 1));
    sp.merge_right = malloc(sizeof *sp.merge_right * (sp.n_merges + 1));
    if (!sp.merge_left || !sp.merge_right) {
        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu merges", fn, sp.n_merges);
        goto done;
    }
    size_t r = 0;
    for (const wt_json_node *c = wt_json_first(d, merges); c; c = wt_json_next(d, c), r++) {
        bool ok = false;
        if (c->type == WT_JSON_STRING) {
            ok = split_merge(c->str, c->len, &sp.merge_left[r], &sp.merge_right[r]);
        } else if (c->type == WT_JSON_ARRAY && c->len == 2) {
            const wt_json_node *a = wt_json_first(d, c), *b = wt_json_next(d, a);
            if (a->type == WT_JSON_STRING && b->type == WT_JSON_STRING) {
                sp.merge_left[r] = (tk_str){a->str, a->len};
                sp.merge_right[r] = (tk_str){b->str, b->len};
                ok = true;
            }
        }
        if (!ok) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: merge %zu is neither \"a b\" nor [\"a\", \"b\"]", fn, r);
            goto done;
        }
    }
    /* BOS / EOS: the post-processor's template, else well-known names. */
    read_template(d, wt_json_get(d, root, "post_processor"), &sp);
    static const char *const bos_names[] = {"<s>", "<|begin_of_text|>"};
    static const char *const eos_names[] = {"</s>", "<|end_of_text|>", "<|endoftext|>"};
    for (size_t i = 0; i < 2 && sp.bos < 0; i++) {
        const wt_json_node s = {.type = WT_JSON_STRING, .str = bos_names[i], .len = strlen(bos_names[i])};
        sp.bos = find_text(&sp, &s);
    }
    for (size_t i = 0; i < 3 && sp.eos < 0; i++) {
        const wt_json_node s = {.type = WT_JSON_STRING, .str = eos_names[i], .len = strlen(eos_names[i])};
        sp.eos = find_text(&sp, &s);
    }
    if (spm && !sp.add_bos_set) sp.add_bos = sp.add_bos_set = true;
    st = tk_build(fn, &sp, out);
done:
    spec_free(&sp);
    return st;
}

wt_status wt_tokenizer_from_json_memory(const void *data, size_t size, wt_tokenizer **out)
{
    const char *fn = "wt_tokenizer_from_json_memory";
    if (out) *out = NULL;
    if (!out || (!data && size))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !out ? "out" : "data");
    wt_json d;
    wt_status st = wt_json_parse(fn, data, size, &d);
    if (st) return st;
    if (d.nodes[0].type != WT_JSON_OBJECT) st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the document is not an object", fn);
    else st = from_json(fn, &d, out);
    wt_json_free(&d);
    return st;
}

wt_status wt_tokenizer_load_json(const char *path, wt_tokenizer **out)
{
    const char *fn = "wt_tokenizer_load_json";
    if (out) *out = NULL;
    if (!path || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !path ? "path" : "out");
    io_source src;
    wt_status st = io_source_open_file(fn, path, &src);
    if (st) return st;
    if (src.size > ((uint64_t)1 << 30)) {
        io_source_close(&src);
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is larger than 1 GiB", fn, path);
    }
    char *buf = malloc((size_t)src.size + 1);
    if (!buf) {
        io_source_close(&src);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %llu bytes", fn, (unsigned long long)src.size);
    }
    st = io_source_read(fn, &src, 0, buf, (size_t)src.size);
    io_source_close(&src);
    if (!st) {
        st = wt_tokenizer_from_json_memory(buf, (size_t)src.size, out);
    }
    free(buf);
    return st;
}
