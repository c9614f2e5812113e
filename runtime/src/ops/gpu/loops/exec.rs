//! The device side of a group of generated loops ([`Group`]): each launch
//! binds its slices (uploading each region of host memory once per group, or
//! binding a resident handle's device copy), records its dispatches and the
//! combination of its reductions into the group's one command encoder; the
//! finish submits it once and reads back, in one mapping, each loop's status
//! word and reduction results and every written slice of host data.
//!
//! # Regions and versions
//! A slice is a region of host memory, known by its address, length and element
//! type. A group uploads a region the first time a loop binds it; a later loop of
//! the group that reads it binds the same buffer (a region written by an earlier
//! loop is not read back and uploaded again). Each write makes a version: the
//! first loop writing a region of host data writes its upload in place (host
//! memory still holds the data before it); every other write (a second writer, a
//! resident handle) writes a copy made on the device, so the data before it is
//! kept until the group's status words are read. A loop that set its status word
//! (what Rust would panic on, or compute otherwise) and every later loop of the
//! group run on the host; the versions of the loops before it are committed:
//! host data is read back into the slices, a resident handle's device copy
//! becomes the version its last committed writer made.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use trueno::backends::gpu::wgpu;

use super::slot::Slot;
use super::spec::{
    dispatch_limit, Access, Elem, GpuLoop, HostReason, ReduceOp, HEADER_WORDS, UNIFORM_WORDS, WORKGROUP,
};
use crate::ops::gpu::buffers::map_read;
use crate::ops::gpu::buffers::Kind;
use crate::ops::gpu::call::grid;
use crate::ops::gpu::device::{Exec, GpuError};
use crate::ops::gpu::pipelines::Pipeline;
use crate::ops::gpu::residency::{self, Coherence, DeviceCopy};
use crate::ops::gpu::traffic;

/// Bytes of one dispatch's uniforms (`lp_u`).
const UNIFORM_BYTES: u64 = (UNIFORM_WORDS * 4) as u64;

/// Bytes of one combine pass's parameters (`CombineParams` in `shaders/combine.wgsl`).
const COMBINE_BYTES: u64 = 32;

/// Values one combine workgroup folds (`CB_WG`).
const COMBINE_WG: usize = 256;

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

/// A region of host memory: where it starts, its length and its element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) addr: usize,
    pub(super) len: usize,
    pub(super) elem: Elem,
}

impl Key {
    pub(super) fn of(slot: &Slot<'_>) -> Key {
        Key { addr: slot.addr(), len: slot.len(), elem: slot.elem() }
    }
}

/// One version of a region on the device.
struct Version {
    buffer: wgpu::Buffer,
    /// The loop (its index in the group) that wrote it; `None` for the data before the group.
    writer: Option<usize>,
}

/// A region a loop of the group bound.
struct Region {
    key: Key,
    /// The resident handle whose host memory it is, if any.
    resident: Option<Arc<DeviceCopy>>,
    /// Whether the first version was uploaded by this group (not a handle's device copy).
    uploaded: bool,
    versions: Vec<Version>,
}

impl Region {
    fn current(&self) -> &wgpu::Buffer {
        &self.versions.last().expect("a region has its first version").buffer
    }

    fn written(&self) -> bool {
        self.versions.iter().any(|v| v.writer.is_some())
    }

    /// The version the loops before loop `first_host` left.
    fn committed(&self, first_host: usize) -> &Version {
        self.versions.iter().rev().find(|v| v.writer.is_none_or(|w| w < first_host)).expect("the first version")
    }
}

/// A loop launched on the device.
struct Run {
    /// Its index in the group.
    index: usize,
    status: wgpu::Buffer,
    status_words: usize,
    /// Each reduction's operator and type, and where its combined result is (`None`:
    /// a `usize` sum, combined on the host from every partial).
    reductions: Vec<(ReduceOp, Elem, bool)>,
    /// The combined results, one word per reduction.
    results: Option<wgpu::Buffer>,
}

impl Run {
    /// Whether every partial must come back (a `usize` sum is combined on the host).
    fn all_partials(&self) -> bool {
        self.reductions.iter().any(|&(_, _, on_device)| !on_device)
    }

