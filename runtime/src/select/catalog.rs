//! Names of framework operations (NumPy, scikit-learn, PyTorch) with the
//! complexity class each belongs to, and converters that recommend a backend
//! for one of them through the MoE table.
//!
//! This is how code that ports a Python pipeline asks "where should `np.dot`
//! of this size run?" without annotating a kernel.
//!
//! ```
//! # use adaptive_kernel_runtime as adaptive_kernel;
//! use adaptive_kernel::catalog::{NumPyConverter, NumPyOp};
//! use adaptive_kernel::Backend;
//! let numpy = NumPyConverter::new();
//! assert_eq!(numpy.recommend_backend(&NumPyOp::Add, 100), Backend::Scalar);
//! assert_eq!(numpy.recommend_backend(&NumPyOp::Add, 2_000_000), Backend::Simd);
//! assert_eq!(numpy.recommend_backend(&NumPyOp::Dot, 50_000), Backend::Gpu);
//! ```

use serde::{Deserialize, Serialize};

use super::selector::BackendSelector;
use crate::backend::{Backend, OpComplexity};

/// Declares an operation enum whose every variant maps to a complexity.
macro_rules! op_catalog {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $complexity:ident, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every operation of this framework that the catalog knows.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The complexity class of this operation.
            pub const fn complexity(&self) -> OpComplexity {
                match self {
                    $( $name::$variant => OpComplexity::$complexity, )+
                }
            }
        }
    };
}

op_catalog! {
    /// NumPy operations. `Dot` is High: `numpy.dot` on 2-D arrays is a matrix product.
    NumPyOp {
        /// `np.add` (Low).
        Add => Low,
        /// `np.subtract` (Low).
        Subtract => Low,
        /// `np.multiply` (Low).
        Multiply => Low,
        /// `np.divide` (Low).
        Divide => Low,
        /// `ndarray.reshape` (Low).
        Reshape => Low,
        /// `np.exp`, `np.sqrt` and other element-wise ufuncs (Low).
        Elementwise => Low,
        /// `np.sum` (Medium).
        Sum => Medium,
        /// `np.mean` (Medium).
        Mean => Medium,
        /// `np.max` (Medium).
        Max => Medium,
        /// `np.min` (Medium).
        Min => Medium,
        /// `np.std` (Medium).
        Std => Medium,
        /// `np.argmax`/`np.argmin` (Medium).
        ArgMax => Medium,
        /// `np.dot` (High).
        Dot => High,
        /// `np.matmul` / `@` (High).
        Matmul => High,
        /// `np.convolve` (High).
        Convolve => High,
        /// `np.linalg.inv` and other dense decompositions (High).
        LinalgSolve => High,
    }
}

op_catalog! {
    /// scikit-learn estimators and transformers, classed by their fit cost.
    SklearnAlgorithm {
        /// `StandardScaler` (Low): one pass of mean and variance.
        StandardScaler => Low,
        /// `MinMaxScaler` (Low).
        MinMaxScaler => Low,
        /// `Normalizer` (Low).
        Normalizer => Low,
        /// `LinearRegression` (Medium).
        LinearRegression => Medium,
        /// `LogisticRegression` (Medium).
        LogisticRegression => Medium,
        /// `Ridge` (Medium).
        Ridge => Medium,
        /// `GaussianNB` (Medium).
        GaussianNB => Medium,
        /// `DecisionTreeClassifier`/`Regressor` (Medium).
        DecisionTree => Medium,
        /// `KMeans` (High): distances of every point to every centre, per iteration.
        KMeans => High,
        /// `PCA` (High): an SVD.
        PCA => High,
        /// `KNeighborsClassifier` (High): pairwise distances.
        KNeighbors => High,
        /// `SVC` with a kernel (High): a Gram matrix.
        SVC => High,
        /// `RandomForestClassifier`/`Regressor` (High).
        RandomForest => High,
        /// `GradientBoostingClassifier`/`Regressor` (High).
        GradientBoosting => High,
    }
}

op_catalog! {
    /// PyTorch operations.
    PyTorchOperation {
        /// `torch.tensor`, `zeros`, `ones`, … (Low).
        TensorCreation => Low,
        /// Element-wise tensor arithmetic (Low).
        Elementwise => Low,
        /// Activations such as `relu`, `sigmoid` (Low).
        Activation => Low,
        /// `nn.Linear` (Medium).
        Linear => Medium,
        /// Reductions such as `sum`, `mean` (Medium).
        Reduction => Medium,
        /// `softmax` and normalisation layers (Medium).
        Normalization => Medium,
        /// A model's whole forward pass (High).
        Forward => High,
        /// `backward()` (High).
        Backward => High,
        /// `nn.Conv2d` (High).
        Conv2d => High,
        /// `torch.matmul` (High).
        Matmul => High,
        /// Multi-head attention (High).
        Attention => High,
    }
}

/// Declares a converter that recommends a backend for one framework's operations.
macro_rules! converter {
    ($(#[$meta:meta])* $name:ident for $op:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            selector: BackendSelector,
        }

        impl $name {
            /// A converter using the default [`BackendSelector`].
            pub const fn new() -> Self {
                $name { selector: BackendSelector::new() }
            }

            /// A converter using `selector`.
            pub const fn with_selector(selector: BackendSelector) -> Self {
                $name { selector }
            }

            /// The backend the MoE table gives for `op` over `data_size` elements.
            pub fn recommend_backend(&self, op: &$op, data_size: usize) -> Backend {
                self.selector.select_with_moe(op.complexity(), data_size)
            }
        }
    };
}

converter!(
    /// Recommends backends for [`NumPyOp`]s.
    NumPyConverter for NumPyOp
);
converter!(
    /// Recommends backends for [`SklearnAlgorithm`]s.
    SklearnConverter for SklearnAlgorithm
);
converter!(
    /// Recommends backends for [`PyTorchOperation`]s.
    PyTorchConverter for PyTorchOperation
);
