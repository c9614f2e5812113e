use adaptive_kernel::adaptive_kernel;

pub struct Signal;

// Neither `self` nor `Self` in it: the attribute cannot tell it from a free function (see the docs).
impl Signal {
    #[adaptive_kernel(complexity = "Low")]
    pub fn peak(x: &[f32]) -> f32 {
        x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v))
    }
}

fn main() {}
