//! Methods and generic kernels route, learn and persist per instantiation:
//! `dot::<f32>` and `dot::<f64>` (and a method of `Layer<f32>` and of
//! `Layer<f64>`) each have their own routing table, named after the
//! instantiation, so each settles on its own backend and is saved apart.
//! Timings are injected; the cross-process checks run child processes
//! (history is read once per process).

mod common;

use std::sync::Arc;

use adaptive_kernel::{adaptive_kernel, kernel_named, with_backend, Backend, Kernel};
use common::{child_role, run_child, settle_with, settled, wins};

/// The element types the generic kernels are written over.
pub trait Float: Copy + Default + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + 'static {}
impl Float for f32 {}
impl Float for f64 {}

/// A dot product over any float type: one routing table per `T`.
#[adaptive_kernel(complexity = "Low")]
pub fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    let mut acc = T::default();
    for (x, y) in a.iter().zip(b) {
        acc = acc + *x * *y;
    }
    acc
}

/// A sum in `LANES` partial sums: one routing table per `LANES`.
#[adaptive_kernel(complexity = "Low")]
pub fn lanes_sum<const LANES: usize>(x: &[f32]) -> f32 {
    let mut part = [0.0f32; LANES];
    for (i, v) in x.iter().enumerate() {
        part[i % LANES] += v;
    }
    part.iter().sum::<f32>()
}

/// A layer with weights, generic over its element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer<T> {
    w: Vec<T>,
    calls: usize,
}

impl<T: Float> Layer<T> {
    /// The weighted sum of `x` (`&self`).
    #[adaptive_kernel(complexity = "Low")]
    pub fn forward(&self, x: &[T]) -> T {
        let mut acc = T::default();
        for (w, v) in self.w.iter().zip(x) {
            acc = acc + *w * *v;
        }
        acc
    }

    /// Scales the weights by `x` element-wise (`&mut self`).
    #[adaptive_kernel(complexity = "Low")]
    pub fn scale(&mut self, x: &[T]) {
        for (w, v) in self.w.iter_mut().zip(x) {
            *w = *w * *v;
        }
        self.calls += 1;
    }

    /// The layer's weights plus `x`, consuming it (`self`).
    #[adaptive_kernel(complexity = "Low")]
    pub fn into_shifted(mut self, x: &[T]) -> Vec<T> {
        for (w, v) in self.w.iter_mut().zip(x) {
            *w = *w + *v;
        }
        self.w
    }

    /// `forward` through a box (`self: Box<Self>`).
    #[adaptive_kernel(complexity = "Low")]
    pub fn boxed_forward(self: Box<Self>, x: &[T]) -> T {
        self.forward(x)
    }

    /// `forward` through a shared pointer (`self: Arc<Self>`).
    #[adaptive_kernel(complexity = "Low")]
    pub fn shared_forward(self: Arc<Self>, x: &[T]) -> T {
        self.forward(x)
    }

    /// A layer whose weights are `w` (an associated function).
    #[adaptive_kernel(complexity = "Low")]
    pub fn from_weights(w: &[T]) -> Self {
        Self { w: w.to_vec(), calls: 0 }
    }
}

/// The weighted sum as a trait method, implemented with a kernel.
pub trait Forward {
    /// The weighted sum of `x`.
    fn apply(&self, x: &[f32]) -> f32;
}

impl Forward for Layer<f32> {
    #[adaptive_kernel(complexity = "Low")]
    fn apply(&self, x: &[f32]) -> f32 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum::<f32>()
    }
}

