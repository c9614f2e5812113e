//! A generated loop's call on the device: its pipeline (explicit layout: the
//! uniforms with a dynamic offset per dispatch, the status word and partials,
//! then the slices, read-only or read-write), its buffers from the pool, one
//! upload per slice, the dispatches, and one mapping that reads the status,
//! the partials and every written slice back.

use std::borrow::Cow;
use std::num::NonZeroU64;

use trueno::backends::gpu::wgpu;

use super::slot::Slot;
use super::spec::{dispatch_limit, Access, GpuLoop, HostReason, HEADER_WORDS, UNIFORM_WORDS, WORKGROUP};
use crate::ops::gpu::buffers::Kind;
use crate::ops::gpu::call::{grid, map_read};
use crate::ops::gpu::device::{self, Exec, GpuError};
use crate::ops::gpu::pipelines::Pipeline;

/// Bytes of one dispatch's uniforms (`lp_u`).
const UNIFORM_BYTES: u64 = (UNIFORM_WORDS * 4) as u64;

/// Whether `source` parses and validates as wgpu will check it.
pub(super) fn validate(source: &str) -> Result<(), String> {
    let module = wgpu::naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    wgpu::naga::valid::Validator::new(
        wgpu::naga::valid::ValidationFlags::all(),
        wgpu::naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map(|_| ())
    .map_err(|e| format!("{e:?}"))
}

/// One call: `units` units of `spec`'s loop (a range loop's from `start`), its
/// scalar argument `words` and its `slots`, in binding order.
struct Call<'s, 'a> {
    spec: &'static GpuLoop,
    start: usize,
    units: usize,
    words: &'s [u32],
    slots: &'s mut [Slot<'a>],
}

/// Runs a call on the device: the workgroups' partial results when it ran (its
/// written slots then hold the results), `Err(Some(reason))` when it must run on
/// the host for that reason, `Err(None)` when no device is usable (or it failed:
/// said by `device`).
pub(super) fn run_on_device(
    spec: &'static GpuLoop,
    start: usize,
    units: usize,
    words: &[u32],
    slots: &mut [Slot<'_>],
) -> Result<Vec<u32>, Option<HostReason>> {
    let mut launch = Call { spec, start, units, words, slots };
    match device::run("generated GPU loop", |exec| call(exec, &mut launch)) {
        Some(Ok(partials)) => Ok(partials),
        Some(Err(reason)) => Err(Some(reason)),
        None => Err(None),
    }
}

/// The pipeline of `spec`'s loop, created with its explicit layout.
fn pipeline(exec: &mut Exec<'_>, spec: &'static GpuLoop) -> Pipeline {
    let device = &exec.gpu.device;
    exec.state.pipelines.generated(spec as *const _ as usize, || {
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries = vec![
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: NonZeroU64::new(UNIFORM_BYTES),
                },
                count: None,
            },
            storage(1, false),
        ];
        entries.extend(spec.bindings.iter().zip(2..).map(|(b, n)| storage(n, b.access == Access::Read)));
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("adaptive-kernel generated loop"),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("adaptive-kernel generated loop"),
            bind_group_layouts: &[&layout],
            push_constant_ranges: &[],
        });
        let source = spec.source();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("adaptive-kernel generated loop"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("adaptive-kernel generated loop"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        Pipeline { pipeline, layout }
    })
}

