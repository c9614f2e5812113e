//! The GPU op backend's fixed cost, and GPU against SIMD on this machine.
//!
//! ```text
//! ADAPTIVE_KERNEL_GPU=software cargo bench --bench gpu      # on a machine without a GPU (lavapipe)
//! cargo bench --bench gpu                                   # on a GPU
//! ```
//!
//! * `gpu_fixed_cost`: one `ops::gpu::add` of 1,024 elements against the
//!   floor for the same work on the same adapter — raw wgpu with the
//!   pipeline, buffers and bind group all created once, so an iteration is
//!   only two uploads, one dispatch, one copy, one submit, one map and the
//!   read — and against trueno's `GpuBackend::vec_add` (which builds its
//!   shader, pipeline and buffers on every call).
//! * `gpu_vs_simd_*`: `ops::gpu` against `ops::simd` for add, sum and
//!   matmul at a few sizes, plus `matrixmultiply::sgemm` as a SIMD GEMM
//!   reference point, for the router's thresholds.
//!
//! The interleaved comparisons printed on stderr (`interleaved ops::gpu::add /
//! raw floor, 1K: …`) are what `scripts/gpu-check` reports as the GPU's fixed
//! cost.
//!
//! Smoke run (CI: `scripts/bench-smoke`, on lavapipe): `cargo bench --bench gpu
//! -- --test` runs each criterion routine once and each interleaved comparison
//! for one pair, but the fixed cost's for 300 (`common/smoke.rs`).

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

#[path = "common/smoke.rs"]
mod smoke;

use std::hint::black_box;
use std::time::{Duration, Instant};

use adaptive_kernel::ops::{gpu, simd};
use adaptive_kernel_runtime::trueno::backends::gpu::wgpu;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The cheapest possible GPU add of `n` elements: everything but the data
/// movement and the dispatch itself is created once.
struct RawAdd {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    out: wgpu::Buffer,
    staging: wgpu::Buffer,
    n: usize,
}

const RAW_ADD: &str = r"
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&c)) {
        c[id.x] = a[id.x] + b[id.x];
    }
}
";

impl RawAdd {
    /// On the adapter `ops::gpu` chose (matched by name).
    fn new(n: usize, adapter_name: &str) -> Self {
        let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            flags: wgpu::InstanceFlags::empty(),
            ..Default::default()
        });
        let adapter = instance
            .enumerate_adapters(wgpu::Backends::PRIMARY)
            .into_iter()
            .find(|a| a.get_info().name == adapter_name)
            .expect("the adapter ops::gpu uses");
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("a device");
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(RAW_ADD.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bytes = (n * 4) as u64;
        let storage = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor { label: None, size: bytes, usage, mapped_at_creation: false })
        };
        use wgpu::BufferUsages as U;
        let (a, b) = (storage(U::STORAGE | U::COPY_DST), storage(U::STORAGE | U::COPY_DST));
        let out = storage(U::STORAGE | U::COPY_SRC);
        let staging = storage(U::MAP_READ | U::COPY_DST);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: a.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: b.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: out.as_entire_binding() },
            ],
        });
        RawAdd { device, queue, pipeline, bind_group, a, b, out, staging, n }
    }

    fn run(&self, a: &[f32], b: &[f32]) -> Vec<f32> {
        self.queue.write_buffer(&self.a, 0, bytemuck::cast_slice(a));
        self.queue.write_buffer(&self.b, 0, bytemuck::cast_slice(b));
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.dispatch_workgroups(self.n.div_ceil(256) as u32, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&self.out, 0, &self.staging, 0, (self.n * 4) as u64);
        let index = self.queue.submit([encoder.finish()]);
        let slice = self.staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        self.device.poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None }).expect("poll");
        let mut out = vec![0.0f32; self.n];
        bytemuck::cast_slice_mut::<f32, u8>(&mut out).copy_from_slice(&slice.get_mapped_range());
        self.staging.unmap();
        out
    }
}

/// Medians of `pairs` alternating calls of `a` and `b` (after a warm-up), so
/// both see the same machine load: on a shared machine criterion's groups,
/// run one after the other, can see different loads. Prints and returns
/// (median a, median b).
fn interleaved<A, B>(
    label: &str,
    pairs: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> (Duration, Duration) {
    for _ in 0..pairs / 10 + 1 {
        black_box(a());
        black_box(b());
    }
    let (mut ta, mut tb) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    for _ in 0..pairs {
        let t = Instant::now();
        black_box(a());
        ta.push(t.elapsed());
        let t = Instant::now();
        black_box(b());
        tb.push(t.elapsed());
    }
    ta.sort();
    tb.sort();
    let (ma, mb) = (ta[pairs / 2], tb[pairs / 2]);
    eprintln!(
        "interleaved {label}: {:?} vs {:?} (ratio {:.2}, {pairs} pairs; quartiles {:?}..{:?} vs {:?}..{:?})",
        ma,
        mb,
        ma.as_secs_f64() / mb.as_secs_f64(),
        ta[pairs / 4],
        ta[3 * pairs / 4],
        tb[pairs / 4],
        tb[3 * pairs / 4]
    );
    (ma, mb)
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 1000) as f32 / 100.0 - 5.0).collect()
}

