use adaptive_kernel::adaptive_kernel;

struct Signal {
    samples: Vec<f32>,
}

impl Signal {
    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn energy(&self) -> f32 {
        self.samples.iter().map(|s| s * s).sum()
    }
}

fn main() {
    let _ = Signal { samples: vec![1.0] }.energy();
}
