use adaptive_kernel::adaptive_kernel;

/// A dense layer's weights.
pub struct Layer {
    w: Vec<f32>,
}

impl Layer {
    /// The weighted sum of `x`.
    #[adaptive_kernel(complexity = "Low")]
    pub fn forward(&self, x: &[f32]) -> f32 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum()
    }
}
