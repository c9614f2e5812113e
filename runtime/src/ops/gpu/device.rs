//! The one process-wide GPU device: choosing the adapter, creating the device
//! (in the background when asked to start early), keeping its health, and
//! running op calls on it.
//!
//! # Start-up
//! Creating the instance, adapter and device takes 50–150 ms on lavapipe,
//! more on some drivers; nothing on a caller's thread should wait for that
//! unless it asked to. [`start`] runs [`create`] on a background thread and
//! returns at once; [`is_ready`] never blocks and never starts anything;
//! [`wait_ready`] blocks up to a time limit. The blocking entry points
//! ([`is_available`], [`adapter`], any op call) wait for a start-up in
//! progress, or create the device on their own thread when none has begun, so
//! a direct op call still runs on the GPU when one exists. How the creation is
//! run once, waited for, and kept from racing process exit is `startup.rs`.
//! A panic inside wgpu during start-up is caught and reported as
//! `Unavailable`, so nobody waits for a device that will never come.
//!
//! # Adapter policy
//! `config::gpu_policy()` decides which adapters count: `Off` never touches
//! wgpu; `On` (the default) accepts hardware adapters only; `Software` also
//! accepts software rasterisers (lavapipe/llvmpipe report `DeviceType::Cpu`).
//! Among the accepted ones the best kind wins: discrete > integrated >
//! virtual > other > cpu; ties go to the first enumerated. Only Vulkan,
//! Metal, DX12 and browser WebGPU are enumerated (`Backends::PRIMARY`): the
//! GL backend's EGL adapter can abort the process in its destructor on some
//! Linux machines (trueno's PMAT-925), and compute on GL is rarely faster.
//!
//! # Failures
//! An op call runs inside wgpu error scopes (out of memory, validation,
//! internal); errors outside any scope go to an `on_uncaptured_error` handler
//! and a lost device to the device-lost callback, instead of wgpu's default
//! of panicking. Any of them, or a failed buffer map or poll, marks the GPU
//! [`Failed`](GpuHealth::Failed) for the rest of the process: the call that
//! saw it, and every later one, computes on the SIMD backend; a warning is
//! logged once (target `adaptive_kernel`). A device is never re-created: a
//! GPU that failed once is likely to fail again, and the router must be able
//! to trust `is_available`.
//!
//! # Concurrency
//! Calls are serialised on one lock. wgpu 27 keeps error scopes per device,
//! not per thread, so concurrent calls could catch each other's errors; and
//! the device executes one queue anyway. The lock also guards the buffer pool
//! and the pipeline cache. So a thread is inside the driver only while it
//! holds the lock (or while it creates the device).
//!
//! # Exit
//! A driver may tear its state down when the process exits (the destructors
//! of its libraries) while another thread is still inside it: NVIDIA's
//! Vulkan driver then crashes the process (SIGSEGV after correct work; the
//! class of wgpu issue 8365), for example under the cost model's GPU probes,
//! which run on a thread of their own. So once the device exists, an exit
//! hook ([`crate::platform::at_exit`], registered anew after each pipeline
//! is compiled, since the driver may load its compiler's libraries then)
//! runs before those destructors: it makes every later op call fall back to
//! SIMD ([`is_ready`] false), and waits up to [`EXIT_CALL_WAIT`] for the call
//! in flight to leave the driver, then holds the lock, so none enters again.
//! The probes' later calls run on SIMD, and their figures are discarded (the
//! GPU is no longer available when they finish). wgpu's objects are never dropped
//! (they live in statics): dropping a device at exit is what crashes.
//! Exiting while the device is being created is `startup.rs`'s concern.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use trueno::backends::gpu::wgpu;

use super::buffers::BufferPool;
use super::health::{AdapterSummary, GpuApi, GpuDeviceType, GpuHealth};
use super::instance;
use super::pipelines::PipelineCache;
use super::startup::Startup;
use crate::config::{self, GpuPolicy};

/// The device limits the kernels must respect, read once from the device.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Largest storage binding, in bytes.
    pub(super) max_binding: u64,
    /// Largest buffer, in bytes.
    pub(super) max_buffer: u64,
    /// Most workgroups along one dispatch dimension (capped at 65,535, which
    /// trueno's transpose shader assumes when it folds 2-D dispatches).
    pub(super) max_groups: u32,
    /// Alignment of uniform binding offsets, in bytes.
    pub(super) uniform_align: u64,
    /// Most storage buffers one shader stage may bind.
    pub(super) max_storage_buffers: u32,
}