fn require_gpu() -> String {
    assert!(
        gpu::is_available(),
        "benches/gpu.rs needs a GPU device ({}); on a machine without one run it with ADAPTIVE_KERNEL_GPU=software",
        gpu::health()
    );
    let adapter = gpu::adapter().expect("a ready device has an adapter");
    eprintln!("GPU adapter: {adapter}");
    adapter.name
}

fn fixed_cost(c: &mut Criterion) {
    let adapter = require_gpu();
    let n = 1024;
    let (a, b) = (data(n, 1), data(n, 2));
    let raw = RawAdd::new(n, &adapter);
    assert_eq!(raw.run(&a, &b), gpu::add(&a, &b), "the floor computes the same thing");
    // Kept to a few hundred pairs in a smoke run: `scripts/gpu-check` reports it.
    interleaved("ops::gpu::add / raw floor, 1K", smoke::pick(2000, 300), || gpu::add(&a, &b), || raw.run(&a, &b));

    let mut group = c.benchmark_group("gpu_fixed_cost");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ops_gpu_add_1k", |bench| bench.iter(|| gpu::add(black_box(&a), black_box(&b))));
    group.bench_function("raw_wgpu_floor_add_1k", |bench| bench.iter(|| raw.run(black_box(&a), black_box(&b))));
    group.bench_function("ops_simd_add_1k", |bench| bench.iter(|| simd::add(black_box(&a), black_box(&b))));
    let mut trueno = adaptive_kernel_runtime::trueno::backends::gpu::GpuBackend::new();
    match trueno.vec_add(&a, &b) {
        Ok(sum) if sum == gpu::add(&a, &b) => {
            interleaved(
                "trueno GpuBackend::vec_add / ops::gpu::add, 1K",
                smoke::pick(300, 1),
                || trueno.vec_add(&a, &b),
                || gpu::add(&a, &b),
            );
            group.sample_size(20).measurement_time(Duration::from_secs(4));
            group.bench_function("trueno_gpu_backend_add_1k", |bench| {
                bench.iter(|| trueno.vec_add(black_box(&a), black_box(&b)).unwrap())
            });
        }
        other => eprintln!("trueno GpuBackend::vec_add not measured: {other:?}"),
    }
    group.finish();
}

fn gpu_vs_simd(c: &mut Criterion) {
    let adapter = require_gpu();
    let mut group = c.benchmark_group("gpu_vs_simd_add");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for n in [1 << 10, 1 << 14, 1 << 18, 1 << 22] {
        let (a, b) = (data(n, 3), data(n, 4));
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("gpu", n), &n, |bench, _| bench.iter(|| gpu::add(&a, &b)));
        let raw = RawAdd::new(n, &adapter);
        let pairs = smoke::pick((2 << 20) / n.max(1 << 12) + 10, 1);
        interleaved(&format!("ops::gpu::add / raw floor, {n}"), pairs, || gpu::add(&a, &b), || raw.run(&a, &b));
        interleaved(&format!("ops::gpu::add / ops::simd::add, {n}"), pairs, || gpu::add(&a, &b), || simd::add(&a, &b));
        group.bench_with_input(BenchmarkId::new("raw_floor", n), &n, |bench, _| bench.iter(|| raw.run(&a, &b)));
        group.bench_with_input(BenchmarkId::new("simd", n), &n, |bench, _| bench.iter(|| simd::add(&a, &b)));
    }
    group.finish();

    let mut group = c.benchmark_group("gpu_vs_simd_sum");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for n in [1 << 10, 1 << 18, 1 << 22] {
        let a = data(n, 5);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("gpu", n), &n, |bench, _| bench.iter(|| gpu::sum(&a)));
        group.bench_with_input(BenchmarkId::new("simd", n), &n, |bench, _| bench.iter(|| simd::sum(&a)));
    }
    group.finish();

    let mut group = c.benchmark_group("gpu_vs_simd_matmul");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for n in [32, 64, 128, 256, 512] {
        let (a, b) = (data(n * n, 6), data(n * n, 7));
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        group.bench_with_input(BenchmarkId::new("gpu", n), &n, |bench, &n| bench.iter(|| gpu::matmul(&a, &b, n, n, n)));
        group.bench_with_input(BenchmarkId::new("simd", n), &n, |bench, &n| {
            bench.iter(|| simd::matmul(&a, &b, n, n, n))
        });
        group.bench_with_input(BenchmarkId::new("sgemm", n), &n, |bench, &n| {
            bench.iter(|| {
                let mut c = vec![0.0f32; n * n];
                // SAFETY: a, b and c are n×n row-major matrices (row stride n, column stride 1)
                // that live for the whole call, and c does not alias a or b.
                unsafe {
                    matrixmultiply::sgemm(
                        n,
                        n,
                        n,
                        1.0,
                        a.as_ptr(),
                        n as isize,
                        1,
                        b.as_ptr(),
                        n as isize,
                        1,
                        0.0,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    );
                }
                c
            })
        });
    }
    group.finish();
}

criterion_group!(benches, fixed_cost, gpu_vs_simd);
criterion_main!(benches);
