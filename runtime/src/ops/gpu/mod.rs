//! The GPU backend of the op set: compute shaders over wgpu (re-exported by
//! trueno), on one process-wide device.
//!
//! Every op has exactly the signature of its [`scalar`](super::scalar)
//! reference, runs the same shape checks first (so a mismatch panics with
//! the same message) and follows the same conventions for empty inputs and
//! NaN (see the [`ops`](super) docs). An empty input returns its convention
//! value without touching the device. Each op that produces an array has an
//! `_into` form (`add_into(a, b, out)`) that reads the result back from the
//! staging buffer straight into the caller's `out`; the returning form is
//! that into a fresh zeroed vector.
//!
//! # Start-up
//! Creating the device (instance, adapter, device) takes 50–150 ms on
//! lavapipe. [`start`] does it on a background thread and returns at once;
//! [`is_ready`] asks, without blocking and without starting anything, whether
//! it is done; [`wait_ready`] waits for it with a time limit. The blocking
//! entry points, [`is_available`], [`adapter`] and every op, wait for a
//! start-up in progress, or create the device on the calling thread if none
//! has begun, so a direct op call still runs on the GPU when one exists. On
//! Linux the Vulkan instance enables no window-system extension
//! (`instance.rs`), so start-up stays silent on machines without a display
//! session.
//!
//! Nothing of the GPU starts unless something asks for it: the driver is not
//! loaded, no device is created and no GPU thread runs in a program that
//! never calls these functions or an op of this module, and routes only
//! kernels without a GPU variant. The router starts the GPU (with [`start`])
//! the first time it routes a call of a kernel that has a GPU variant, and
//! sends that kernel's calls to the GPU once [`is_ready`]; the cost model's
//! GPU figures are measured (on a thread of their own, `ak-gpu-probes`) only
//! then. The threads the GPU backend starts have `gpu` in their names.
//!
//! # Exit
//! No thread of the runtime is inside the GPU driver when the process exits
//! through `exit` or by returning from `main`: once the device exists, an
//! exit hook makes every later op call compute on SIMD and waits (at most 3
//! s) for the call in flight; the device is never dropped. Without it,
//! NVIDIA's driver crashed short programs at exit (BENCHMARKS.md, "GPU on
//! an H100"). Details in `device.rs`. On systems without `atexit` (not Unix)
//! there is no hook.
//!
//! # How a call runs
//! Each kernel's pipeline is compiled the first time it runs and kept;
//! buffers come from a bounded pool; an op call is one submission and one
//! readback. Reductions (`sum`, `dot`, `max`, `min`, `mean`, `norm_l2`, and
//! the two inside `softmax`) run entirely on the device, workgroup trees then
//! passes over the per-workgroup partials, and read back one value.
//! Element-wise ops and reductions handle any input that fits one device
//! buffer (lavapipe: 2 GiB) by binding it chunk by chunk and folding large
//! dispatches into 2-D grids; matrix ops need each matrix to fit one storage
//! binding (at least 128 MiB, 32M elements) and otherwise run on SIMD.
//!
//! # When there is no GPU
//! With no usable adapter under `ADAPTIVE_KERNEL_GPU` (hardware only by
//! default; `software` admits lavapipe/llvmpipe), with the policy `off`, when
//! the crate is built without its `gpu` feature, or after the device failed
//! (lost, out of memory, a failed buffer map), an op computes its result with
//! [`simd`] instead. Results are never wrong because the GPU is
//! missing or failed; [`health`] says which case holds, and a failure is
//! logged once (`tracing` warning, target `adaptive_kernel`).
//!
//! # WebAssembly
//! There is no GPU on WebAssembly: the ops compute with [`simd`], [`is_available`]
//! is false and the router never picks the GPU. In a browser the GPU is WebGPU,
//! and WebGPU is asynchronous: requesting an adapter and reading a result back
//! (`mapAsync`) return promises that only the page's event loop resolves, and
//! a synchronous kernel call cannot return to that loop, so it cannot wait for
//! them. The `gpu` feature does not build for WebAssembly (trueno's wgpu
//! backend does not compile there): depend on adaptive-kernel with
//! `default-features = false`.
//!
//! # Precision
//! What each op promises against its [`scalar`](super::scalar) reference
//! (`s`), with ε = `f32::EPSILON`. Everywhere NaN matches NaN and an infinity
//! the same infinity, except where a fused multiply-add explains the
//! difference (last column); WGSL lets a GPU flush subnormal inputs and
//! results to zero (lavapipe does not), which moves a result by less than
//! `f32::MIN_POSITIVE` and is allowed everywhere. A shader's `a*b + c` may
//! be fused into one rounding by the device's compiler (NVIDIA's does;
//! lavapipe never does): the contract, and the special values it changes
//! where `a·b` overflows when rounded on its own, are [`crate::fusion`]'s.
//!
//! | op | bound | multiply-adds the device may fuse |
//! | --- | --- | --- |
//! | `add`, `sub`, `mul`, `scale`, `relu`, `max`, `min`, `transpose` | exact | none |
//! | `div` | WGSL's 2.5 ULP (exact on lavapipe); divisors above 2¹²⁶, where WGSL promises nothing, are scaled first | none |
//! | `axpy` | one of the two evaluations of `y + α·x` ([`fusion::agrees`](crate::fusion::agrees)) | `y + α·x`: NaN or `±∞` where `α·x` overflows alone ([`fusion::evaluations`](crate::fusion::evaluations)) |
//! | `exp`, `sigmoid`, `tanh` | 8 ULP (≤ 2.8 measured on lavapipe; range-reduced formulas good over all of f32, where WGSL's own `exp` promises only 3 + 2·\|x\| ULP, about 160 ULP off at x = 40) | the range reduction and the polynomial: within the bound, never a change of class |
//! | `gelu` | 8 ULP + 4ε·\|x\| (`1 + tanh(u)` cancels for x < 0, in both) | `x + 0.044715·x³` and the final product: within the bound (`x` cannot bring a cube that overflowed back) |
//! | `sum`, `mean` | (n + 8)·ε·Σ\|xᵢ\| (summed blockwise, not left to right) | none |
//! | `dot`, `matvec`, `matmul`, `conv2d` | (n + 8)·ε·Σ\|aᵢ·bᵢ\| per result element, n its terms (`matvec`, `dot` blockwise; `matmul`, `conv2d` in the scalar order) | every `acc + a·b`: where a product overflows alone, a class difference as [`fusion::results_agree`](crate::fusion::results_agree) allows |
//! | `norm_l2` | (n + 8)·ε·s (half the relative error of the sum of squares, plus the root) | `acc + x·x`, as `dot` |
//! | `softmax` | (2n + 32)·ε·s (two sums of positive terms, `exp`, one division) | inside `exp` only |
//!
//! NaN propagates through `max`/`min`: WGSL's built-ins may drop it
//! (lavapipe's do), so the shaders test the bits. `tests/ops_gpu.rs` checks
//! every row on the device the tests run on.
//!
//! # Plain loops
//! The GPU variant `#[adaptive_kernel]` generates from a body's plain loops runs
//! each loop through [`loops`] (not a public API: generated code's), on this
//! same device, pipeline cache and buffer pool. Unlike the ops above, such a
//! loop never gives the device's NaN or infinity: a call whose float inputs
//! hold one, or whose shader computes one or divides by zero, runs on the
//! host ([`crate::fusion`], "Where a class can change").
//!
//! # Traffic
//! [`traffic`] counts the bytes every op call, generated loop and resident
//! handle moves each way and the submissions they make (`traffic.rs`); a routed
//! call's share is what its kernel's table shows per size bucket.
//!
//! Files: `device.rs` (start-up, adapter, device, health, error scopes),
//! `startup.rs` (creating it in the background, safely with respect to
//! exit), `instance.rs` (the compute-only Vulkan instance), `pipelines.rs`
//! (kernels and their cache), `buffers.rs` (pool), `call.rs` (one submission),
//! `kernels.rs` (how each op is laid out), `faults.rs` (faults tests inject:
//! no adapter, a lost device, a failed allocation), `loops/` (generated
//! loops), `shaders/*.wgsl`.

