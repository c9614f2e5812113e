//! Every visibility: the routed function and `mod k` are visible exactly where the
//! function would be without the attribute.
#![deny(warnings)]

mod outer {
    pub mod inner {
        use adaptive_kernel::adaptive_kernel;

        #[adaptive_kernel(complexity = "Low")]
        fn private(x: &[f32]) -> f32 {
            x[0]
        }

        #[adaptive_kernel(complexity = "Low")]
        pub(self) fn private_self(x: &[f32]) -> f32 {
            x[0]
        }

        #[adaptive_kernel(complexity = "Low")]
        pub(super) fn to_outer(x: &[f32]) -> f32 {
            private(x) + private::scalar(x) + private_self(x) + private_self::KERNEL.complexity().name().len() as f32
        }

        #[adaptive_kernel(complexity = "Low")]
        pub(in crate::outer) fn in_path(x: &[f32]) -> f32 {
            x[0]
        }

        #[adaptive_kernel(complexity = "Low")]
        pub(crate) fn crate_wide(x: &[f32]) -> f32 {
            x[0]
        }

        #[adaptive_kernel(complexity = "Low")]
        pub fn public(x: &[f32]) -> f32 {
            x[0]
        }
    }

    pub fn use_from_outer(x: &[f32]) -> f32 {
        inner::to_outer(x) + inner::to_outer::simd(x) + inner::in_path(x) + inner::in_path::scalar(x)
    }
}

fn main() {
    let x = [2.0_f32];
    // to_outer = 2 + 2 + 2 + len("Low") = 9, twice; in_path = 2, twice.
    assert_eq!(outer::use_from_outer(&x), 22.0);
    assert_eq!(outer::inner::crate_wide(&x) + outer::inner::crate_wide::simd(&x), 4.0);
    assert_eq!(outer::inner::public(&x) + outer::inner::public::scalar(&x), 4.0);
    assert_eq!(outer::inner::public::KERNEL.name(), concat!(module_path!(), "::outer::inner::public"));
}