/// The device and everything kept with it.
pub(super) struct Gpu {
    pub(super) summary: AdapterSummary,
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pub(super) limits: Limits,
    state: Mutex<ExecState>,
}

/// What op calls mutate; guarded by the device's lock.
pub(super) struct ExecState {
    pub(super) pool: BufferPool,
    pub(super) pipelines: PipelineCache,
}

/// What one op call sees: the device and, under its lock, the pool and cache.
pub(super) struct Exec<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) state: &'a mut ExecState,
}

/// Why an op call did not finish on the device.
#[derive(Debug)]
pub(super) enum GpuError {
    /// The input exceeds a device limit (a buffer or binding size). Not a
    /// failure of the device: this call runs on SIMD, the GPU stays healthy.
    TooLarge(String),
    /// The device failed (lost, out of memory, a failed map or poll).
    Device(String),
}

enum Init {
    Ready(Box<Gpu>),
    Unavailable { reason: String, adapter: Option<AdapterSummary> },
}

/// The outcome of start-up.
static INIT: Startup<Init> = Startup::new();
static FAILURE: OnceLock<String> = OnceLock::new();
/// What runs when a call fails, before the GPU is declared failed, while the device may
/// still answer: resident data's rescue (`residency.rs`, which sets it once a copy holds a
/// device buffer; this file imports nothing of it).
static BEFORE_FAILURE: OnceLock<fn(&mut Exec<'_>, &str)> = OnceLock::new();
/// Set by the exit hook: the process is exiting, no call may enter the driver.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// Test hook: nanoseconds every op call sleeps on the device's lock, as a call
/// inside the driver would hold it (`__delay_calls_for_tests`).
static CALL_DELAY_NS: AtomicU64 = AtomicU64::new(0);

/// The longest the exit hook waits for an op call in flight to leave the driver.
const EXIT_CALL_WAIT: Duration = Duration::from_secs(3);
/// The exit hook's name ([`crate::platform::at_exit`]).
const EXIT_HOOK: &str = "gpu";

const POLICY_OFF: &str = "ADAPTIVE_KERNEL_GPU=off (or `config::Settings::gpu(GpuPolicy::Off)`)";

/// The GPU backend's state; never blocks, never starts anything.
pub(super) fn health() -> GpuHealth {
    if config::gpu_policy() == GpuPolicy::Off {
        return GpuHealth::Unavailable { reason: POLICY_OFF.into() };
    }
    if let Some(reason) = FAILURE.get() {
        return GpuHealth::Failed { reason: reason.clone() };
    }
    match INIT.get() {
        None if INIT.has_begun() => GpuHealth::Starting,
        None => GpuHealth::Uninitialized,
        Some(Init::Ready(gpu)) => GpuHealth::Ready(gpu.summary.clone()),
        Some(Init::Unavailable { reason, .. }) => GpuHealth::Unavailable { reason: reason.clone() },
    }
}

/// Begins start-up on a background thread unless it has begun (or the policy
/// is `off`); returns at once.
pub(super) fn start() {
    if config::gpu_policy() != GpuPolicy::Off {
        INIT.start(create);
    }
}

/// Whether the device exists, has not failed, and the process is not exiting;
/// never blocks, never starts anything.
pub(super) fn is_ready() -> bool {
    matches!(INIT.get(), Some(Init::Ready(_))) && FAILURE.get().is_none() && !closing()
}

/// Whether the exit hook has run: every op call falls back from then on.
fn closing() -> bool {
    // Acquire: pairs with the hook's SeqCst store, so a call that sees the flag
    // clear was ordered before the hook's wait for the lock began.
    CLOSING.load(Ordering::Acquire)
}

/// The exit hook (see the module docs): no call enters the driver from now on;
/// waits up to [`EXIT_CALL_WAIT`] for the one in flight, then keeps the lock.
fn close_for_exit() {
    // SeqCst: the flag must be visible to every thread before this one starts
    // waiting for the lock, which a thread that saw it clear may still take.
    CLOSING.store(true, Ordering::SeqCst);
    if let Some(Init::Ready(gpu)) = INIT.get() {
        // Never released: a thread waiting for it now waits until the process is gone.
        if !crate::platform::hold_for_exit(&gpu.state, EXIT_CALL_WAIT) {
            tracing::debug!(target: "adaptive_kernel", "exiting while a GPU call is still in flight");
        }
    }
}

/// Registers the exit hook, or registers it again so that it runs before the
/// destructors of libraries the driver loaded since.
fn keep_exit_hook_last() {
    crate::platform::at_exit(EXIT_HOOK, close_for_exit);
}

/// Whether start-up is loading the driver now: begun at most `max` ago and not finished.
pub(super) fn starting_within(max: Duration) -> bool {
    INIT.running_within(max)
}

/// Starts start-up if needed and waits up to `timeout` for it to finish;
/// then [`is_ready`].
pub(super) fn wait_ready(timeout: Duration) -> bool {
    start();
    INIT.wait(timeout);
    is_ready()
}

/// Sets how long start-up sleeps before creating the device; see
/// `__delay_start_for_tests`.
pub(super) fn delay_start_for_tests(delay: Duration) {
    INIT.delay_for_tests(delay);
}

/// Sets how long every op call holds the device's lock before it runs; see
/// `__delay_calls_for_tests`.
pub(super) fn delay_calls_for_tests(delay: Duration) {
    CALL_DELAY_NS.store(u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// What the test hook does on the lock: sleeps, then says so when the process began
/// exiting meanwhile (the exit hook waited for this call).
fn delay_call_for_tests() {
    let delay = CALL_DELAY_NS.load(Ordering::Relaxed);
    if delay > 0 {
        std::thread::sleep(Duration::from_nanos(delay));
        if closing() {
            eprintln!("adaptive-kernel test hook: a GPU call in flight at exit finished");
        }
    }
}

/// The outcome of start-up: created on this thread if nothing has begun,
/// waited for if it is running elsewhere.
fn init() -> &'static Init {
    INIT.get_or_run(create)
}

/// The device, when it exists, has not failed and the process is not exiting;
/// waits for start-up (or runs it).
fn usable() -> Option<&'static Gpu> {
    if config::gpu_policy() == GpuPolicy::Off || FAILURE.get().is_some() || closing() {
        return None;
    }
    match init() {
        Init::Ready(gpu) if FAILURE.get().is_none() => Some(gpu),
        _ => None,
    }
}

/// Whether op calls run on a device; waits for start-up (or runs it).
pub(super) fn is_available() -> bool {
    usable().is_some()
}

/// The adapter chosen under the policy (even if its device later failed or
/// could not be created); waits for start-up (or runs it).
pub(super) fn adapter() -> Option<AdapterSummary> {
    if config::gpu_policy() == GpuPolicy::Off {
        return None;
    }
    match init() {
        Init::Ready(gpu) => Some(gpu.summary.clone()),
        Init::Unavailable { adapter, .. } => adapter.clone(),
    }
}

/// Marks the GPU failed (first reason wins) and warns once.
pub(super) fn fail(reason: String) {
    if FAILURE.set(reason).is_ok() {
        let reason = FAILURE.get().map_or("", String::as_str);
        tracing::warn!(target: "adaptive_kernel", reason, "GPU backend failed; GPU ops run on SIMD from now on");
        // Also on stderr, like other once-per-process reports: it must be seen without a subscriber.
        config::say(format_args!("GPU backend failed ({reason}); GPU ops run on SIMD from now on"));
    }
}

/// Destroys the device, as a driver reset would; see `__destroy_device_for_tests`.
pub(super) fn destroy_for_tests() {
    if let Some(Init::Ready(gpu)) = INIT.get() {
        let _call = gpu.state.lock().unwrap_or_else(PoisonError::into_inner);
        gpu.device.destroy();
    }
}

/// Sets what runs before the GPU is declared failed ([`BEFORE_FAILURE`]); the first one set stays.
pub(super) fn before_failure(hook: fn(&mut Exec<'_>, &str)) {
    let _ = BEFORE_FAILURE.set(hook);
}

/// Runs one op call on the device: `None` when there is no usable device or
/// the call failed (the failure is recorded), so the caller computes on SIMD.
pub(super) fn run<T>(op: &'static str, call: impl FnOnce(&mut Exec<'_>) -> Result<T, GpuError>) -> Option<T> {
    let gpu = usable()?;
    let mut state = gpu.state.lock().unwrap_or_else(PoisonError::into_inner);
    if FAILURE.get().is_some() || closing() {
        return None; // it failed, or the process began exiting, while this call waited for the lock
    }
    delay_call_for_tests();
    let compiled = state.pipelines.compiled();
    let scopes = ErrorScopes::push(&gpu.device);
    let result = call(&mut Exec { gpu, state: &mut state });
    let scoped = scopes.pop();
    if state.pipelines.compiled() != compiled {
        keep_exit_hook_last();
    }
    let failed = |exec: &mut Exec<'_>, reason: String| {
        // Data only the device holds is read back first, while the device may still answer
        // (in scopes of its own: an error there means it cannot, which `rescue` records).
        if let Some(rescue) = BEFORE_FAILURE.get() {
            let scopes = ErrorScopes::push(&gpu.device);
            rescue(exec, &reason);
            drop(scopes.pop());
        }
        fail(reason);
    };
    match (result, scoped) {
        (Ok(value), None) => Some(value),
        (_, Some(err)) => {
            failed(&mut Exec { gpu, state: &mut state }, format!("{op}: {err}"));
            None
        }
        (Err(GpuError::Device(reason)), None) => {
            failed(&mut Exec { gpu, state: &mut state }, format!("{op}: {reason}"));
            None
        }
        (Err(GpuError::TooLarge(reason)), None) => {
            static ONCE: Once = Once::new();
            ONCE.call_once(|| {
                tracing::warn!(target: "adaptive_kernel", op, reason, "input exceeds a GPU device limit; this call runs on SIMD");
            });
            None
        }
    }
}

