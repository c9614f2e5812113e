// Combines the per-workgroup partial results of a generated loop's reduction on
// the device (ops/gpu/loops/exec.rs): each pass folds up to 256 values per
// workgroup in a tree, into one value per workgroup; passes repeat until one
// value is left. Values are u32 words: f32 bits, or i32/u32 integers.
//
// Parameters: `count` values at src[src_offset + i * src_stride]; workgroup g
// writes dst[dst_offset + g]. Operators (`op`): 0 f32 sum, 1 f32 product, 2 f32
// max, 3 f32 min (NaN only when both are NaN, as Rust's f32::max/min), 4 integer
// sum (wrapping, as a release build's i32/u32 `+=`).

struct CombineParams {
    count: u32,
    src_offset: u32,
    src_stride: u32,
    op: u32,
    dst_offset: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

const CB_WG: u32 = 256u;

@group(0) @binding(0) var<uniform> cb: CombineParams;
@group(0) @binding(1) var<storage, read> cb_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> cb_dst: array<u32>;

var<workgroup> cb_tree: array<u32, 256>;

fn cb_is_nan(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

fn cb_identity(op: u32) -> u32 {
    switch op {
        // -0.0: the identity of a float sum that keeps -0.0 + -0.0 = -0.0.
        case 0u: { return 0x80000000u; }
        case 1u: { return 0x3f800000u; }
        // NaN: max and min ignore a NaN when the other side is a number.
        case 2u, 3u: { return 0x7fc00000u; }
        default: { return 0u; }
    }
}

fn cb_combine(op: u32, a: u32, b: u32) -> u32 {
    let x = bitcast<f32>(a);
    let y = bitcast<f32>(b);
    switch op {
        case 0u: { return bitcast<u32>(x + y); }
        case 1u: { return bitcast<u32>(x * y); }
        case 2u, 3u: {
            if (cb_is_nan(a)) {
                return b;
            }
            if (cb_is_nan(b)) {
                return a;
            }
            if (op == 2u) {
                return bitcast<u32>(max(x, y));
            }
            return bitcast<u32>(min(x, y));
        }
        default: { return a + b; }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = wid.y * nwg.x + wid.x;
    let i = group * CB_WG + lid;
    var v = cb_identity(cb.op);
    if (i < cb.count) {
        v = cb_src[cb.src_offset + i * cb.src_stride];
    }
    cb_tree[lid] = v;
    workgroupBarrier();
    for (var s = CB_WG / 2u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            cb_tree[lid] = cb_combine(cb.op, cb_tree[lid], cb_tree[lid + s]);
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        cb_dst[cb.dst_offset + group] = cb_tree[0];
    }
}
