//! The GPU failing in the middle of a program that keeps its data on the device
//! (`Resident` handles), on lavapipe, each case in a child process (a fault
//! injected with `ops::gpu::__inject_fault_for_tests` is the whole process's):
//!
//! * a call fails while the device still answers (out of memory): the device's
//!   newer copies are read back before the GPU is declared failed, and the
//!   program goes on on the CPU with its data intact, to the same results as on
//!   plain slices;
//! * the device is lost (destroyed, as a driver reset): data whose current copy
//!   was on the host goes on intact; data only the device held is reported lost
//!   (`try_host` is `Err(DataLost)`, `host` panics saying so), never read stale.
//!
//! These tests need a device; without one they FAIL, unless
//! `ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1` asks to skip them.

use std::time::Duration;

use adaptive_kernel::ops::gpu::{self, GpuFault, GpuHealth};
use adaptive_kernel::resident::{Residence, Resident};
use adaptive_kernel::{adaptive_kernel, with_backend, Backend};

mod common;

/// One Jacobi sweep on an `n`×`n` grid (as in `tests/resident.rs`); called through `resident`.
#[allow(dead_code)]
#[adaptive_kernel(complexity = "Medium")]
fn jacobi(grid: &[f32], next: &mut [f32], n: usize) {
    for i in n..grid.len() - n {
        let x = i % n;
        if x != 0 && x != n - 1 {
            next[i] = 0.25 * (grid[i - 1] + grid[i + 1] + grid[i - n] + grid[i + n]);
        }
    }
}

const N: usize = 48;

fn start() -> Vec<f32> {
    let mut g = vec![0.0f32; N * N];
    g[..N].fill(1.0);
    g
}

/// `sweeps` pairs of sweeps on plain slices, from the start.
fn plain(sweeps: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = (start(), start());
    for _ in 0..sweeps {
        jacobi::scalar(&a, &mut b, N);
        jacobi::scalar(&b, &mut a, N);
    }
    (a, b)
}

/// `sweeps` pairs of sweeps on the handles, the calls forced onto the GPU (SIMD once it failed).
fn sweep(a: &mut Resident<f32>, b: &mut Resident<f32>, sweeps: usize) {
    with_backend(Backend::Gpu, || {
        for _ in 0..sweeps {
            // `&mut *b`: an `impl Into<InOut>` parameter takes the reference itself, not a reborrow.
            jacobi::resident(&*a, &mut *b, N);
            jacobi::resident(&*b, &mut *a, N);
        }
    });
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let role = common::child_role().expect("run by run_child");
    assert!(gpu::wait_ready(Duration::from_secs(60)), "no usable GPU: {}", gpu::health());
    let (mut a, mut b) = (Resident::new(start()), Resident::new(start()));
    sweep(&mut a, &mut b, 5);
    assert_eq!((a.residence(), b.residence()), (Residence::Device, Residence::Device));
    match role.as_str() {
        "out_of_memory" => {
            gpu::__inject_fault_for_tests(GpuFault::OutOfMemory);
            // The next sweep fails on the device; both grids are read back first.
            sweep(&mut a, &mut b, 5);
            assert!(matches!(gpu::health(), GpuHealth::Failed { .. }), "{}", gpu::health());
            let (want_a, want_b) = plain(10);
            assert_eq!(a.host(), &want_a[..], "the grids went on on the CPU, intact");
            assert_eq!(b.host(), &want_b[..]);
        }
        "device_lost_host_current" => {
            // Read both: the host holds current copies when the device goes.
            let (want_a, want_b) = plain(5);
            assert_eq!((a.host(), b.host()), (&want_a[..], &want_b[..]));
            gpu::__inject_fault_for_tests(GpuFault::DeviceLost);
            sweep(&mut a, &mut b, 5);
            let (want_a, want_b) = plain(10);
            assert_eq!(a.host(), &want_a[..], "the grids went on on the CPU, intact");
            assert_eq!(b.host(), &want_b[..]);
        }
        "device_lost_device_newer" => {
            gpu::__inject_fault_for_tests(GpuFault::DeviceLost);
            let lost = a.try_host().expect_err("the device held the only current copy");
            assert!(lost.to_string().contains("cannot be recovered"), "{lost}");
            assert_eq!(a.residence(), Residence::Lost);
            let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.host().to_vec()));
            let message = panic.expect_err("a read of lost data panics").downcast::<String>().unwrap();
            assert!(message.contains("GPU held the only current copy"), "{message}");
            // Data written again on the host is the host's: usable as before.
            let fresh = Resident::new(start());
            assert_eq!(fresh.host(), &start()[..]);
        }
        other => panic!("unknown role {other}"),
    }
    eprintln!("CHILD {role} OK");
}

fn run(role: &str) {
    if std::env::var("ADAPTIVE_KERNEL_SKIP_GPU_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: ADAPTIVE_KERNEL_SKIP_GPU_TESTS=1");
        return;
    }
    let (ok, out) = common::run_child("child", role, &[("ADAPTIVE_KERNEL_GPU", "software")]);
    assert!(ok && out.contains(&format!("CHILD {role} OK")), "child {role} failed:\n{out}");
}

#[test]
fn a_call_failing_on_a_device_that_still_answers_reads_the_data_back_first() {
    run("out_of_memory");
}

#[test]
fn a_lost_device_leaves_host_current_data_intact() {
    run("device_lost_host_current");
}

#[test]
fn data_only_a_lost_device_held_is_reported_lost_never_read_stale() {
    run("device_lost_device_newer");
}
