use adaptive_kernel::adaptive_kernel;

pub struct Summary {
    pub total: f32,
}

// The result must implement `Comparable`; every parameter must be `Copy`.
#[adaptive_kernel(complexity = "Medium", verify = true)]
pub fn summary(x: &[f32]) -> Summary {
    Summary { total: x.iter().sum() }
}

#[adaptive_kernel(complexity = "Medium", verify = true)]
pub fn total(x: Vec<f32>) -> f32 {
    x.iter().sum()
}

fn main() {}
