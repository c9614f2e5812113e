//! The two vocabulary types every other module speaks: which compiled variant
//! runs a call ([`Backend`]) and how fast a kernel's work grows with its input
//! ([`OpComplexity`]).
//!
//! Both parse from and print as the names users write in attributes, in
//! environment variables and in history files, so they live apart from the
//! machinery that uses them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One compiled variant of a kernel.
///
/// `Display` prints `Scalar`, `SIMD`, `Parallel` and `GPU`; `FromStr` accepts those names
/// in any letter case.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::Backend;
/// assert_eq!(Backend::Simd.to_string(), "SIMD");
/// assert_eq!("gpu".parse::<Backend>().unwrap(), Backend::Gpu);
/// assert!("cuda".parse::<Backend>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Backend {
    /// The kernel body as written, with `ops` bound to plain Rust loops.
    Scalar,
    /// The body compiled for this CPU's widest instruction set, `ops` bound to trueno's SIMD kernels.
    Simd,
    /// The body with `ops` bound to the SIMD kernels run on chunks across a thread
    /// pool (`ops::par`). Only the learning router offers it, never the stateless
    /// selection API.
    Parallel,
    /// The body with `ops` bound to GPU compute shaders over wgpu.
    Gpu,
}

impl Backend {
    /// Every backend, in the order used for deterministic tie-breaks (cheapest to launch first).
    pub const ALL: [Backend; Backend::COUNT] = [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu];

    /// How many backends there are (the length of per-backend arrays).
    pub const COUNT: usize = 4;

    /// The printed name (`Scalar`, `SIMD`, `Parallel`, `GPU`).
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "Scalar",
            Backend::Simd => "SIMD",
            Backend::Parallel => "Parallel",
            Backend::Gpu => "GPU",
        }
    }

    /// Position in [`Backend::ALL`]; handy for per-backend arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The backend at `index` in [`Backend::ALL`], if any.
    pub const fn from_index(index: usize) -> Option<Backend> {
        match index {
            0 => Some(Backend::Scalar),
            1 => Some(Backend::Simd),
            2 => Some(Backend::Parallel),
            3 => Some(Backend::Gpu),
            _ => None,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Backend {
    type Err = ParseEnumError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseEnumError::new("backend", s, &["Scalar", "SIMD", "Parallel", "GPU"]))
    }
}

/// How a kernel's work grows with its input; picks the row of the MoE threshold
/// table (see [`crate::BackendSelector::select_with_moe`]).
///
/// Ordered `Low < Medium < High`. Parses `"Low"`, `"Medium"`, `"High"` in any
/// letter case.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::OpComplexity;
/// assert!(OpComplexity::Low < OpComplexity::High);
/// assert_eq!("medium".parse::<OpComplexity>().unwrap(), OpComplexity::Medium);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OpComplexity {
    /// O(n) work that is memory-bound: element-wise arithmetic, copies, reshapes.
    Low,
    /// O(n) to O(n log n) work with reductions or several passes: sums, norms, fits of linear models.
    Medium,
    /// Super-linear, compute-bound work: matrix products, convolutions, clustering.
    High,
}

impl OpComplexity {
    /// Every complexity, lowest first.
    pub const ALL: [OpComplexity; 3] = [OpComplexity::Low, OpComplexity::Medium, OpComplexity::High];

    /// The printed name (`Low`, `Medium`, `High`).
    pub const fn name(self) -> &'static str {
        match self {
            OpComplexity::Low => "Low",
            OpComplexity::Medium => "Medium",
            OpComplexity::High => "High",
        }
    }
}

impl fmt::Display for OpComplexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for OpComplexity {
    type Err = ParseEnumError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OpComplexity::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseEnumError::new("complexity", s, &["Low", "Medium", "High"]))
    }
}

/// A string that names no variant of one of this crate's enums.
///
/// Its message names what was being parsed, the text given and every accepted
/// value: ``unknown backend `cuda`; expected one of `Scalar`, `SIMD`, `Parallel`, `GPU` ``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseEnumError {
    what: &'static str,
    given: String,
    expected: &'static [&'static str],
}

impl ParseEnumError {
    pub(crate) fn new(what: &'static str, given: &str, expected: &'static [&'static str]) -> Self {
        ParseEnumError { what, given: given.to_owned(), expected }
    }

    /// The text that failed to parse.
    pub fn given(&self) -> &str {
        &self.given
    }

    /// The accepted spellings.
    pub fn expected(&self) -> &'static [&'static str] {
        self.expected
    }
}

impl fmt::Display for ParseEnumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`; expected one of ", self.what, self.given)?;
        for (i, e) in self.expected.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{e}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseEnumError {}