const X: [f32; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
const X64: [f64; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];

fn every_backend<R: PartialEq + std::fmt::Debug>(call: impl Fn() -> R) -> R {
    let want = call();
    for b in [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu] {
        assert_eq!(with_backend(b, &call), want, "on {b:?}");
    }
    want
}

#[test]
fn every_shape_computes_the_same_on_every_backend() {
    common::no_history();
    assert_eq!(every_backend(|| dot(&X, &X)), 55.0f32);
    assert_eq!(every_backend(|| dot(&X64, &X64)), 55.0f64);
    assert_eq!(every_backend(|| lanes_sum::<4>(&X)), 15.0);
    assert_eq!(every_backend(|| dot::scalar::<f64>(&X64, &X64) + dot::simd(&X64, &X64)), 110.0);
    let layer = every_backend(|| Layer::from_weights(&X));
    assert_eq!(every_backend(|| layer.forward(&X)), 55.0);
    assert_eq!(every_backend(|| layer.apply(&X)), 55.0);
    assert_eq!(every_backend(|| Box::new(layer.clone()).boxed_forward(&X)), 55.0);
    assert_eq!(every_backend(|| Arc::new(layer.clone()).shared_forward(&X)), 55.0);
    assert_eq!(every_backend(|| layer.clone().into_shifted(&X)), vec![2.0, 4.0, 6.0, 8.0, 10.0]);
    let mut l = layer.clone();
    with_backend(Backend::Simd, || l.scale(&X));
    l.scale(&X);
    assert_eq!((l.w[1], l.calls), (8.0, 2));
    let layer64 = Layer::from_weights(&X64);
    assert_eq!(every_backend(|| layer64.forward(&X64)), 55.0);
}

#[test]
fn each_instantiation_has_its_own_named_kernel() {
    common::no_history();
    let (f32_k, f64_k) = (dot::kernel::<f32>(), dot::kernel::<f64>());
    assert!(!std::ptr::eq(f32_k, f64_k));
    assert!(std::ptr::eq(f32_k, dot::kernel::<f32>()));
    assert_eq!(f32_k.name(), "generic_kernels::dot::<f32>");
    assert_eq!(f64_k.name(), "generic_kernels::dot::<f64>");
    assert_eq!(lanes_sum::kernel::<8>().name(), "generic_kernels::lanes_sum::<8>");
    // Methods: found by name once called; one kernel per `Self`.
    Layer::from_weights(&X).forward(&X);
    Layer::from_weights(&X64).forward(&X64);
    let a = kernel_named("generic_kernels::Layer<f32>::forward").expect("Layer<f32>::forward listed");
    let b = kernel_named("generic_kernels::Layer<f64>::forward").expect("Layer<f64>::forward listed");
    assert!(!std::ptr::eq(a, b));
    assert!(dot::FAMILY.instances().iter().any(|k| std::ptr::eq(*k, f32_k)));
}

const SIZE: usize = 3_000;

#[test]
fn two_instantiations_settle_on_different_backends() {
    common::no_history();
    settle_with(dot::kernel::<f32>(), SIZE, wins(Backend::Scalar));
    settle_with(dot::kernel::<f64>(), SIZE, wins(Backend::Simd));
    assert_eq!(settled(dot::kernel::<f32>(), SIZE), Some(Backend::Scalar));
    assert_eq!(settled(dot::kernel::<f64>(), SIZE), Some(Backend::Simd));
    // The routed calls follow their own instantiation's table.
    let (a, b) = (vec![1.0f32; SIZE / 2], vec![1.0f64; SIZE / 2]);
    assert_eq!(dot(&a, &a), 1500.0);
    assert_eq!(dot(&b, &b), 1500.0);
    assert_eq!(settled(dot::kernel::<f32>(), SIZE), Some(Backend::Scalar));
    assert_eq!(settled(dot::kernel::<f64>(), SIZE), Some(Backend::Simd));
}

#[test]
fn a_method_kernel_learns_per_self_type_and_can_be_forced() {
    common::no_history();
    let (l32, l64) = (Layer::from_weights(&[1.0f32; 4]), Layer::from_weights(&[1.0f64; 4]));
    l32.forward(&[1.0; 4]);
    l64.forward(&[1.0; 4]);
    let k32 = kernel_named("generic_kernels::Layer<f32>::forward").unwrap();
    let k64 = kernel_named("generic_kernels::Layer<f64>::forward").unwrap();
    settle_with(k32, SIZE, wins(Backend::Simd));
    settle_with(k64, SIZE, wins(Backend::Scalar));
    assert_eq!(settled(k32, SIZE), Some(Backend::Simd));
    assert_eq!(settled(k64, SIZE), Some(Backend::Scalar));
    assert_eq!(k32.table().rows.len(), 2, "the 4-element call's bucket and SIZE's:\n{}", k32.table());
    k32.force(Some(Backend::Scalar));
    assert_eq!(k32.forced(), Some(Backend::Scalar));
    assert_eq!(l32.forward(&[2.0; 4]), 8.0);
    k32.force(None);
}

fn persisted(k: &'static Kernel) -> Option<Backend> {
    settled(k, SIZE)
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child() {
    let l32 = Layer::from_weights(&[1.0f32; 4]);
    let l64 = Layer::from_weights(&[1.0f64; 4]);
    l32.forward(&[1.0; 4]);
    l64.forward(&[1.0; 4]);
    let k32 = kernel_named("generic_kernels::Layer<f32>::forward").unwrap();
    let k64 = kernel_named("generic_kernels::Layer<f64>::forward").unwrap();
    match child_role().expect("run by run_child").as_str() {
        "learn" => {
            settle_with(dot::kernel::<f32>(), SIZE, wins(Backend::Scalar));
            settle_with(dot::kernel::<f64>(), SIZE, wins(Backend::Simd));
            settle_with(k32, SIZE, wins(Backend::Simd));
            settle_with(k64, SIZE, wins(Backend::Scalar));
            adaptive_kernel::flush().unwrap();
        }
        "recall" => {
            assert_eq!(persisted(dot::kernel::<f32>()), Some(Backend::Scalar));
            assert_eq!(persisted(dot::kernel::<f64>()), Some(Backend::Simd));
            assert_eq!(persisted(k32), Some(Backend::Simd));
            assert_eq!(persisted(k64), Some(Backend::Scalar));
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn tables_persist_per_instantiation_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.json");
    let env = [("ADAPTIVE_KERNEL_HISTORY", file.to_str().unwrap()), ("ADAPTIVE_KERNEL_GPU", "off")];
    let (ok, out) = run_child("child", "learn", &env);
    assert!(ok, "learn failed:\n{out}");
    let saved = std::fs::read_to_string(&file).unwrap();
    for name in [
        "generic_kernels::dot::<f32>",
        "generic_kernels::dot::<f64>",
        "generic_kernels::Layer<f32>::forward",
        "generic_kernels::Layer<f64>::forward",
    ] {
        assert!(saved.contains(&format!("\"{name}\"")), "{name} not saved:\n{saved}");
    }
    let (ok, out) = run_child("child", "recall", &env);
    assert!(ok, "recall failed:\n{out}");
}