use super::out::producing;
use super::{check, simd};

mod faults;
mod health;
pub(crate) mod residency;
mod traffic;
#[doc(hidden)]
pub use faults::GpuFault;
pub use health::{AdapterSummary, GpuApi, GpuDeviceType, GpuHealth};
pub use traffic::{thread_traffic, traffic, Traffic};

#[cfg(feature = "gpu")]
mod buffers;
#[cfg(feature = "gpu")]
mod call;
#[cfg(feature = "gpu")]
mod device;
#[cfg(feature = "gpu")]
mod instance;
#[cfg(feature = "gpu")]
mod kernels;
#[doc(hidden)]
pub mod loops;
#[cfg(feature = "gpu")]
mod pipelines;
#[cfg(feature = "gpu")]
mod startup;

#[cfg(feature = "gpu")]
use call::Post;
#[cfg(feature = "gpu")]
use pipelines::EntryPoint;

/// Runs `$gpu` on the device (with `$exec: &mut device::Exec`), or `$fallback`
/// when there is no usable device or the call failed. Without the `gpu`
/// feature only `$fallback` is compiled.
macro_rules! on_device {
    ($op:expr, |$exec:ident| $gpu:expr, $fallback:expr) => {{
        #[cfg(feature = "gpu")]
        let result = device::run($op, |$exec| $gpu);
        #[cfg(not(feature = "gpu"))]
        let result = None;
        match result {
            Some(value) => value,
            None => $fallback,
        }
    }};
}

