use adaptive_kernel::adaptive_kernel;
use std::ops::{Add, Mul};

/// Σ aᵢ·bᵢ over any numeric type: `dot::<f32>` and `dot::<f64>` learn apart.
#[adaptive_kernel(complexity = "Low")]
pub fn dot<T>(a: &[T], b: &[T]) -> T
where
    T: Copy + Default + Add<Output = T> + Mul<Output = T>,
{
    let mut acc = T::default();
    for (x, y) in a.iter().zip(b) {
        acc = acc + *x * *y;
    }
    acc
}