/// The call, under the device's lock and error scopes.
fn call(exec: &mut Exec<'_>, launch: &mut Call<'_, '_>) -> Result<Result<Vec<u32>, HostReason>, GpuError> {
    let limits = exec.gpu.limits;
    let (spec, units, start) = (launch.spec, launch.units, launch.start);
    let reductions = spec.reductions.len();
    if spec.bindings.len() + 1 > limits.max_storage_buffers as usize {
        return Ok(Err(HostReason::Bindings));
    }
    let groups = units.div_ceil(WORKGROUP);
    let status_words = 1 + groups * reductions;
    let fits = |words: usize| (words as u64) * 4 <= limits.max_binding.min(limits.max_buffer);
    if !fits(status_words) {
        return Ok(Err(HostReason::Size));
    }
    let mut data: Vec<Cow<'_, [u32]>> = Vec::with_capacity(spec.bindings.len());
    for slot in launch.slots.iter() {
        match slot.device_words() {
            Some(words) if fits(words.len()) => data.push(words),
            _ => return Ok(Err(HostReason::Size)),
        }
    }
    let lengths: Vec<u32> = data.iter().map(|d| d.len() as u32).collect();

    let pipeline = pipeline(exec, spec);
    let gpu = exec.gpu;
    let pool = &mut exec.state.pool;
    let mut buffers: Vec<(Kind, wgpu::Buffer)> = Vec::new();
    let mut take = |kind: Kind, bytes: u64| -> Result<usize, GpuError> {
        if crate::ops::gpu::faults::take_out_of_memory() {
            return Err(GpuError::Device(format!("out of memory allocating a {bytes}-byte buffer (injected fault)")));
        }
        buffers.push((kind, pool.take(&gpu.device, kind, bytes.max(4))));
        Ok(buffers.len() - 1)
    };

    // The status word and partials, then each slice.
    let status = take(Kind::Storage, status_words as u64 * 4)?;
    let slices: Vec<usize> = data.iter().map(|d| take(Kind::Storage, d.len() as u64 * 4)).collect::<Result<_, _>>()?;

    // One uniform block per dispatch, at offsets the device aligns.
    let per_dispatch =
        dispatch_limit(limits.max_groups as usize * limits.max_groups as usize * WORKGROUP).clamp(WORKGROUP, 1 << 31);
    let dispatches: Vec<(usize, usize)> =
        (0..units).step_by(per_dispatch).map(|base| (base, per_dispatch.min(units - base))).collect();
    let stride = UNIFORM_BYTES.next_multiple_of(limits.uniform_align.max(1));
    let mut uniforms = vec![0u8; dispatches.len() * stride as usize];
    for (d, &(base, _)) in dispatches.iter().enumerate() {
        let mut words = [0u32; UNIFORM_WORDS];
        words[..HEADER_WORDS].copy_from_slice(&[base as u32, units as u32, start as u32, 0]);
        let lens_end = HEADER_WORDS + lengths.len();
        words[HEADER_WORDS..lens_end].copy_from_slice(&lengths);
        words[lens_end..lens_end + launch.words.len()].copy_from_slice(launch.words);
        let at = d * stride as usize;
        uniforms[at..at + UNIFORM_BYTES as usize].copy_from_slice(bytemuck::cast_slice(&words));
    }
    let uniform = take(Kind::Uniform, uniforms.len() as u64)?;

    // Read back: the status and partials first, then each written slice, 4-byte aligned.
    let written: Vec<usize> = (0..data.len()).filter(|&k| spec.bindings[k].access == Access::ReadWrite).collect();
    let readback_bytes = (status_words + written.iter().map(|&k| data[k].len()).sum::<usize>()) as u64 * 4;
    if readback_bytes > limits.max_buffer {
        // Not a failure of the device: the written slices together exceed one buffer.
        return Ok(Err(HostReason::Size));
    }
    let staging = take(Kind::Readback, readback_bytes)?;

    let buffer = |i: usize| &buffers[i].1;
    gpu.queue.write_buffer(buffer(status), 0, bytemuck::bytes_of(&0u32));
    for (d, &b) in data.iter().zip(&slices) {
        if !d.is_empty() {
            gpu.queue.write_buffer(buffer(b), 0, bytemuck::cast_slice(d));
        }
    }
    gpu.queue.write_buffer(buffer(uniform), 0, &uniforms);

    let whole = |b: usize, words: usize| wgpu::BufferBinding {
        buffer: buffer(b),
        offset: 0,
        size: NonZeroU64::new(words.max(1) as u64 * 4),
    };
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: buffer(uniform),
                offset: 0,
                size: NonZeroU64::new(UNIFORM_BYTES),
            }),
        },
        wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Buffer(whole(status, status_words)) },
    ];
    for ((&b, d), n) in slices.iter().zip(&data).zip(2..) {
        entries.push(wgpu::BindGroupEntry { binding: n, resource: wgpu::BindingResource::Buffer(whole(b, d.len())) });
    }
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.layout,
        entries: &entries,
    });

    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(&pipeline.pipeline);
        for (d, &(_, len)) in dispatches.iter().enumerate() {
            let groups = grid(len.div_ceil(WORKGROUP), limits.max_groups)?;
            pass.set_bind_group(0, &bind_group, &[(d as u64 * stride) as u32]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
    }
    encoder.copy_buffer_to_buffer(buffer(status), 0, buffer(staging), 0, status_words as u64 * 4);
    let mut at = status_words as u64 * 4;
    for &k in &written {
        let bytes = data[k].len() as u64 * 4;
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(buffer(slices[k]), 0, buffer(staging), at, bytes);
        }
        at += bytes;
    }
    let index = gpu.queue.submit([encoder.finish()]);

    let lens: Vec<usize> = written.iter().map(|&k| data[k].len()).collect();
    drop(data);
    let mut outcome = Ok(Vec::new());
    map_read(&gpu.device, buffer(staging), readback_bytes, index, |bytes| {
        let words: &[u32] = bytemuck::cast_slice(bytes);
        if words[0] != 0 {
            // LP_SPECIAL alone: a NaN or infinity computed (loops.wgsl), not a fault.
            outcome = Err(if words[0] == 4 { HostReason::Special } else { HostReason::Status });
            return;
        }
        let mut at = status_words;
        let slots = &mut *launch.slots;
        for (&k, &len) in written.iter().zip(&lens) {
            slots[k].store(&words[at..at + len]);
            at += len;
        }
        outcome = Ok(words[1..status_words].to_vec());
    })?;

    let pool = &mut exec.state.pool;
    for (kind, buffer) in buffers {
        pool.give(kind, buffer);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_validates_with_a_generated_part() {
        static EMPTY: GpuLoop = GpuLoop::new(
            file!(),
            line!(),
            "const LP_BINDINGS: u32 = 0u;\nconst LP_REDUCTIONS: u32 = 0u;\n\
             @compute @workgroup_size(LP_WG)\nfn main(@builtin(local_invocation_index) lid: u32) {\n\
             if (lid == 0u) { lp_fail(LP_PANIC); }\n\
             let f = lp_powf(lp_sin(1.0), lp_cos(2.0)) + lp_ln(3.0) + lp_powi(2.0, -3) + lp_round(0.5);\n\
             let u = lp_umul(lp_uadd(1u, 2u), lp_usub(3u, 1u)) + lp_udiv(4u, 2u) + lp_urem(5u, 3u);\n\
             let i = lp_idiv(-4, 2) + lp_irem(5, 3) + lp_f2i(f) + lp_iclamp(1, 0, 2);\n\
             lp_partial(0u, 0u, u + bitcast<u32>(i) + lp_f2u(f) + lp_f2usize(f) + lp_i2usize(i) + lp_uclamp(1u, 0u, 2u) \
             + lp_at(0u, 1u) + lp_sub(0u, 1u, 1u) + lp_word(0u) + lp_base() + lp_count() + lp_start() + lp_len(0u) \
             + lp_arg(0u) + bitcast<u32>(lp_max(lp_min(1.0, 2.0), lp_clamp(lp_abs(-1.0), 0.0, lp_sqrt(4.0)))) \
             + select(0u, 1u, lp_is_finite(1.0) && !lp_is_infinite(1.0)));\n}\n",
            &[],
            &[],
            &[],
        );
        validate(&EMPTY.source()).unwrap();
    }
}
