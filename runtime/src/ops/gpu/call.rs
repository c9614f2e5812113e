//! One op call on the device: buffers taken from the pool, a list of
//! dispatches, then **one** submission and **one** readback.
//!
//! A [`Call`] collects everything first (uploads go through
//! `Queue::write_buffer`, which wgpu orders before the submission), then
//! writes all dispatches' parameters into one uniform buffer, records one
//! compute pass, copies the result into a pooled staging buffer, submits,
//! waits for that submission and maps the staging buffer. Buffers go back to
//! the pool afterwards; on an error they are dropped.
//!
//! Buffers are addressed by [`Buf`] handles and bound as [`View`]s (an
//! element range), so a kernel can be dispatched chunk by chunk over one
//! large buffer when an input exceeds the largest storage binding.

use std::num::NonZeroU64;

use trueno::backends::gpu::wgpu;

use super::buffers::{map_read, Kind};
use super::device::{Exec, GpuError, Limits};
use super::pipelines::EntryPoint;

/// Threads per workgroup of the 1-D kernels (`WG` in the shaders).
pub(super) const GROUP: usize = 256;

/// Elements one reduction workgroup folds (`BLOCK` in reduce.wgsl).
pub(super) const BLOCK: usize = 4096;

/// Bytes of one dispatch's parameters (the WGSL `Params` struct).
const PARAM_BYTES: u64 = 64;

/// What a reduction's last pass does to its result (`post` in reduce.wgsl).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Post {
    /// Nothing.
    #[default]
    None = 0,
    /// Divide by `Params::divisor` (mean).
    Divide = 1,
    /// Square root (L2 norm).
    Sqrt = 2,
}

/// A dispatch's parameters: the fields of the WGSL `Params` struct in common.wgsl.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Params {
    pub(super) len: u32,
    pub(super) out_base: u32,
    pub(super) post: Post,
    pub(super) rows: u32,
    pub(super) cols: u32,
    pub(super) inner: u32,
    pub(super) krows: u32,
    pub(super) kcols: u32,
    pub(super) tile_row0: u32,
    pub(super) tile_col0: u32,
    pub(super) out_cols: u32,
    pub(super) alpha: f32,
    pub(super) divisor: f32,
}

impl Params {
    /// The struct as the 16 words the shader reads.
    pub(super) fn words(&self) -> [u32; 16] {
        [
            self.len,
            self.out_base,
            self.post as u32,
            self.rows,
            self.cols,
            self.inner,
            self.krows,
            self.kcols,
            self.tile_row0,
            self.tile_col0,
            self.out_cols,
            0,
            self.alpha.to_bits(),
            self.divisor.to_bits(),
            0,
            0,
        ]
    }

    /// trueno's `TRANSPOSE_SHADER` parameters `{ m, n, scale, _pad }` (scale 1: a plain transpose).
    pub(super) fn transpose_words(rows: u32, cols: u32) -> [u32; 16] {
        let mut w = [0; 16];
        w[0] = rows;
        w[1] = cols;
        w[2] = 1.0f32.to_bits();
        w
    }
}

/// A buffer of the current call.
#[derive(Clone, Copy, Debug)]
pub(super) struct Buf(usize);

/// `len` elements of a buffer starting at element `offset`.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    buf: Buf,
    offset: usize,
    len: usize,
}

impl Buf {
    /// Elements `offset..offset + len`.
    pub(super) fn view(self, offset: usize, len: usize) -> View {
        View { buf: self, offset, len }
    }
}

struct Step {
    kernel: EntryPoint,
    bindings: Vec<(u32, View)>,
    params: [u32; 16],
    groups: (u32, u32),
}

/// One op call being assembled; see the module docs.
pub(super) struct Call<'e, 'a> {
    exec: &'e mut Exec<'a>,
    buffers: Vec<(Kind, wgpu::Buffer)>,
    steps: Vec<Step>,
}

/// `u32::try_from` for sizes that go into shader parameters.
pub(super) fn to_u32(value: usize, what: &str) -> Result<u32, GpuError> {
    u32::try_from(value).map_err(|_| GpuError::TooLarge(format!("{what} = {value} does not fit a u32")))
}

