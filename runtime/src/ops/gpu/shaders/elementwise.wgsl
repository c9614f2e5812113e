// Element-wise kernels: one thread per element, `params.len` elements from
// offset 0 of each binding (large inputs are bound chunk by chunk).

fn element_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return group_index(wid, nwg) * WG + lid;
}

@compute @workgroup_size(256)
fn ew_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = src_a[i] + src_b[i];
    }
}

@compute @workgroup_size(256)
fn ew_sub(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = src_a[i] - src_b[i];
    }
}

@compute @workgroup_size(256)
fn ew_mul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = src_a[i] * src_b[i];
    }
}

@compute @workgroup_size(256)
fn ew_div(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = div_full(src_a[i], src_b[i]);
    }
}

@compute @workgroup_size(256)
fn ew_scale(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = src_a[i] * params.alpha;
    }
}

// y + alpha·x with src_a = x, src_b = y.
@compute @workgroup_size(256)
fn ew_axpy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = src_b[i] + params.alpha * src_a[i];
    }
}

@compute @workgroup_size(256)
fn ew_relu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        let x = src_a[i];
        dst[i] = select(0.0, x, x > 0.0 || is_nan(x));
    }
}

@compute @workgroup_size(256)
fn ew_sigmoid(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = 1.0 / (1.0 + exp_acc(-src_a[i]));
    }
}

@compute @workgroup_size(256)
fn ew_tanh(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = tanh_acc(src_a[i]);
    }
}

// The tanh approximation, written exactly as the scalar reference does.
@compute @workgroup_size(256)
fn ew_gelu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        let x = src_a[i];
        dst[i] = 0.5 * x * (1.0 + tanh_acc(0.7978846 * (x + 0.044715 * x * x * x)));
    }
}

@compute @workgroup_size(256)
fn ew_exp(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let i = element_index(wid, nwg, lid);
    if (i < params.len) {
        dst[i] = exp_acc(src_a[i]);
    }
}