/// The three error scopes an op call runs in, popped in reverse on every path
/// (also when the call unwinds, so the device's scope stack stays balanced).
struct ErrorScopes<'a> {
    device: &'a wgpu::Device,
    open: bool,
}

const FILTERS: [wgpu::ErrorFilter; 3] =
    [wgpu::ErrorFilter::OutOfMemory, wgpu::ErrorFilter::Validation, wgpu::ErrorFilter::Internal];

impl<'a> ErrorScopes<'a> {
    fn push(device: &'a wgpu::Device) -> Self {
        for filter in FILTERS {
            device.push_error_scope(filter);
        }
        ErrorScopes { device, open: true }
    }

    /// The first error caught, innermost scope first.
    fn pop(mut self) -> Option<wgpu::Error> {
        self.open = false;
        let mut first = None;
        for _ in FILTERS {
            let err = pollster::block_on(self.device.pop_error_scope());
            first = first.or(err);
        }
        first
    }
}

impl Drop for ErrorScopes<'_> {
    fn drop(&mut self) {
        if self.open {
            for _ in FILTERS {
                drop(pollster::block_on(self.device.pop_error_scope()));
            }
        }
    }
}

/// The index of the adapter to use among `found`, or why there is none.
fn choose(found: &[AdapterSummary], policy: GpuPolicy) -> Result<usize, String> {
    let allowed = |a: &AdapterSummary| policy == GpuPolicy::Software || !a.device_type.is_software();
    let best = found.iter().enumerate().filter(|(_, a)| allowed(a)).min_by_key(|(i, a)| (a.device_type.rank(), *i));
    match best {
        Some((i, _)) => Ok(i),
        None if found.is_empty() => Err("no Vulkan, Metal or DX12 adapter with compute shaders found".into()),
        None => {
            let names: Vec<String> = found.iter().map(ToString::to_string).collect();
            Err(format!(
                "only software adapters found ({}); set ADAPTIVE_KERNEL_GPU=software to use them",
                names.join("; ")
            ))
        }
    }
}