    fn readback_words(&self) -> usize {
        let status = if self.all_partials() { self.status_words } else { 1 };
        status + if self.results.is_some() { self.reductions.len() } else { 0 }
    }
}

/// A group's work on the device, from its first launch to its finish.
#[derive(Default)]
pub(super) struct Group {
    encoder: Option<wgpu::CommandEncoder>,
    regions: Vec<Region>,
    runs: Vec<Run>,
    /// Pooled buffers to give back when the group ends (those committed to a handle are taken out).
    pooled: Vec<(Kind, wgpu::Buffer)>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group").field("regions", &self.regions.len()).field("runs", &self.runs.len()).finish()
    }
}

/// What one loop of a finished group left: its reductions' values (one combined value
/// each, or every partial of a `usize` sum), in order.
pub(super) type Reductions = Vec<Vec<u32>>;

/// The status word of a loop that computed a NaN or an infinity and met nothing else
/// (`LP_SPECIAL` in loops.wgsl).
const LP_SPECIAL: u32 = 4;

/// What a finished group hands back.
#[derive(Debug, Default)]
pub(super) struct Finished {
    /// The first loop (index in the group) whose status word was set; it and every later
    /// loop run on the host.
    pub(super) first_host: Option<usize>,
    /// Whether that loop's status word said only that it computed a NaN or an infinity
    /// (`LP_SPECIAL`, loops.wgsl): data, not a fault.
    pub(super) special: bool,
    /// Each loop that ran on the device and is committed: its index and its reductions.
    pub(super) reductions: Vec<(usize, Reductions)>,
    /// Each region of host data with a committed write: its key and its words.
    pub(super) stores: Vec<(Key, Vec<u32>)>,
}

fn take(
    exec: &mut Exec<'_>,
    pooled: &mut Vec<(Kind, wgpu::Buffer)>,
    kind: Kind,
    bytes: u64,
) -> Result<wgpu::Buffer, GpuError> {
    if crate::ops::gpu::faults::take_out_of_memory() {
        return Err(GpuError::Device(format!("out of memory allocating a {bytes}-byte buffer (injected fault)")));
    }
    let buffer = exec.state.pool.take(&exec.gpu.device, kind, bytes.max(4));
    pooled.push((kind, buffer.clone()));
    Ok(buffer)
}

/// The pipeline of `spec`'s loop, created with its explicit layout.
fn pipeline(exec: &mut Exec<'_>, spec: &'static GpuLoop) -> Pipeline {
    let device = &exec.gpu.device;
    exec.state.pipelines.generated(spec as *const _ as usize, || {
        let mut entries = vec![uniform_entry(0, UNIFORM_BYTES), storage_entry(1, false)];
        entries.extend(spec.bindings.iter().zip(2..).map(|(b, n)| storage_entry(n, b.access == Access::Read)));
        make_pipeline(device, "adaptive-kernel generated loop", &entries, &spec.source())
    })
}

/// The pipeline of the combine shader.
fn combine_pipeline(exec: &mut Exec<'_>) -> Pipeline {
    static KEY: u8 = 0;
    let device = &exec.gpu.device;
    exec.state.pipelines.generated(&KEY as *const u8 as usize, || {
        let entries = [uniform_entry(0, COMBINE_BYTES), storage_entry(1, true), storage_entry(2, false)];
        make_pipeline(device, "adaptive-kernel combine", &entries, include_str!("../shaders/combine.wgsl"))
    })
}

fn uniform_entry(binding: u32, bytes: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: NonZeroU64::new(bytes),
        },
        count: None,
    }
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn make_pipeline(device: &wgpu::Device, label: &str, entries: &[wgpu::BindGroupLayoutEntry], source: &str) -> Pipeline {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(label), entries });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[&layout],
        push_constant_ranges: &[],
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    Pipeline { pipeline, layout }
}

fn binding<'b>(buffer: &'b wgpu::Buffer, offset: u64, bytes: u64) -> wgpu::BindingResource<'b> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: NonZeroU64::new(bytes.max(4)) })
}

