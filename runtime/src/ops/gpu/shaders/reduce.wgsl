// Reductions: each workgroup folds one block of BLOCK consecutive elements
// (16 per thread, coalesced) into one value, then a tree over workgroup memory.
// A pass writes one partial per workgroup to `dst[params.out_base + group]`;
// the Rust side repeats passes over the partials (sum/max/min) until one
// value is left, all in one submission. The last pass applies `params.post`.

const PER_THREAD: u32 = 16u;
const BLOCK: u32 = 4096u; // WG * PER_THREAD

var<workgroup> scratch: array<f32, 256>;

fn tree_sum(lid: u32, value: f32) -> f32 {
    scratch[lid] = value;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            scratch[lid] = scratch[lid] + scratch[lid + s];
        }
        workgroupBarrier();
    }
    return scratch[0];
}

fn tree_max(lid: u32, value: f32) -> f32 {
    scratch[lid] = value;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            scratch[lid] = max_nan(scratch[lid], scratch[lid + s]);
        }
        workgroupBarrier();
    }
    return scratch[0];
}

fn tree_min(lid: u32, value: f32) -> f32 {
    scratch[lid] = value;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            scratch[lid] = min_nan(scratch[lid], scratch[lid + s]);
        }
        workgroupBarrier();
    }
    return scratch[0];
}

fn finish(value: f32) -> f32 {
    if (params.post == 1u) {
        return value / params.divisor;
    }
    if (params.post == 2u) {
        return sqrt(value);
    }
    return value;
}

fn store(lid: u32, group: u32, value: f32) {
    if (lid == 0u && group * BLOCK < params.len) {
        dst[params.out_base + group] = finish(value);
    }
}

@compute @workgroup_size(256)
fn reduce_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    var acc = 0.0;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            acc = acc + src_a[i];
        }
    }
    store(lid, g, tree_sum(lid, acc));
}

@compute @workgroup_size(256)
fn reduce_sum_sq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    var acc = 0.0;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            let x = src_a[i];
            acc = acc + x * x;
        }
    }
    store(lid, g, tree_sum(lid, acc));
}

@compute @workgroup_size(256)
fn reduce_dot(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    var acc = 0.0;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            acc = acc + src_a[i] * src_b[i];
        }
    }
    store(lid, g, tree_sum(lid, acc));
}

@compute @workgroup_size(256)
fn reduce_max(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    var acc = -inf();
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            acc = max_nan(acc, src_a[i]);
        }
    }
    store(lid, g, tree_max(lid, acc));
}

@compute @workgroup_size(256)
fn reduce_min(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    var acc = inf();
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            acc = min_nan(acc, src_a[i]);
        }
    }
    store(lid, g, tree_min(lid, acc));
}

// Softmax, pass 2 of 3 (after a max reduction into aux[0]): dst[i] = e^(a[i] − max),
// and the block's sum of those into partials[out_base + group] (the start of a sum
// reduction). Pass 3 is `softmax_normalize`.
@compute @workgroup_size(256)
fn softmax_exp(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let g = group_index(wid, nwg);
    let m = aux[0];
    var acc = 0.0;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = g * BLOCK + j * WG + lid;
        if (i < params.len) {
            let e = exp_acc(src_a[i] - m);
            dst[i] = e;
            acc = acc + e;
        }
    }
    let total = tree_sum(lid, acc);
    if (lid == 0u && g * BLOCK < params.len) {
        partials[params.out_base + g] = total;
    }
}

// Softmax, pass 3: dst[i] /= aux[0] (the sum of the exponentials).
@compute @workgroup_size(256)
fn softmax_normalize(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let i = group_index(wid, nwg) * WG + lid;
    if (i < params.len) {
        dst[i] = dst[i] / aux[0];
    }
}
