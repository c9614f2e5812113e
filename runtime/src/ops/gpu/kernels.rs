//! How each op is laid out on the device: which kernels, in which order,
//! over which chunks. Every function here assembles one [`Call`] (one
//! submission, one readback) and is run by `device::run` inside its error
//! scopes. Inputs are never empty here: the op functions return the empty
//! convention value before touching the device.
//!
//! # Reductions
//! Entirely on the device: a first pass folds each block of 4,096 elements
//! (16 per thread, coalesced) into one partial per workgroup (a tree in
//! workgroup memory), then passes over the partials repeat until one value
//! is left — two passes up to 16M elements, three up to 64G. The last pass applies the finisher (divide for
//! `mean`, square root for `norm_l2`) and writes the one value that is read
//! back. Sums are therefore summed blockwise and pairwise, not left to right
//! like the scalar reference: the results differ by rounding only (see the
//! tolerances in `tests/ops_gpu.rs`). Blocks of 4,096 rather than 1,024 cost
//! nothing on a GPU and quarter the workgroup trees, whose barriers are what
//! a software device (lavapipe runs each barrier as a switch between all 256
//! invocations) spends its time on: `sum` of 256K elements took 14.6 ms with
//! 1,024 and 6.0 ms with 4,096 there.
//!
//! # Large inputs
//! Element-wise kernels and reduction passes bind at most one storage
//! binding's worth of elements at a time (`max_storage_buffer_binding_size`;
//! 128 MiB = 32M elements on lavapipe), chunk by chunk in the same
//! submission, and every dispatch folds its workgroups into a 2-D grid when
//! they exceed 65,535. Matrix ops bind whole matrices: an operand larger than
//! one binding runs on SIMD (`GpuError::TooLarge`, not a device failure).

use super::call::{chunks, to_u32, Buf, Call, Params, Post, View, BLOCK, GROUP};
use super::device::{Exec, GpuError};
use super::pipelines::EntryPoint;

/// Tile edge of the matmul kernel (`TILE` in matrix.wgsl).
const TILE: usize = 16;

/// An element-wise kernel over one or two inputs of `out.len()` elements
/// (`src_a`, `src_b`), with `alpha` for `scale` and `axpy`.
pub(super) fn elementwise(
    exec: &mut Exec<'_>,
    kernel: EntryPoint,
    inputs: &[&[f32]],
    alpha: f32,
    out: &mut [f32],
) -> Result<(), GpuError> {
    let n = out.len();
    let mut call = Call::new(exec);
    let mut sources = Vec::with_capacity(inputs.len());
    for data in inputs {
        debug_assert_eq!(data.len(), n);
        sources.push(call.upload(data)?);
    }
    let dst = call.scratch(n)?;
    for (start, len) in chunks(n, call.chunk_len()) {
        let mut bindings = bind_sources(&sources, start, len);
        bindings.push((2, dst.view(start, len)));
        let params = Params { len: to_u32(len, "chunk length")?, alpha, ..Params::default() };
        let groups = call.grid(len.div_ceil(GROUP))?;
        call.dispatch(kernel, &bindings, params.words(), groups);
    }
    call.read(dst.view(0, n), out)
}

/// A reduction of one or two inputs with `first` (`Sum`, `SumSq`, `Dot`,
/// `Max` or `Min`), then `post`.
pub(super) fn reduction(
    exec: &mut Exec<'_>,
    first: EntryPoint,
    inputs: &[&[f32]],
    post: Post,
    divisor: f32,
) -> Result<f32, GpuError> {
    let n = inputs[0].len();
    let mut call = Call::new(exec);
    let mut sources = Vec::with_capacity(inputs.len());
    for data in inputs {
        sources.push(call.upload(data)?);
    }
    let result = call.scratch(1)?;
    reduce(&mut call, first, &sources, n, post, divisor, result)?;
    let mut out = [0.0f32];
    call.read(result.view(0, 1), &mut out)?;
    Ok(out[0])
}