/// The workgroup grid for `count` workgroups: up to `max` along x, the rest
/// folded into y (the shaders rebuild the linear index from `num_workgroups`).
pub(super) fn grid(count: usize, max: u32) -> Result<(u32, u32), GpuError> {
    let max_wide = max as usize;
    let x = count.clamp(1, max_wide);
    let y = count.div_ceil(x);
    if y > max_wide {
        return Err(GpuError::TooLarge(format!("{count} workgroups exceed {max}×{max}")));
    }
    Ok((x as u32, y as u32))
}

/// `(start, len)` of consecutive chunks of at most `chunk` elements covering `0..n`.
pub(super) fn chunks(n: usize, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(chunk.max(1)).map(move |start| (start, chunk.min(n - start)))
}

impl<'e, 'a> Call<'e, 'a> {
    /// An empty call on the device of `exec`.
    pub(super) fn new(exec: &'e mut Exec<'a>) -> Self {
        Call { exec, buffers: Vec::new(), steps: Vec::new() }
    }

    /// The device's limits.
    pub(super) fn limits(&self) -> Limits {
        self.exec.gpu.limits
    }

    /// The most elements one storage binding may hold, rounded down to whole
    /// reduction blocks (so chunk offsets meet every alignment rule).
    pub(super) fn chunk_len(&self) -> usize {
        let elems = usize::try_from(self.limits().max_binding / 4).unwrap_or(usize::MAX);
        (elems / BLOCK * BLOCK).max(BLOCK)
    }

    /// Fails with [`GpuError::TooLarge`] unless `len` elements fit one storage binding.
    pub(super) fn check_binding(&self, len: usize, what: &str) -> Result<(), GpuError> {
        let bytes = len as u64 * 4;
        if bytes > self.limits().max_binding {
            return Err(GpuError::TooLarge(format!(
                "{what} is {bytes} bytes, over the device's {}-byte storage binding limit",
                self.limits().max_binding
            )));
        }
        Ok(())
    }

    /// The workgroup grid for `count` workgroups on this device.
    pub(super) fn grid(&self, count: usize) -> Result<(u32, u32), GpuError> {
        grid(count, self.limits().max_groups)
    }

    fn buffer(&mut self, kind: Kind, bytes: u64) -> Result<Buf, GpuError> {
        let max = self.limits().max_buffer;
        if bytes > max {
            return Err(GpuError::TooLarge(format!("a {bytes}-byte buffer is over the device's {max}-byte limit")));
        }
        if super::faults::take_out_of_memory() {
            return Err(GpuError::Device(format!("out of memory allocating a {bytes}-byte buffer (injected fault)")));
        }
        let buffer = self.exec.state.pool.take(&self.exec.gpu.device, kind, bytes.max(4));
        self.buffers.push((kind, buffer));
        Ok(Buf(self.buffers.len() - 1))
    }

    /// A storage buffer holding a copy of `data`.
    pub(super) fn upload(&mut self, data: &[f32]) -> Result<Buf, GpuError> {
        let buf = self.buffer(Kind::Storage, std::mem::size_of_val(data) as u64)?;
        self.exec.gpu.queue.write_buffer(&self.buffers[buf.0].1, 0, bytemuck::cast_slice(data));
        super::traffic::up(std::mem::size_of_val(data) as u64);
        Ok(buf)
    }

    /// A storage buffer for `len` elements the kernels will write.
    pub(super) fn scratch(&mut self, len: usize) -> Result<Buf, GpuError> {
        self.buffer(Kind::Storage, len as u64 * 4)
    }

    /// Adds a dispatch of `kernel` over `groups` workgroups; `bindings` pairs
    /// binding numbers with views (the parameters' binding is added here).
    pub(super) fn dispatch(
        &mut self,
        kernel: EntryPoint,
        bindings: &[(u32, View)],
        params: [u32; 16],
        groups: (u32, u32),
    ) {
        self.steps.push(Step { kernel, bindings: bindings.to_vec(), params, groups });
    }

