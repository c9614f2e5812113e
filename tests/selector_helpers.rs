//! The trueno-backed helpers of `BackendSelector` and their errors.

use adaptive_kernel::{Backend, BackendSelector, Error};

#[test]
fn vector_add_adds() {
    let s = BackendSelector::new();
    assert_eq!(s.vector_add(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]).unwrap(), vec![11.0, 22.0, 33.0]);
    assert_eq!(s.vector_add(&[], &[]).unwrap(), Vec::<f32>::new());
    let big: Vec<f32> = (0..2_000_003).map(|i| i as f32).collect();
    let out = s.vector_add(&big, &big).unwrap();
    assert_eq!(out.len(), big.len());
    assert!(out.iter().zip(&big).all(|(o, x)| *o == 2.0 * x));
}

#[test]
fn vector_add_reports_expected_and_actual_lengths() {
    let err = BackendSelector::new().vector_add(&[1.0, 2.0], &[1.0]).unwrap_err();
    assert_eq!(err, Error::LengthMismatch { op: "vector_add", input: "b", expected: 2, actual: 1 });
    assert_eq!(err.to_string(), "vector_add: input b has 1 elements, expected 2");
}

#[test]
fn matrix_multiply_multiplies() {
    // A is 2×3, B is 3×2.
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
    let c = BackendSelector::new().matrix_multiply(&a, &b, 2, 2, 3).unwrap();
    assert_eq!(c, vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn matrix_multiply_on_the_gpu_choice_still_gives_the_right_answer() {
    // A ratio this low sends even a tiny matmul to the GPU path (which falls back when no GPU exists).
    let s = BackendSelector::new().with_min_dispatch_ratio(1e-12);
    assert_eq!(s.select_for_matmul(2, 2, 3), Backend::Gpu);
    let c = s.matrix_multiply(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 2, 2, 3).unwrap();
    assert_eq!(c, vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn matrix_multiply_reports_which_input_is_wrong() {
    let s = BackendSelector::new();
    let e = s.matrix_multiply(&[0.0; 5], &[0.0; 6], 2, 2, 3).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { op: "matrix_multiply", input: "a (m×k)", expected: 6, actual: 5 });
    let e = s.matrix_multiply(&[0.0; 6], &[0.0; 7], 2, 2, 3).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { op: "matrix_multiply", input: "b (k×n)", expected: 6, actual: 7 });
    assert!(e.to_string().contains("expected 6"));
    let e = s.matrix_multiply(&[], &[], usize::MAX, 2, 3).unwrap_err();
    assert_eq!(e, Error::ShapeOverflow { op: "matrix_multiply" });
}

#[test]
fn trueno_backend_mapping() {
    use adaptive_kernel::trueno::Backend as T;
    assert_eq!(BackendSelector::to_trueno_backend(Backend::Scalar), T::Scalar);
    assert_eq!(BackendSelector::to_trueno_backend(Backend::Simd), T::Auto);
    assert_eq!(BackendSelector::to_trueno_backend(Backend::Gpu), T::GPU);
}
