"""The work each benchmark case does, shared by the peer scripts.

plan(params) -> (input shapes, label, work, ops per run). Labels and work
(bytes read + written, or FLOPs) equal those of bench/bench_cases.c, since
compare.py joins the peers' CSV with webtensor's on the labels."""


def plan_binary(p):
    (n,) = p
    return [(n,), (n,)], f"{n}", 12.0 * n, 1


def plan_unary(p):
    (n,) = p
    return [(n,)], f"{n}", 8.0 * n, 1


def plan_binary_f16(p):
    (n,) = p
    return [(n,), (n,)], f"{n}", 6.0 * n, 1


def plan_unary_f16(p):
    (n,) = p
    return [(n,)], f"{n}", 4.0 * n, 1


def plan_sum_all(p):
    (n,) = p
    return [(n,)], f"{n}", 4.0 * n + 4.0, 1


def plan_sum_all_f16(p):
    (n,) = p
    return [(n,)], f"{n}", 2.0 * n + 2.0, 1


def plan_rows(p):
    r, c = p
    return [(r, c)], f"{r}x{c}", 4.0 * r * c + 4.0 * r, 1


def plan_softmax(p):
    r, c = p
    return [(r, c)], f"{r}x{c}", 8.0 * r * c, 1


def plan_layernorm(p):
    r, c = p
    return [(r, c), (c,), (c,)], f"{r}x{c}", 8.0 * r * c + 8.0 * c, 1


def plan_softmax_f16(p):
    r, c = p
    return [(r, c)], f"{r}x{c}", 4.0 * r * c, 1


def plan_layernorm_f16(p):
    r, c = p
    return [(r, c), (c,), (c,)], f"{r}x{c}", 4.0 * r * c + 4.0 * c, 1


def plan_rmsnorm(p):
    r, c = p
    return [(r, c), (c,)], f"{r}x{c}", 8.0 * r * c + 4.0 * c, 1


def plan_transpose(p):
    r, c = p
    return [(r, c)], f"{r}x{c}", 8.0 * r * c, 1


def plan_matmul(p):
    m, n, k = p
    return [(m, k), (k, n)], f"{m}x{n}x{k}", 2.0 * m * n * k, 1


def plan_bmm(p):
    b, m, n, k = p
    return [(b, m, k), (b, k, n)], f"{b}x{m}x{n}x{k}", 2.0 * b * m * n * k, 1


def plan_gemv(p):
    r, c = p
    return [(r, c), (c,)], f"{r}x{c}", 4.0 * (r * c + r + c), 1


def plan_add_chain(p):
    length, n = p
    return [(n,), (n,)], f"{length}x{n}", 12.0 * n, length


# --- matrix products: f16, and the linear layout ---

def plan_matmul_f16(p):
    return plan_matmul(p)


def plan_gemv_f16(p):
    r, c = p
    return [(r, c), (c,)], f"{r}x{c}", 2.0 * (r * c + r + c), 1


def plan_matmul_nt(p):
    m, n, k = p
    return [(m, k), (n, k)], f"{m}x{n}x{k}", 2.0 * m * n * k, 1


def plan_bmm_f16(p):
    return plan_bmm(p)


def plan_matmul_nt_f16(p):
    return plan_matmul_nt(p)


# --- convolution and attention ---

def plan_conv2d(p):
    n, c, side, o = p
    return [(n, c, side, side), (o, c, 3, 3)], f"{n}x{c}x{side}x{side}x{o}", 2.0 * n * o * side * side * c * 9, 1


def plan_attention(p):
    b, hq, hkv, s = p
    return ([(b, hq, s, 128), (b, hkv, s, 128), (b, hkv, s, 128)], f"{b}x{hq}x{hkv}x{s}x128",
            2.0 * b * hq * s * s * 128, 1)
