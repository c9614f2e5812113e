// Declarations shared by every shader module of the GPU op backend; each
// module is this file, then math.wgsl, then its own (see pipelines.rs).
//
// Bindings: one layout for every kernel, so the Rust side binds by number.
// A kernel uses the subset it needs (pipelines use automatic layouts).
//   0 src_a     first input (read)
//   1 src_b     second input (read)
//   2 dst       output, or partials of a reduction (read_write)
//   3 params    the dispatch's Params (uniform)
//   4 aux       one value computed by an earlier pass of the same call (read)
//   5 partials  per-workgroup partial sums written beside `dst` (read_write)
//
// Large inputs: a dispatch covers at most 65,535 × 65,535 workgroups, folded
// into 2-D; `group_index` turns the 2-D workgroup id back into a linear one.
// Threads past `params.len` do nothing (reductions: contribute the identity).

struct Params {
    len: u32,       // elements (or rows) this dispatch covers
    out_base: u32,  // first slot a reduction pass writes in its output
    post: u32,      // finisher of a reduction's last pass: 0 none, 1 divide by `divisor`, 2 sqrt
    rows: u32,
    cols: u32,
    inner: u32,     // k of matmul (A is rows×inner)
    krows: u32,
    kcols: u32,
    tile_row0: u32, // first tile row / column of a chunked matmul dispatch
    tile_col0: u32,
    out_cols: u32,
    _pad0: u32,
    alpha: f32,     // scale / axpy factor
    divisor: f32,   // mean's element count
    _pad1: f32,
    _pad2: f32,
}

@group(0) @binding(0) var<storage, read> src_a: array<f32>;
@group(0) @binding(1) var<storage, read> src_b: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read> aux: array<f32>;
@group(0) @binding(5) var<storage, read_write> partials: array<f32>;

const WG: u32 = 256u;

fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}
