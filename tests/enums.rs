//! `Backend` and `OpComplexity`: names, parsing, ordering, serde.

use adaptive_kernel::{Backend, OpComplexity};

#[test]
fn backend_prints_and_parses_its_names_in_any_case() {
    for (b, name) in [(Backend::Scalar, "Scalar"), (Backend::Simd, "SIMD"), (Backend::Gpu, "GPU")] {
        assert_eq!(b.to_string(), name);
        assert_eq!(name.parse::<Backend>().unwrap(), b);
        assert_eq!(name.to_lowercase().parse::<Backend>().unwrap(), b);
        assert_eq!(name.to_uppercase().parse::<Backend>().unwrap(), b);
    }
}

#[test]
fn bad_names_are_clear_errors() {
    let e = "cuda".parse::<Backend>().unwrap_err();
    assert_eq!(e.to_string(), "unknown backend `cuda`; expected one of `Scalar`, `SIMD`, `Parallel`, `GPU`");
    let e = "Hgh".parse::<OpComplexity>().unwrap_err();
    assert_eq!(e.to_string(), "unknown complexity `Hgh`; expected one of `Low`, `Medium`, `High`");
    assert!("".parse::<Backend>().is_err());
}

#[test]
fn complexity_is_ordered_and_parses() {
    assert!(OpComplexity::Low < OpComplexity::Medium && OpComplexity::Medium < OpComplexity::High);
    for c in OpComplexity::ALL {
        assert_eq!(c.to_string().parse::<OpComplexity>().unwrap(), c);
        assert_eq!(c.to_string().to_uppercase().parse::<OpComplexity>().unwrap(), c);
    }
}

#[test]
fn serde_round_trips() {
    for b in Backend::ALL {
        let j = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<Backend>(&j).unwrap(), b);
    }
    for c in OpComplexity::ALL {
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<OpComplexity>(&j).unwrap(), c);
    }
}

#[test]
fn backend_is_hashable_and_copy() {
    let set: std::collections::HashSet<Backend> = Backend::ALL.into_iter().collect();
    assert_eq!(set.len(), 4);
    assert_eq!(Backend::COUNT, 4);
    let b = Backend::Gpu;
    let c = b;
    assert_eq!(b, c);
}

#[test]
fn parallel_prints_and_parses_like_the_others() {
    assert_eq!(Backend::Parallel.to_string(), "Parallel");
    assert_eq!("parallel".parse::<Backend>().unwrap(), Backend::Parallel);
    assert_eq!(serde_json::to_string(&Backend::Parallel).unwrap(), "\"Parallel\"");
    assert_eq!(adaptive_kernel::config::parse_backend("parallel").unwrap(), Some(Backend::Parallel));
}