fn bind_sources(sources: &[Buf], start: usize, len: usize) -> Vec<(u32, View)> {
    let mut bindings = Vec::with_capacity(sources.len() + 3);
    for (i, b) in sources.iter().enumerate() {
        bindings.push((i as u32, b.view(start, len)));
    }
    bindings
}

/// Encodes passes until `n` elements are one value in `result[0]`.
fn reduce(
    call: &mut Call<'_, '_>,
    first: EntryPoint,
    sources: &[Buf],
    n: usize,
    post: Post,
    divisor: f32,
    result: Buf,
) -> Result<(), GpuError> {
    let combine = match first {
        EntryPoint::Max | EntryPoint::Min => first,
        _ => EntryPoint::Sum,
    };
    let (mut kernel, mut sources, mut len) = (first, sources.to_vec(), n);
    loop {
        let blocks = len.div_ceil(BLOCK);
        let last = blocks == 1;
        let target = if last { result } else { call.scratch(blocks)? };
        for (start, clen) in chunks(len, call.chunk_len()) {
            let mut bindings = bind_sources(&sources, start, clen);
            bindings.push((2, target.view(0, blocks)));
            let params = Params {
                len: to_u32(clen, "chunk length")?,
                out_base: to_u32(start / BLOCK, "partial index")?,
                post: if last { post } else { Post::None },
                divisor,
                ..Params::default()
            };
            let groups = call.grid(clen.div_ceil(BLOCK))?;
            call.dispatch(kernel, &bindings, params.words(), groups);
        }
        if last {
            return Ok(());
        }
        (kernel, sources, len) = (combine, vec![target], blocks);
    }
}

/// Softmax in three stages in one submission: a max reduction; `e^(x − max)`
/// with per-block sums; a sum reduction of those; a division by the sum.
pub(super) fn softmax(exec: &mut Exec<'_>, a: &[f32], out: &mut [f32]) -> Result<(), GpuError> {
    let n = a.len();
    let mut call = Call::new(exec);
    let src = call.upload(a)?;
    let dst = call.scratch(n)?;
    let max = call.scratch(1)?;
    let total = call.scratch(1)?;
    reduce(&mut call, EntryPoint::Max, &[src], n, Post::None, 0.0, max)?;
    let blocks = n.div_ceil(BLOCK);
    let partials = if blocks == 1 { total } else { call.scratch(blocks)? };
    let chunk = call.chunk_len();
    for (start, len) in chunks(n, chunk) {
        let bindings =
            [(0, src.view(start, len)), (2, dst.view(start, len)), (4, max.view(0, 1)), (5, partials.view(0, blocks))];
        let params = Params {
            len: to_u32(len, "chunk length")?,
            out_base: to_u32(start / BLOCK, "partial index")?,
            ..Params::default()
        };
        let groups = call.grid(len.div_ceil(BLOCK))?;
        call.dispatch(EntryPoint::SoftmaxExp, &bindings, params.words(), groups);
    }
    if blocks > 1 {
        reduce(&mut call, EntryPoint::Sum, &[partials], blocks, Post::None, 0.0, total)?;
    }
    for (start, len) in chunks(n, chunk) {
        let bindings = [(2, dst.view(start, len)), (4, total.view(0, 1))];
        let params = Params { len: to_u32(len, "chunk length")?, ..Params::default() };
        let groups = call.grid(len.div_ceil(GROUP))?;
        call.dispatch(EntryPoint::SoftmaxNormalize, &bindings, params.words(), groups);
    }
    call.read(dst.view(0, n), out)
}

