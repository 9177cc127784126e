// apply(u, v) = binary op OP (0 add, 1 sub, 2 mul, 3 div) of u and v, a
// library shared by the f32 (binary) and f16 (binary_f16) kernels. Needs
// OP and `alias T` (f32 or a vector of f32) before it.

fn apply(u: T, v: T) -> T {
    switch OP {
        case 0u: { return u + v; }
        case 1u: { return u - v; }
        case 2u: { return u * v; }
        default: { return u / v; }
    }
}

