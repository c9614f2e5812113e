use adaptive_kernel::adaptive_kernel;

fn scale_threads(s: f32, x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v *= s);
}

// `serial` keeps a kernel on the calling thread: a Parallel variant of one's own contradicts it.
#[adaptive_kernel(complexity = "Low", serial, parallel = scale_threads)]
fn scale(s: f32, x: &mut [f32]) {
    for v in x.iter_mut() {
        *v *= s;
    }
}

fn main() {
    scale_threads(1.0, &mut []);
}