/// The combine shader's operator code for a reduction, or `None` when it is combined on the host.
fn combine_op(op: ReduceOp, elem: Elem) -> Option<u32> {
    match (op, elem) {
        (ReduceOp::Sum, Elem::F32) => Some(0),
        (ReduceOp::Product, Elem::F32) => Some(1),
        (ReduceOp::Max, Elem::F32) => Some(2),
        (ReduceOp::Min, Elem::F32) => Some(3),
        (ReduceOp::Sum, Elem::I32 | Elem::U32) => Some(4),
        _ => None,
    }
}

impl Group {
    /// Adds loop `index` of the group (`units` units of `spec`'s loop, from `start`; its
    /// scalar `words` and its `slots` in binding order): binds, uploads and records it.
    /// `Ok(Err(reason))` when the host must run it instead.
    pub(super) fn launch(
        &mut self,
        exec: &mut Exec<'_>,
        index: usize,
        spec: &'static GpuLoop,
        (start, units): (usize, usize),
        words: &[u32],
        slots: &[Slot<'_>],
    ) -> Result<Result<(), HostReason>, GpuError> {
        let limits = exec.gpu.limits;
        let reductions = spec.reductions.len();
        if spec.bindings.len() + 1 > limits.max_storage_buffers as usize {
            return Ok(Err(HostReason::Bindings));
        }
        let groups = units.div_ceil(WORKGROUP);
        let status_words = 1 + groups * reductions;
        let fits = |words: usize| (words as u64) * 4 <= limits.max_binding.min(limits.max_buffer);
        if !fits(status_words) || !slots.iter().all(|s| fits(s.len())) {
            return Ok(Err(HostReason::Size));
        }
        // Which region each slot is, uploading the regions this group has not seen.
        let mut bound: Vec<usize> = Vec::with_capacity(slots.len());
        let mut uploads: Vec<(usize, Cow<'_, [u32]>)> = Vec::new();
        for (slot, b) in slots.iter().zip(spec.bindings) {
            let key = Key::of(slot);
            if let Some(r) = self.regions.iter().position(|r| r.key == key && key.len > 0) {
                bound.push(r);
                continue;
            }
            let resident = if b.param { residency::lookup(key.addr, key.len, key.elem) } else { None };
            let from_handle = match &resident {
                Some(copy) => {
                    let st = copy.lock();
                    match (&st.coherence, &st.buffer) {
                        (Coherence::Both | Coherence::Device, Some(b)) => Some(Ok(b.clone())),
                        (Coherence::Rescued(w), _) => Some(Err(Cow::Owned(w.clone()))),
                        (Coherence::Lost(_), _) => return Ok(Err(HostReason::Lost)),
                        _ => None,
                    }
                }
                None => None,
            };
            let (buffer, uploaded) = match from_handle {
                Some(Ok(buffer)) => (buffer, false),
                other => {
                    let data = match other {
                        Some(Err(rescued)) => rescued,
                        _ => match slot.device_words() {
                            Some(words) => words,
                            None => return Ok(Err(HostReason::Size)),
                        },
                    };
                    let buffer = take(exec, &mut self.pooled, Kind::Storage, key.len as u64 * 4)?;
                    uploads.push((self.regions.len(), data));
                    (buffer, true)
                }
            };
            bound.push(self.regions.len());
            self.regions.push(Region { key, resident, uploaded, versions: vec![Version { buffer, writer: None }] });
        }
        let gpu = exec.gpu;
        for (r, data) in &uploads {
            if !data.is_empty() {
                gpu.queue.write_buffer(self.regions[*r].current(), 0, bytemuck::cast_slice(data));
                traffic::up(data.len() as u64 * 4);
            }
        }
        drop(uploads);

        let pipeline = pipeline(exec, spec);
        let combine = (reductions > 0).then(|| combine_pipeline(exec));
        let status = take(exec, &mut self.pooled, Kind::Storage, status_words as u64 * 4)?;
        let mut encoder = self.encoder.take().unwrap_or_else(|| {
            exec.gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("adaptive-kernel loops") })
        });
        encoder.clear_buffer(&status, 0, Some(4));

        // Each written region gets its version: in place on a first upload of host data, else a copy.
        let mut binds: Vec<wgpu::Buffer> = Vec::with_capacity(slots.len());
        for (slot, &r) in slots.iter().zip(&bound) {
            let region = &self.regions[r];
            if slot.access() == Access::Read || region.key.len == 0 {
                binds.push(region.current().clone());
                continue;
            }
            let in_place = region.resident.is_none() && region.uploaded && !region.written();
            let buffer = if in_place {
                region.current().clone()
            } else {
                let bytes = region.key.len as u64 * 4;
                let copy = take(exec, &mut self.pooled, Kind::Storage, bytes)?;
                encoder.copy_buffer_to_buffer(self.regions[r].current(), 0, &copy, 0, bytes);
                copy
            };
            self.regions[r].versions.push(Version { buffer: buffer.clone(), writer: Some(index) });
            binds.push(buffer);
        }

        // One uniform block per dispatch, at offsets the device aligns.
        let per_dispatch = dispatch_limit(limits.max_groups as usize * limits.max_groups as usize * WORKGROUP)
            .clamp(WORKGROUP, 1 << 31);
        let dispatches: Vec<(usize, usize)> =
            (0..units).step_by(per_dispatch).map(|base| (base, per_dispatch.min(units - base))).collect();
        let stride = UNIFORM_BYTES.next_multiple_of(limits.uniform_align.max(1));
        let mut uniforms = vec![0u8; dispatches.len() * stride as usize];
        for (d, &(base, _)) in dispatches.iter().enumerate() {
            let mut u = [0u32; UNIFORM_WORDS];
            u[..HEADER_WORDS].copy_from_slice(&[base as u32, units as u32, start as u32, 0]);
            for (k, slot) in slots.iter().enumerate() {
                u[HEADER_WORDS + k] = slot.len() as u32;
            }
            let at = HEADER_WORDS + slots.len();
            u[at..at + words.len()].copy_from_slice(words);
            let at = d * stride as usize;
            uniforms[at..at + UNIFORM_BYTES as usize].copy_from_slice(bytemuck::cast_slice(&u));
        }
        let uniform = take(exec, &mut self.pooled, Kind::Uniform, uniforms.len() as u64)?;
        gpu.queue.write_buffer(&uniform, 0, &uniforms);

        let mut entries = vec![
            wgpu::BindGroupEntry { binding: 0, resource: binding(&uniform, 0, UNIFORM_BYTES) },
            wgpu::BindGroupEntry { binding: 1, resource: binding(&status, 0, status_words as u64 * 4) },
        ];
        for ((b, slot), n) in binds.iter().zip(slots).zip(2..) {
            entries.push(wgpu::BindGroupEntry { binding: n, resource: binding(b, 0, slot.len() as u64 * 4) });
        }
        let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.layout,
            entries: &entries,
        });

        // The reductions' combination: passes over the partials, into `results`.
        let mut results = None;
        let mut passes: Vec<(wgpu::BindGroup, u32, usize)> = Vec::new();
        let kinds: Vec<(ReduceOp, Elem, bool)> =
            spec.reductions.iter().map(|r| (r.op, r.elem, combine_op(r.op, r.elem).is_some())).collect();
        if let Some(combine) = &combine {
            if kinds.iter().any(|k| k.2) {
                let out = take(exec, &mut self.pooled, Kind::Storage, reductions as u64 * 4)?;
                let scratch_words = groups.div_ceil(COMBINE_WG).max(1);
                let scratch = [
                    take(exec, &mut self.pooled, Kind::Storage, scratch_words as u64 * 4)?,
                    take(exec, &mut self.pooled, Kind::Storage, scratch_words as u64 * 4)?,
                ];
                let cstride = COMBINE_BYTES.next_multiple_of(limits.uniform_align.max(1));
                let mut params: Vec<[u32; 8]> = Vec::new();
                let mut plan: Vec<(u8, u8, usize)> = Vec::new(); // (source, destination, workgroups); 0 status, 1/2 scratch, 3 results
                for (r, &(op, elem, on_device)) in kinds.iter().enumerate() {
                    let Some(code) = combine_op(op, elem).filter(|_| on_device) else { continue };
                    let (mut src, mut offset, mut src_stride, mut count, mut pass) =
                        (0u8, 1 + r, reductions, groups, 0);
                    loop {
                        let out_groups = count.div_ceil(COMBINE_WG).max(1);
                        let last = out_groups == 1;
                        let (dst, dst_offset) = if last { (3u8, r) } else { (1 + (pass % 2) as u8, 0) };
                        params.push([count as u32, offset as u32, src_stride as u32, code, dst_offset as u32, 0, 0, 0]);
                        plan.push((src, dst, out_groups));
                        if last {
                            break;
                        }
                        (src, offset, src_stride, count, pass) = (dst, 0, 1, out_groups, pass + 1);
                    }
                }
                let mut bytes = vec![0u8; params.len() * cstride as usize];
                for (i, p) in params.iter().enumerate() {
                    let at = i * cstride as usize;
                    bytes[at..at + COMBINE_BYTES as usize].copy_from_slice(bytemuck::cast_slice(p));
                }
                let cuniform = take(exec, &mut self.pooled, Kind::Uniform, bytes.len() as u64)?;
                gpu.queue.write_buffer(&cuniform, 0, &bytes);
                let buffer_of = |k: u8| match k {
                    0 => &status,
                    1 => &scratch[0],
                    2 => &scratch[1],
                    _ => &out,
                };
                for (i, &(src, dst, out_groups)) in plan.iter().enumerate() {
                    let entries = [
                        wgpu::BindGroupEntry { binding: 0, resource: binding(&cuniform, 0, COMBINE_BYTES) },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: binding(buffer_of(src), 0, buffer_of(src).size()),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: binding(buffer_of(dst), 0, buffer_of(dst).size()),
                        },
                    ];
                    let bg = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: None,
                        layout: &combine.layout,
                        entries: &entries,
                    });
                    passes.push((bg, (i as u64 * cstride) as u32, out_groups));
                }
                results = Some(out);
            }
        }

        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&pipeline.pipeline);
            for (d, &(_, len)) in dispatches.iter().enumerate() {
                let groups = grid(len.div_ceil(WORKGROUP), limits.max_groups)?;
                pass.set_bind_group(0, &bind_group, &[(d as u64 * stride) as u32]);
                pass.dispatch_workgroups(groups.0, groups.1, 1);
            }
            if let Some(combine) = &combine {
                pass.set_pipeline(&combine.pipeline);
                for (bg, offset, out_groups) in &passes {
                    let g = grid(*out_groups, limits.max_groups)?;
                    pass.set_bind_group(0, bg, &[*offset]);
                    pass.dispatch_workgroups(g.0, g.1, 1);
                }
            }
        }
        self.encoder = Some(encoder);
        self.runs.push(Run { index, status, status_words, reductions: kinds, results });
        Ok(Ok(()))
    }

    /// Submits the group, reads back what the host needs and commits the versions of
    /// the loops before the first whose status word was set.
    pub(super) fn finish(mut self, exec: &mut Exec<'_>) -> Result<Finished, GpuError> {
        let Some(mut encoder) = self.encoder.take() else { return Ok(Finished::default()) };
        let gpu = exec.gpu;
        // Optimistic: every loop committed, so each written region of host data comes back as
        // its last version (a loop that set its status word needs a second readback, rare).
        let outputs: Vec<usize> = (0..self.regions.len())
            .filter(|&r| self.regions[r].resident.is_none() && self.regions[r].written())
            .collect();
        let total_words: usize = self.runs.iter().map(Run::readback_words).sum::<usize>()
            + outputs.iter().map(|&r| self.regions[r].key.len).sum::<usize>();
        let total = total_words as u64 * 4;
        if total > exec.gpu.limits.max_buffer {
            // Not a failure of the device: the results together exceed one buffer.
            return Ok(Finished { first_host: self.runs.first().map(|r| r.index), ..Finished::default() });
        }
        let staging = take(exec, &mut self.pooled, Kind::Readback, total)?;
        let mut at = 0u64;
        for run in &self.runs {
            let status_bytes = if run.all_partials() { run.status_words as u64 * 4 } else { 4 };
            encoder.copy_buffer_to_buffer(&run.status, 0, &staging, at, status_bytes);
            at += status_bytes;
            if let Some(results) = &run.results {
                let bytes = run.reductions.len() as u64 * 4;
                encoder.copy_buffer_to_buffer(results, 0, &staging, at, bytes);
                at += bytes;
            }
        }
        for &r in &outputs {
            let bytes = self.regions[r].key.len as u64 * 4;
            encoder.copy_buffer_to_buffer(self.regions[r].current(), 0, &staging, at, bytes);
            at += bytes;
        }
        let index = gpu.queue.submit([encoder.finish()]);
        traffic::submission();
        let mut words_back: Vec<u32> = Vec::new();
        map_read(&gpu.device, &staging, total, index, |bytes| words_back = bytemuck::cast_slice(bytes).to_vec())
            .map_err(GpuError::Device)?;
        traffic::down(total);

        // Each run's status and reductions.
        let mut finished = Finished::default();
        let mut at = 0usize;
        for run in &self.runs {
            let status = words_back[at];
            let partials = if run.all_partials() { &words_back[at + 1..at + run.status_words] } else { &[][..] };
            at += if run.all_partials() { run.status_words } else { 1 };
            let combined = if run.results.is_some() {
                let c = &words_back[at..at + run.reductions.len()];
                at += run.reductions.len();
                c
            } else {
                &[][..]
            };
            if status != 0 {
                finished.first_host = Some(run.index);
                finished.special = status == LP_SPECIAL;
                break;
            }
            let count = run.reductions.len();
            let values = run
                .reductions
                .iter()
                .enumerate()
                .map(|(r, &(_, _, on_device))| {
                    if on_device {
                        vec![combined[r]]
                    } else {
                        partials.iter().skip(r).step_by(count).copied().collect()
                    }
                })
                .collect();
            finished.reductions.push((run.index, values));
        }
        let first_host = finished.first_host.unwrap_or(usize::MAX);

        // Host data: the committed version of each written region.
        let mut at = self.runs.iter().map(Run::readback_words).sum::<usize>();
        let mut again: Vec<(Key, wgpu::Buffer)> = Vec::new();
        for &r in &outputs {
            let region = &self.regions[r];
            let len = region.key.len;
            let committed = region.committed(first_host);
            if committed.writer.is_some() {
                if committed.writer == region.versions.last().and_then(|v| v.writer) {
                    finished.stores.push((region.key, words_back[at..at + len].to_vec()));
                } else {
                    again.push((region.key, committed.buffer.clone()));
                }
            }
            at += len;
        }
        if !again.is_empty() {
            let buffers: Vec<(&wgpu::Buffer, usize)> = again.iter().map(|(k, b)| (b, k.len)).collect();
            let data = residency::read_buffers(exec, &buffers)?;
            finished.stores.extend(again.iter().map(|(k, _)| *k).zip(data));
        }

        // Resident handles: the committed version becomes the device copy.
        let mut kept: Vec<wgpu::Buffer> = Vec::new();
        for region in &self.regions {
            let Some(copy) = &region.resident else { continue };
            let committed = region.committed(first_host);
            let mut st = copy.lock();
            if committed.writer.is_some() {
                st.buffer = Some(committed.buffer.clone());
                st.coherence = Coherence::Device;
                kept.push(committed.buffer.clone());
            } else if region.uploaded && matches!(st.coherence, Coherence::Host) {
                st.buffer = Some(committed.buffer.clone());
                st.coherence = Coherence::Both;
                kept.push(committed.buffer.clone());
            } else {
                continue;
            }
            drop(st);
            residency::register(copy);
        }
        let pool = &mut exec.state.pool;
        for (kind, buffer) in self.pooled.drain(..) {
            if !kept.contains(&buffer) {
                pool.give(kind, buffer);
            }
        }
        Ok(finished)
    }
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

    #[test]
    fn the_combine_shader_validates() {
        validate(include_str!("../shaders/combine.wgsl")).unwrap();
    }

    #[test]
    fn every_float_reduction_and_integer_sum_is_combined_on_the_device() {
        assert_eq!(combine_op(ReduceOp::Sum, Elem::F32), Some(0));
        assert_eq!(combine_op(ReduceOp::Min, Elem::F32), Some(3));
        assert_eq!(combine_op(ReduceOp::Sum, Elem::U32), Some(4));
        assert_eq!(combine_op(ReduceOp::Sum, Elem::Usize), None, "a usize sum may pass u32: the host adds in 64 bits");
    }
}