/// C = A·B (A m×k, B k×n, all non-empty), in 16×16 tiles; more than 65,535
/// tiles along a side take several dispatches.
pub(super) fn matmul(
    exec: &mut Exec<'_>,
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
    out: &mut [f32],
) -> Result<(), GpuError> {
    let mut call = Call::new(exec);
    call.check_binding(a.len(), "matmul: a")?;
    call.check_binding(b.len(), "matmul: b")?;
    call.check_binding(out.len(), "matmul: c")?;
    let (ab, bb) = (call.upload(a)?, call.upload(b)?);
    let c = call.scratch(out.len())?;
    let max = call.limits().max_groups as usize;
    for (row0, rows) in chunks(m.div_ceil(TILE), max) {
        for (col0, cols) in chunks(n.div_ceil(TILE), max) {
            let params = Params {
                rows: to_u32(m, "m")?,
                cols: to_u32(n, "n")?,
                inner: to_u32(k, "k")?,
                tile_row0: to_u32(row0, "tile row")?,
                tile_col0: to_u32(col0, "tile column")?,
                ..Params::default()
            };
            let bindings = [(0, ab.view(0, a.len())), (1, bb.view(0, b.len())), (2, c.view(0, out.len()))];
            call.dispatch(EntryPoint::Matmul, &bindings, params.words(), (cols as u32, rows as u32));
        }
    }
    call.read(c.view(0, out.len()), out)
}

/// y = A·x (A m×n, both non-empty): one workgroup per row.
pub(super) fn matvec(
    exec: &mut Exec<'_>,
    a: &[f32],
    x: &[f32],
    (m, n): (usize, usize),
    out: &mut [f32],
) -> Result<(), GpuError> {
    let mut call = Call::new(exec);
    call.check_binding(a.len(), "matvec: a")?;
    let (ab, xb) = (call.upload(a)?, call.upload(x)?);
    let y = call.scratch(m)?;
    let params = Params { rows: to_u32(m, "m")?, cols: to_u32(n, "n")?, ..Params::default() };
    let groups = call.grid(m)?;
    call.dispatch(
        EntryPoint::Matvec,
        &[(0, ab.view(0, a.len())), (1, xb.view(0, n)), (2, y.view(0, m))],
        params.words(),
        groups,
    );
    call.read(y.view(0, m), out)
}

/// The transpose of `a` (rows×cols), with trueno's `TRANSPOSE_SHADER`.
pub(super) fn transpose(
    exec: &mut Exec<'_>,
    a: &[f32],
    (rows, cols): (usize, usize),
    out: &mut [f32],
) -> Result<(), GpuError> {
    let mut call = Call::new(exec);
    call.check_binding(a.len(), "transpose: a")?;
    let src = call.upload(a)?;
    let dst = call.scratch(a.len())?;
    let params = Params::transpose_words(to_u32(rows, "rows")?, to_u32(cols, "cols")?);
    let groups = call.grid(a.len().div_ceil(GROUP))?;
    call.dispatch(EntryPoint::Transpose, &[(0, src.view(0, a.len())), (1, dst.view(0, a.len()))], params, groups);
    call.read(dst.view(0, a.len()), out)
}

/// Valid-mode cross-correlation; `out` is (rows − krows + 1)×`out_cols`, non-empty.
pub(super) fn conv2d(
    exec: &mut Exec<'_>,
    input: &[f32],
    kernel: &[f32],
    (cols, krows, kcols, out_cols): (usize, usize, usize, usize),
    out: &mut [f32],
) -> Result<(), GpuError> {
    let mut call = Call::new(exec);
    call.check_binding(input.len(), "conv2d: input")?;
    call.check_binding(out.len(), "conv2d: output")?;
    let (ib, kb) = (call.upload(input)?, call.upload(kernel)?);
    let dst = call.scratch(out.len())?;
    let params = Params {
        len: to_u32(out.len(), "output length")?,
        cols: to_u32(cols, "cols")?,
        krows: to_u32(krows, "krows")?,
        kcols: to_u32(kcols, "kcols")?,
        out_cols: to_u32(out_cols, "output columns")?,
        ..Params::default()
    };
    let groups = call.grid(out.len().div_ceil(GROUP))?;
    let bindings = [(0, ib.view(0, input.len())), (1, kb.view(0, kernel.len())), (2, dst.view(0, out.len()))];
    call.dispatch(EntryPoint::Conv2d, &bindings, params.words(), groups);
    call.read(dst.view(0, out.len()), out)
}
