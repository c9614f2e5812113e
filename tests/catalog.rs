//! Framework operation names carry their complexity; converters recommend through the MoE table.

use adaptive_kernel::catalog::*;
use adaptive_kernel::{Backend, BackendSelector, OpComplexity};

#[test]
fn the_seed_examples_hold() {
    let numpy = NumPyConverter::new();
    assert_eq!(numpy.recommend_backend(&NumPyOp::Add, 100), Backend::Scalar);
    assert_eq!(numpy.recommend_backend(&NumPyOp::Add, 2_000_000), Backend::Simd);
    assert_eq!(numpy.recommend_backend(&NumPyOp::Dot, 50_000), Backend::Gpu);
}

#[test]
fn numpy_complexities() {
    use NumPyOp::*;
    for op in [Add, Subtract, Multiply, Divide, Reshape] {
        assert_eq!(op.complexity(), OpComplexity::Low, "{op:?}");
    }
    for op in [Sum, Mean, Max, Min] {
        assert_eq!(op.complexity(), OpComplexity::Medium, "{op:?}");
    }
    for op in [Dot, Matmul, Convolve] {
        assert_eq!(op.complexity(), OpComplexity::High, "{op:?}");
    }
}

#[test]
fn sklearn_and_pytorch_complexities() {
    assert_eq!(SklearnAlgorithm::StandardScaler.complexity(), OpComplexity::Low);
    assert_eq!(SklearnAlgorithm::LinearRegression.complexity(), OpComplexity::Medium);
    assert_eq!(SklearnAlgorithm::KMeans.complexity(), OpComplexity::High);
    assert_eq!(PyTorchOperation::TensorCreation.complexity(), OpComplexity::Low);
    assert_eq!(PyTorchOperation::Linear.complexity(), OpComplexity::Medium);
    assert_eq!(PyTorchOperation::Forward.complexity(), OpComplexity::High);
}

#[test]
fn every_converter_agrees_with_the_moe_table_for_every_op() {
    let moe = BackendSelector::new();
    let sizes = [0, 1_000, 1_001, 10_001, 100_001, 1_000_001];
    for &n in &sizes {
        for op in NumPyOp::ALL {
            assert_eq!(NumPyConverter::new().recommend_backend(op, n), moe.select_with_moe(op.complexity(), n));
        }
        for op in SklearnAlgorithm::ALL {
            assert_eq!(SklearnConverter::new().recommend_backend(op, n), moe.select_with_moe(op.complexity(), n));
        }
        for op in PyTorchOperation::ALL {
            assert_eq!(PyTorchConverter::new().recommend_backend(op, n), moe.select_with_moe(op.complexity(), n));
        }
    }
}

#[test]
fn every_class_is_represented_in_every_catalog() {
    for c in OpComplexity::ALL {
        assert!(NumPyOp::ALL.iter().any(|o| o.complexity() == c));
        assert!(SklearnAlgorithm::ALL.iter().any(|o| o.complexity() == c));
        assert!(PyTorchOperation::ALL.iter().any(|o| o.complexity() == c));
    }
}
