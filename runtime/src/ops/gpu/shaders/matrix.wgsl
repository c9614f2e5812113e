// Matrix kernels: matmul (16×16 tiles through workgroup memory), matvec (one
// workgroup per output row) and conv2d (one thread per output element).
//
// matmul sums over k in the same order as the scalar reference (tile by tile,
// in order), so results differ from it only by fused multiply-adds. A
// dispatch covers at most 65,535 tiles per dimension; larger matrices are
// covered by several dispatches whose first tile is `tile_row0`/`tile_col0`.

const TILE: u32 = 16u;

var<workgroup> tile_a: array<array<f32, 16>, 16>;
var<workgroup> tile_b: array<array<f32, 16>, 16>;
var<workgroup> row_scratch: array<f32, 256>;

// C (rows×cols) = A (rows×inner) · B (inner×cols); src_a = A, src_b = B, dst = C.
@compute @workgroup_size(16, 16)
fn matmul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = (params.tile_row0 + wid.y) * TILE + lid.y;
    let col = (params.tile_col0 + wid.x) * TILE + lid.x;
    var acc = 0.0;
    for (var t = 0u; t < params.inner; t = t + TILE) {
        let a_col = t + lid.x;
        if (row < params.rows && a_col < params.inner) {
            tile_a[lid.y][lid.x] = src_a[row * params.inner + a_col];
        } else {
            tile_a[lid.y][lid.x] = 0.0;
        }
        let b_row = t + lid.y;
        if (b_row < params.inner && col < params.cols) {
            tile_b[lid.y][lid.x] = src_b[b_row * params.cols + col];
        } else {
            tile_b[lid.y][lid.x] = 0.0;
        }
        workgroupBarrier();
        let steps = min(TILE, params.inner - t);
        for (var p = 0u; p < steps; p = p + 1u) {
            acc = acc + tile_a[lid.y][p] * tile_b[p][lid.x];
        }
        workgroupBarrier();
    }
    if (row < params.rows && col < params.cols) {
        dst[row * params.cols + col] = acc;
    }
}

// y (rows) = A (rows×cols) · x (cols): one workgroup per row, threads stride the row.
@compute @workgroup_size(256)
fn matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let row = group_index(wid, nwg);
    var acc = 0.0;
    if (row < params.rows) {
        let base = row * params.cols;
        for (var j = lid; j < params.cols; j = j + WG) {
            acc = acc + src_a[base + j] * src_b[j];
        }
    }
    row_scratch[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            row_scratch[lid] = row_scratch[lid] + row_scratch[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u && row < params.rows) {
        dst[row] = row_scratch[0];
    }
}

// Valid-mode cross-correlation, summed in the scalar reference's order.
// src_a = input (rows×cols), src_b = kernel (krows×kcols), dst = out (len = out_rows × out_cols).
@compute @workgroup_size(256)
fn conv2d(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let o = group_index(wid, nwg) * WG + lid;
    if (o >= params.len) {
        return;
    }
    let i = o / params.out_cols;
    let j = o % params.out_cols;
    var acc = 0.0;
    for (var p = 0u; p < params.krows; p = p + 1u) {
        let irow = (i + p) * params.cols + j;
        let krow = p * params.kcols;
        for (var q = 0u; q < params.kcols; q = q + 1u) {
            acc = acc + src_a[irow + q] * src_b[krow + q];
        }
    }
    dst[o] = acc;
}
