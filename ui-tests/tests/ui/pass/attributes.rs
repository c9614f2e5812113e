//! Docs and attributes: the wrapper keeps them all; `cfg` and lint levels reach the
//! variants too; the generated public items are documented (`missing_docs` is denied).
#![deny(warnings, missing_docs)]
//! Crate docs.

pub mod kernels {
    //! Kernels.
    use adaptive_kernel::adaptive_kernel;

    /// Sum of squares.
    #[adaptive_kernel(complexity = "Medium")]
    #[inline(always)]
    #[must_use]
    #[allow(clippy::needless_range_loop)]
    pub fn sum_sq(x: &[f32]) -> f32 {
        #![deny(unsafe_code)]
        let mut s = 0.0;
        for i in 0..x.len() {
            s += x[i] * x[i];
        }
        s
    }

    /// Only on this platform.
    #[adaptive_kernel(complexity = "Low")]
    #[cfg(target_pointer_width = "64")]
    pub fn wide(x: &[f32]) -> f32 {
        x[0]
    }

    /// Never compiled: the whole kernel, `mod never` included, is configured out.
    #[adaptive_kernel(complexity = "Low")]
    #[cfg(any())]
    pub fn never(x: &[f32]) -> f32 {
        this_does_not_exist(x)
    }

    /// Old name.
    #[adaptive_kernel(complexity = "Low")]
    #[deprecated(note = "use sum_sq")]
    pub fn old(x: &[f32]) -> f32 {
        x[0]
    }

    /// Unused parameter, allowed as written.
    #[adaptive_kernel(complexity = "Low")]
    #[allow(unused_variables)]
    pub fn ignores_scale(x: &[f32], scale: f32) -> f32 {
        x[0]
    }

    /// A lint expected once is fulfilled once.
    #[adaptive_kernel(complexity = "Low")]
    #[expect(unused_mut)]
    pub fn expects(x: &[f32]) -> f32 {
        let mut first = x[0];
        first
    }
}

#[allow(deprecated)]
fn main() {
    let x = [1.0_f32, 2.0, 3.0];
    assert_eq!(kernels::sum_sq(&x), 14.0);
    assert_eq!(kernels::sum_sq::scalar(&x), 14.0);
    assert_eq!(kernels::wide(&x), 1.0);
    assert_eq!(kernels::old(&x), 1.0);
    assert_eq!(kernels::ignores_scale(&x, 2.0), 1.0);
    assert_eq!(kernels::expects(&x), 1.0);
}