fn summarize(info: &wgpu::AdapterInfo) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        backend: match info.backend {
            wgpu::Backend::Vulkan => GpuApi::Vulkan,
            wgpu::Backend::Metal => GpuApi::Metal,
            wgpu::Backend::Dx12 => GpuApi::Dx12,
            wgpu::Backend::Gl => GpuApi::Gl,
            wgpu::Backend::BrowserWebGpu => GpuApi::BrowserWebGpu,
            wgpu::Backend::Noop => GpuApi::Other,
        },
        device_type: match info.device_type {
            wgpu::DeviceType::DiscreteGpu => GpuDeviceType::DiscreteGpu,
            wgpu::DeviceType::IntegratedGpu => GpuDeviceType::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu => GpuDeviceType::VirtualGpu,
            wgpu::DeviceType::Cpu => GpuDeviceType::Cpu,
            wgpu::DeviceType::Other => GpuDeviceType::Other,
        },
        vendor: info.vendor,
        device: info.device,
    }
}

/// Finds the adapter and creates the device; called once per process. A
/// panic inside wgpu becomes `Unavailable`, so nobody waits for a device that
/// will never come.
fn create() -> Init {
    let began = Instant::now();
    let init = catch_unwind(AssertUnwindSafe(create_inner)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string payload".into());
        Init::Unavailable { reason: format!("GPU start-up panicked: {what}"), adapter: None }
    });
    let elapsed_ms = began.elapsed().as_secs_f64() * 1e3;
    match &init {
        Init::Ready(gpu) => {
            keep_exit_hook_last();
            tracing::debug!(target: "adaptive_kernel", adapter = %gpu.summary, elapsed_ms, "GPU device ready");
        }
        Init::Unavailable { reason, .. } => {
            tracing::info!(target: "adaptive_kernel", reason, "no usable GPU; GPU ops run on SIMD");
        }
    }
    init
}

