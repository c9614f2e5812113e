use adaptive_kernel::adaptive_kernel;

struct Signal;

impl Signal {
    // One build reports every problem of the attribute and the signature.
    #[adaptive_kernel(complexity = "Hgh", sizes = 3)]
    async fn scale<T>(&self, (a, b): (T, T)) -> (T, T) {
        (a, b)
    }
}

fn main() {}