/// Begins creating the GPU device on a background thread, unless start-up
/// has begun already; returns at once.
///
/// Call it early (at program start, or when a kernel is first registered) so
/// the device is ready by the time work reaches it. Does nothing with
/// `ADAPTIVE_KERNEL_GPU=off` or without the `gpu` feature. If no thread can be
/// spawned, the device is created on the calling thread instead.
pub fn start() {
    #[cfg(feature = "gpu")]
    device::start();
}

/// Whether GPU ops run on a device right now: start-up has finished with a
/// usable adapter, the device has not failed, and the process is not exiting.
/// Never blocks and never starts anything: `false` until something started the
/// GPU ([`start`], [`wait_ready`], [`is_available`], an op call, or the router
/// for a kernel with a GPU variant) and it is ready.
///
/// This is the check for code that must not stall (the router); code that
/// wants to know the final answer calls [`is_available`] or [`wait_ready`].
pub fn is_ready() -> bool {
    #[cfg(feature = "gpu")]
    return device::is_ready();
    #[cfg(not(feature = "gpu"))]
    return false;
}

/// How long after start-up began [`starting`] may still say true: a driver
/// that takes longer is no longer waited on.
#[cfg(feature = "gpu")]
const STARTING_AT_MOST: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether GPU start-up is running now (loading the driver, creating the
/// device), for at most [`STARTING_AT_MOST`] so far. Never blocks, starts
/// nothing; false without the `gpu` feature.
///
/// A thread started while another thread loads a shared library waits for the
/// load to finish: glibc's loader lock is taken when a new thread registers its
/// thread-local destructors. Mesa's lavapipe loads LLVM: in the fresh process of
/// `benches/routing_quality.rs` a Parallel variant that starts a thread per call
/// stalled its first calls by 7–90 ms (BENCHMARKS.md, "Evening run"). So the
/// router does not explore variants that may start threads (Parallel) meanwhile.
pub(crate) fn starting() -> bool {
    #[cfg(feature = "gpu")]
    return device::starting_within(STARTING_AT_MOST);
    #[cfg(not(feature = "gpu"))]
    return false;
}

/// Begins start-up if needed and blocks until it finishes or `timeout`
/// passes, whichever is first; then returns [`is_ready`]. For programs and
/// tests that want the GPU in play from their first call.
pub fn wait_ready(timeout: std::time::Duration) -> bool {
    #[cfg(feature = "gpu")]
    return device::wait_ready(timeout);
    #[cfg(not(feature = "gpu"))]
    {
        let _ = timeout;
        false
    }
}

/// Whether GPU ops run on a device: a usable adapter exists under
/// `ADAPTIVE_KERNEL_GPU` and the device has not failed.
///
/// Blocks until start-up has finished: waits for one in progress, or creates
/// the device on this thread when none has begun (50–150 ms on lavapipe).
/// Code that must not stall uses [`is_ready`]. Always false with the policy
/// `off` (wgpu is not touched) and without the `gpu` feature.
pub fn is_available() -> bool {
    #[cfg(feature = "gpu")]
    return device::is_available();
    #[cfg(not(feature = "gpu"))]
    return false;
}

/// The GPU backend's state: [`GpuHealth::Uninitialized`] until start-up
/// begins, [`Starting`](GpuHealth::Starting) while it runs, then `Ready`,
/// `Unavailable` (with the reason) or, after a failure, `Failed`. Never
/// blocks and never starts anything.
pub fn health() -> GpuHealth {
    #[cfg(feature = "gpu")]
    return device::health();
    #[cfg(not(feature = "gpu"))]
    return GpuHealth::Unavailable { reason: "built without the `gpu` feature".into() };
}

/// The adapter chosen under `ADAPTIVE_KERNEL_GPU`, for hardware fingerprints:
/// `None` when none qualifies, with the policy `off`, or without the `gpu`
/// feature. Still `Some` after the device failed (the hardware is the same).
/// Blocks until start-up has finished, like [`is_available`].
pub fn adapter() -> Option<AdapterSummary> {
    #[cfg(feature = "gpu")]
    return device::adapter();
    #[cfg(not(feature = "gpu"))]
    return None;
}

/// Makes start-up sleep `delay` before it creates the device, so tests can
/// observe [`GpuHealth::Starting`] and a caller that does not wait. Not part
/// of the API; affects only a start-up that has not begun, so call it before
/// [`start`] or anything else that touches the GPU.
#[doc(hidden)]
pub fn __delay_start_for_tests(delay: std::time::Duration) {
    #[cfg(feature = "gpu")]
    device::delay_start_for_tests(delay);
    #[cfg(not(feature = "gpu"))]
    let _ = delay;
}

/// Makes every op call hold the device's lock for `delay` before it runs, as a
/// call inside a slow driver would, and say on stderr when it finishes after the
/// process began exiting; so tests can check that exit waits for it. Not part of
/// the API.
#[doc(hidden)]
pub fn __delay_calls_for_tests(delay: std::time::Duration) {
    #[cfg(feature = "gpu")]
    device::delay_calls_for_tests(delay);
    #[cfg(not(feature = "gpu"))]
    let _ = delay;
}

/// Destroys the GPU device as a driver reset would, so tests can exercise the
/// failure path (SIMD fallback, [`GpuHealth::Failed`]). Not part of the API:
/// the process has no GPU afterwards.
#[doc(hidden)]
pub fn __destroy_device_for_tests() {
    #[cfg(feature = "gpu")]
    device::destroy_for_tests();
}

/// Injects a GPU fault, so tests can check that every call still returns the
/// right result, the router stops choosing the GPU and the failure is reported
/// once. Not part of the API: the process has no GPU afterwards.
#[doc(hidden)]
pub fn __inject_fault_for_tests(fault: GpuFault) {
    faults::arm(fault);
    if fault == GpuFault::DeviceLost {
        __destroy_device_for_tests();
    }
}

/// Defines a binary element-wise op's two forms on the device kernel `$kernel`.
macro_rules! binary {
    ($(#[$m:meta])* $name:ident / $into:ident, $kernel:ident) => {
        producing! {
            $(#[$m])*
            ///
            /// # Panics
            /// If `a` and `b` differ in length.
            pub fn $name / $into(a: &[f32], b: &[f32])
            check: shape = check::binary(stringify!($name), a.len(), b.len()),
            overwrite: |out| {
                if !a.is_empty() {
                    on_device!(
                        stringify!($name),
                        |exec| kernels::elementwise(exec, EntryPoint::$kernel, &[a, b], 0.0, out),
                        simd::$into(a, b, out)
                    )
                }
            }
        }
    };
}

/// Defines a unary element-wise op's two forms on the device kernel `$kernel`
/// (`alpha`: its parameter, for `scale`).
macro_rules! unary {
    ($(#[$m:meta])* $name:ident / $into:ident ($($s:ident: f32)?), $kernel:ident, $alpha:expr, $fallback:expr) => {
        producing! {
            $(#[$m])*
            pub fn $name / $into(a: &[f32] $(, $s: f32)?)
            check: shape = check::unary(stringify!($name), a.len()),
            overwrite: |out| {
                if !a.is_empty() {
                    on_device!(
                        stringify!($name),
                        |exec| kernels::elementwise(exec, EntryPoint::$kernel, &[a], $alpha, out),
                        $fallback(a $(, $s)?, out)
                    )
                }
            }
        }
    };
}

binary!(
    /// `a[i] + b[i]`.
    add / add_into, Add);
binary!(
    /// `a[i] - b[i]`.
    sub / sub_into, Sub);
binary!(
    /// `a[i] * b[i]`.
    mul / mul_into, Mul);
binary!(
    /// `a[i] / b[i]` (IEEE: `x / 0` is ±∞ or NaN).
    div / div_into, Div);
unary!(
    /// `a[i] * s`.
    scale / scale_into(s: f32), Scale, s, simd::scale_into);
unary!(
    /// `max(a[i], 0)`; NaN stays NaN.
    relu / relu_into(), Relu, 0.0, simd::relu_into);
unary!(
    /// `1 / (1 + e^(−a[i]))`.
    sigmoid / sigmoid_into(), Sigmoid, 0.0, simd::sigmoid_into);
unary!(
    /// `tanh(a[i])`.
    tanh / tanh_into(), Tanh, 0.0, simd::tanh_into);
unary!(
    /// GELU, tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    gelu / gelu_into(), Gelu, 0.0, simd::gelu_into);
unary!(
    /// `e^a[i]`.
    exp / exp_into(), Exp, 0.0, simd::exp_into);

/// `y[i] += alpha * x[i]`, in place. `y` is written only once the device's
/// result is back, so a failed call leaves it intact for the SIMD fallback.
///
/// # Panics
/// If `x` and `y` differ in length.
#[track_caller]
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    check::same_len("axpy", x.len(), y.len());
    if x.is_empty() {
        return;
    }
    on_device!(
        "axpy",
        |exec| {
            let mut out = vec![0.0; y.len()];
            kernels::elementwise(exec, EntryPoint::Axpy, &[x, y], alpha, &mut out).map(|()| y.copy_from_slice(&out))
        },
        simd::axpy(alpha, x, y)
    )
}

/// The sum of `a` (0 when empty).
pub fn sum(a: &[f32]) -> f32 {
    if a.is_empty() {
        return 0.0;
    }
    on_device!("sum", |exec| kernels::reduction(exec, EntryPoint::Sum, &[a], Post::None, 0.0), simd::sum(a))
}

/// `Σ a[i]·b[i]` (0 when empty).
///
/// # Panics
/// If `a` and `b` differ in length.
#[track_caller]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    check::same_len("dot", a.len(), b.len());
    if a.is_empty() {
        return 0.0;
    }
    on_device!("dot", |exec| kernels::reduction(exec, EntryPoint::Dot, &[a, b], Post::None, 0.0), simd::dot(a, b))
}

/// The largest element: −∞ when empty, NaN when any element is NaN.
pub fn max(a: &[f32]) -> f32 {
    if a.is_empty() {
        return f32::NEG_INFINITY;
    }
    on_device!("max", |exec| kernels::reduction(exec, EntryPoint::Max, &[a], Post::None, 0.0), simd::max(a))
}

/// The smallest element: +∞ when empty, NaN when any element is NaN.
pub fn min(a: &[f32]) -> f32 {
    if a.is_empty() {
        return f32::INFINITY;
    }
    on_device!("min", |exec| kernels::reduction(exec, EntryPoint::Min, &[a], Post::None, 0.0), simd::min(a))
}

/// The arithmetic mean: NaN when empty. The division by `a.len() as f32`
/// happens on the device, in the last reduction pass.
pub fn mean(a: &[f32]) -> f32 {
    if a.is_empty() {
        return f32::NAN;
    }
    on_device!(
        "mean",
        |exec| kernels::reduction(exec, EntryPoint::Sum, &[a], Post::Divide, a.len() as f32),
        simd::mean(a)
    )
}

/// The Euclidean norm `√(Σ a[i]²)` (0 when empty).
pub fn norm_l2(a: &[f32]) -> f32 {
    if a.is_empty() {
        return 0.0;
    }
    on_device!("norm_l2", |exec| kernels::reduction(exec, EntryPoint::SumSq, &[a], Post::Sqrt, 0.0), simd::norm_l2(a))
}

producing! {
    /// `e^(a[i] − max) / Σ e^(a[j] − max)`, stable for large inputs; empty in, empty out.
    pub fn softmax / softmax_into(a: &[f32])
    check: shape = check::unary("softmax", a.len()),
    overwrite: |out| {
        if !a.is_empty() {
            on_device!("softmax", |exec| kernels::softmax(exec, a, out), simd::softmax_into(a, out))
        }
    }
}

producing! {
    /// C = A·B for row-major A (m×k) and B (k×n); C is m×n. With `k == 0`, C is
    /// all zeros and the device is not used.
    ///
    /// # Panics
    /// If `a.len() != m·k`, `b.len() != k·n`, or a shape overflows `usize`.
    pub fn matmul / matmul_into(a: &[f32], b: &[f32], m: usize, n: usize, k: usize)
    check: shape = check::matmul(a.len(), b.len(), m, n, k),
    overwrite: |c| {
        if c.is_empty() || k == 0 {
            c.fill(0.0);
        } else {
            on_device!(
                "matmul",
                |exec| kernels::matmul(exec, a, b, (m, n, k), c),
                simd::matmul_into(a, b, m, n, k, c)
            )
        }
    }
}

producing! {
    /// y = A·x for row-major A (m×n); y has m elements. With `n == 0`, y is all
    /// zeros and the device is not used.
    ///
    /// # Panics
    /// If `a.len() != m·n` or `x.len() != n`.
    pub fn matvec / matvec_into(a: &[f32], x: &[f32], m: usize, n: usize)
    check: shape = check::matvec(a.len(), x.len(), m, n),
    overwrite: |y| {
        if m == 0 || n == 0 {
            y.fill(0.0);
        } else {
            on_device!("matvec", |exec| kernels::matvec(exec, a, x, (m, n), y), simd::matvec_into(a, x, m, n, y))
        }
    }
}

producing! {
    /// The transpose of row-major `a` (rows×cols), as a cols×rows matrix.
    ///
    /// # Panics
    /// If `a.len() != rows·cols`.
    pub fn transpose / transpose_into(a: &[f32], rows: usize, cols: usize)
    check: shape = check::transpose(a.len(), rows, cols),
    overwrite: |t| {
        if !a.is_empty() {
            on_device!(
                "transpose",
                |exec| kernels::transpose(exec, a, (rows, cols), t),
                simd::transpose_into(a, rows, cols, t)
            )
        }
    }
}

producing! {
    /// Valid-mode 2-D convolution as deep-learning frameworks define it (cross-correlation:
    /// the kernel is not flipped): `out[i][j] = Σ_p Σ_q input[i+p][j+q] · kernel[p][q]`,
    /// output `(rows − krows + 1) × (cols − kcols + 1)`, empty when the kernel is larger than the input.
    ///
    /// # Panics
    /// If `input.len() != rows·cols`, `kernel.len() != krows·kcols`, or the kernel shape is empty.
    pub fn conv2d / conv2d_into(input: &[f32], kernel: &[f32], rows: usize, cols: usize, krows: usize, kcols: usize)
    check: shape = check::conv2d(input.len(), kernel.len(), rows, cols, krows, kcols),
    overwrite: |out| {
        if !out.is_empty() {
            on_device!(
                "conv2d",
                |exec| kernels::conv2d(exec, input, kernel, (cols, krows, kcols, shape.dims().1), out),
                simd::conv2d_into(input, kernel, rows, cols, krows, kcols, out)
            )
        }
    }
}