fn create_inner() -> Init {
    let policy = config::gpu_policy();
    let instance = instance::create();
    let mut adapters: Vec<(wgpu::Adapter, AdapterSummary)> = instance
        .enumerate_adapters(instance::BACKENDS)
        .into_iter()
        .filter(|_| !super::faults::no_adapter())
        .filter(|a| a.get_downlevel_capabilities().flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS))
        .map(|a| {
            let s = summarize(&a.get_info());
            (a, s)
        })
        .collect();
    let summaries: Vec<AdapterSummary> = adapters.iter().map(|(_, s)| s.clone()).collect();
    let index = match choose(&summaries, policy) {
        Ok(i) => i,
        Err(reason) => return Init::Unavailable { reason, adapter: None },
    };
    let (adapter, summary) = adapters.swap_remove(index);
    // Ask for everything the adapter offers: the largest buffers and bindings
    // let more inputs run unchunked.
    let required_limits = adapter.limits();
    let request = adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("adaptive-kernel"),
        required_features: wgpu::Features::empty(),
        required_limits: required_limits.clone(),
        ..Default::default()
    });
    let (device, queue) = match pollster::block_on(request) {
        Ok(pair) => pair,
        Err(e) => {
            return Init::Unavailable {
                reason: format!("creating a device on {summary} failed: {e}"),
                adapter: Some(summary),
            }
        }
    };
    device.on_uncaptured_error(Arc::new(|err: wgpu::Error| fail(format!("uncaptured wgpu error: {err}"))));
    device.set_device_lost_callback(|reason, message| fail(format!("device lost ({reason:?}): {message}")));
    let l = device.limits();
    let limits = Limits {
        max_binding: u64::from(l.max_storage_buffer_binding_size),
        max_buffer: l.max_buffer_size,
        max_groups: l.max_compute_workgroups_per_dimension.min(65_535),
        uniform_align: u64::from(l.min_uniform_buffer_offset_alignment),
        max_storage_buffers: l.max_storage_buffers_per_shader_stage,
    };
    let state = Mutex::new(ExecState { pool: BufferPool::new(limits.max_buffer), pipelines: PipelineCache::new() });
    Init::Ready(Box::new(Gpu { summary, device, queue, limits, state }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(name: &str, device_type: GpuDeviceType) -> AdapterSummary {
        AdapterSummary {
            name: name.into(),
            driver: String::new(),
            driver_info: String::new(),
            backend: GpuApi::Vulkan,
            device_type,
            vendor: 0,
            device: 0,
        }
    }

    #[test]
    fn prefers_discrete_then_integrated_then_virtual() {
        let found = [
            adapter("llvmpipe", GpuDeviceType::Cpu),
            adapter("virt", GpuDeviceType::VirtualGpu),
            adapter("igpu", GpuDeviceType::IntegratedGpu),
            adapter("dgpu", GpuDeviceType::DiscreteGpu),
            adapter("dgpu2", GpuDeviceType::DiscreteGpu),
        ];
        assert_eq!(choose(&found, GpuPolicy::On), Ok(3));
        assert_eq!(choose(&found, GpuPolicy::Software), Ok(3));
        assert_eq!(choose(&found[..3], GpuPolicy::On), Ok(2));
        assert_eq!(choose(&found[..2], GpuPolicy::On), Ok(1));
    }

    #[test]
    fn software_adapters_need_the_software_policy() {
        let found = [adapter("llvmpipe (LLVM 15.0.6, 256 bits)", GpuDeviceType::Cpu)];
        assert_eq!(choose(&found, GpuPolicy::Software), Ok(0));
        let err = choose(&found, GpuPolicy::On).unwrap_err();
        assert!(err.contains("llvmpipe") && err.contains("ADAPTIVE_KERNEL_GPU=software"), "{err}");
        let err = choose(&[], GpuPolicy::Software).unwrap_err();
        assert!(err.contains("no Vulkan, Metal or DX12 adapter"), "{err}");
    }
}
