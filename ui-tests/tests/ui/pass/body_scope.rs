//! The body sees exactly what it would see without the attribute: the module's
//! items and imports, `self::`/`super::` paths, and a helper named like a
//! variant (`simd`) is the helper, not the kernel's own SIMD variant.
#![deny(warnings)]

use std::collections::HashMap;

fn scale_factor() -> f32 {
    2.0
}

mod kernels {
    use adaptive_kernel::adaptive_kernel;
    use std::collections::HashMap;

    pub struct Px(pub f32);

    fn simd(x: f32) -> f32 {
        x + 1.0
    }

    #[adaptive_kernel(complexity = "Low")]
    pub fn bump(x: &[Px]) -> Vec<f32> {
        x.iter().map(|p| simd(p.0) * super::scale_factor()).collect()
    }

    #[adaptive_kernel(complexity = "Low")]
    pub fn count(words: &[&str]) -> usize {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for w in words {
            *seen.entry(*w).or_default() += 1;
        }
        let first = self::Px(seen.len() as f32);
        first.0 as usize
    }

    #[adaptive_kernel(complexity = "Low")]
    pub fn with_items(x: &[f32]) -> f32 {
        #[derive(Default)]
        struct Acc(f32);
        mod nested {
            pub fn twice(v: f32) -> f32 {
                super::super::scale_factor() * v
            }
        }
        let mut acc = Acc::default();
        for v in x {
            acc.0 += nested::twice(*v);
        }
        acc.0
    }
}

fn main() {
    let _unused: HashMap<u8, u8> = HashMap::new();
    assert_eq!(kernels::bump(&[kernels::Px(1.0)]), [4.0]);
    assert_eq!(kernels::bump::simd(&[kernels::Px(1.0)]), [4.0]);
    assert_eq!(kernels::count(&["a", "b", "a"]), 2);
    assert_eq!(kernels::with_items(&[1.0, 2.0]), 6.0);
}