    /// Submits everything and reads `src` into `out` (`out.len() == src.len`).
    pub(super) fn read(mut self, src: View, out: &mut [f32]) -> Result<(), GpuError> {
        debug_assert_eq!(out.len(), src.len);
        let gpu = self.exec.gpu;
        let stride = PARAM_BYTES.next_multiple_of(self.limits().uniform_align.max(1));
        let mut param_bytes = vec![0u8; self.steps.len() * stride as usize];
        for (i, step) in self.steps.iter().enumerate() {
            let at = i * stride as usize;
            param_bytes[at..at + PARAM_BYTES as usize].copy_from_slice(bytemuck::cast_slice(&step.params));
        }
        let params = self.buffer(Kind::Uniform, param_bytes.len() as u64)?;
        let bytes = src.len as u64 * 4;
        let staging = self.buffer(Kind::Readback, bytes)?;
        let buffer = |b: Buf| &self.buffers[b.0].1;
        gpu.queue.write_buffer(buffer(params), 0, &param_bytes);

        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            for (i, step) in self.steps.iter().enumerate() {
                let pipeline = self.exec.state.pipelines.get(&gpu.device, step.kernel);
                let mut entries: Vec<wgpu::BindGroupEntry<'_>> = step
                    .bindings
                    .iter()
                    .map(|&(binding, v)| wgpu::BindGroupEntry {
                        binding,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: buffer(v.buf),
                            offset: v.offset as u64 * 4,
                            size: NonZeroU64::new(v.len as u64 * 4),
                        }),
                    })
                    .collect();
                entries.push(wgpu::BindGroupEntry {
                    binding: step.kernel.params_binding(),
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: buffer(params),
                        offset: i as u64 * stride,
                        size: NonZeroU64::new(PARAM_BYTES),
                    }),
                });
                let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.layout,
                    entries: &entries,
                });
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(step.groups.0, step.groups.1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(buffer(src.buf), src.offset as u64 * 4, buffer(staging), 0, bytes);
        let index = gpu.queue.submit([encoder.finish()]);
        super::traffic::submission();
        map_read(&gpu.device, buffer(staging), bytes, index, |data| {
            bytemuck::cast_slice_mut::<f32, u8>(out).copy_from_slice(data)
        })
        .map_err(GpuError::Device)?;
        super::traffic::down(bytes);

        let pool = &mut self.exec.state.pool;
        for (kind, buffer) in self.buffers.drain(..) {
            pool.give(kind, buffer);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_fold_into_two_dimensions_past_the_limit() {
        assert_eq!(grid(1, 65_535).unwrap(), (1, 1));
        assert_eq!(grid(65_535, 65_535).unwrap(), (65_535, 1));
        assert_eq!(grid(65_536, 65_535).unwrap(), (65_535, 2));
        // 16M elements at 256 per workgroup.
        let (x, y) = grid((16 << 20) / GROUP, 65_535).unwrap();
        assert!(x as usize * y as usize >= 65_536 && x <= 65_535 && y == 2);
        assert!(grid(65_535 * 65_535 + 1, 65_535).is_err());
    }

    #[test]
    fn chunks_cover_the_range_once() {
        assert_eq!(chunks(0, 4).collect::<Vec<_>>(), []);
        assert_eq!(chunks(10, 4).collect::<Vec<_>>(), [(0, 4), (4, 4), (8, 2)]);
        assert_eq!(chunks(8, 4).collect::<Vec<_>>(), [(0, 4), (4, 4)]);
        assert_eq!(chunks(3, 1 << 25).collect::<Vec<_>>(), [(0, 3)]);
    }

    #[test]
    fn params_follow_the_wgsl_struct() {
        let p = Params { len: 7, post: Post::Sqrt, out_cols: 5, alpha: 2.0, divisor: 3.0, ..Params::default() };
        let w = p.words();
        assert_eq!((w[0], w[2], w[10]), (7, 2, 5));
        assert_eq!((f32::from_bits(w[12]), f32::from_bits(w[13])), (2.0, 3.0));
        assert_eq!(std::mem::size_of_val(&w) as u64, PARAM_BYTES);
    }
}
