// The angle of rotary position embedding at position pos and frequency i,
// in turns mod 1 (rope.wgsl says how it stays exact below 2^24): freq[i]
// is f_i / (2 pi) as hi + lo, declared by the shader that takes this
// library.

fn turns(pos: u32, i: u32) -> f32 {
    let f = freq[i];
    let h1 = bitcast<f32>(bitcast<u32>(f.x) & 0xfffff000u);
    let h2 = f.x - h1;
    let p1 = f32(pos & 0xfff000u);
    let p0 = f32(pos & 0xfffu);
    var t = fract(fract(p1 * h1) + fract(p1 * h2));
    t = fract(t + fract(p0 * h1));
    t = fract(t + fract(p0 * h2));
    return fract(t + fract(f32(pos) * f.y));
}
