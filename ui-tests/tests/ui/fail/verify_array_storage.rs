use adaptive_kernel::adaptive_kernel;
use ndarray::{ArrayBase, DataMut, Ix2};

// `verify` gives the Scalar variant a copy of each array the kernel writes: it cannot
// copy an array whose storage it cannot name.
#[adaptive_kernel(complexity = "Low", verify = true)]
pub fn double<S: DataMut<Elem = f32>>(out: &mut ArrayBase<S, Ix2>) {
    out.mapv_inplace(|x| 2.0 * x);
}

fn main() {}
