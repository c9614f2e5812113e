//! Builder validation: zero, negative, NaN and infinite parameters are rejected.

use adaptive_kernel::{BackendSelector, Error};

const BAD: [f64; 5] = [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

#[test]
fn try_builders_return_a_typed_error_naming_the_parameter() {
    for v in BAD {
        let s = BackendSelector::new();
        for (name, r) in [
            ("pcie_bandwidth", s.try_with_pcie_bandwidth(v)),
            ("gpu_gflops", s.try_with_gpu_gflops(v)),
            ("min_dispatch_ratio", s.try_with_min_dispatch_ratio(v)),
        ] {
            match r {
                Err(Error::InvalidParameter { name: n, .. }) => {
                    assert_eq!(n, name);
                    let msg = r.unwrap_err().to_string();
                    assert!(msg.contains(name) && msg.contains("positive, finite"), "{msg}");
                }
                other => panic!("{name}={v}: {other:?}"),
            }
        }
    }
}

#[test]
fn try_builders_accept_positive_finite_values() {
    let s = BackendSelector::new()
        .try_with_pcie_bandwidth(64e9)
        .and_then(|s| s.try_with_gpu_gflops(1e12))
        .and_then(|s| s.try_with_min_dispatch_ratio(0.5))
        .unwrap();
    assert_eq!((s.pcie_bandwidth(), s.gpu_gflops(), s.min_dispatch_ratio()), (64e9, 1e12, 0.5));
}

#[test]
#[should_panic(expected = "pcie_bandwidth must be a positive, finite number")]
fn pcie_builder_panics_on_zero() {
    let _ = BackendSelector::new().with_pcie_bandwidth(0.0);
}

#[test]
#[should_panic(expected = "gpu_gflops must be a positive, finite number")]
fn gpu_builder_panics_on_nan() {
    let _ = BackendSelector::new().with_gpu_gflops(f64::NAN);
}

#[test]
#[should_panic(expected = "min_dispatch_ratio must be a positive, finite number")]
fn ratio_builder_panics_on_negative() {
    let _ = BackendSelector::new().with_min_dispatch_ratio(-5.0);
}

#[test]
#[should_panic(expected = "pcie_bandwidth must be a positive, finite number")]
fn pcie_builder_panics_on_infinity() {
    let _ = BackendSelector::new().with_pcie_bandwidth(f64::INFINITY);
}
