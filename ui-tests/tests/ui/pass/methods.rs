//! Methods with every receiver, and associated functions that name `Self`, in an
//! inherent impl: each routes, each variant can be run (`with_backend`), and each
//! kernel is found by name once called.
#![deny(warnings)]

use std::rc::Rc;
use std::sync::Arc;

use adaptive_kernel::{adaptive_kernel, kernel_named, with_backend, Backend};

#[derive(Clone)]
struct Signal {
    samples: Vec<f32>,
}

impl Signal {
    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn energy(&self) -> f32 {
        self.samples.iter().map(|s| s * s).sum()
    }

    #[adaptive_kernel(complexity = "Low")]
    fn scale(&mut self, by: &[f32]) {
        for (s, b) in self.samples.iter_mut().zip(by) {
            *s *= b;
        }
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn into_total(self) -> f32 {
        self.samples.into_iter().sum()
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn boxed(self: Box<Self>) -> usize {
        self.samples.len()
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn shared(self: Arc<Self>) -> usize {
        self.samples.len()
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn counted(self: Rc<Self>) -> usize {
        self.samples.len()
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn pinned_mut(mut self: std::pin::Pin<&mut Self>) -> f32 {
        self.samples.push(0.0);
        self.samples[0]
    }

    /// An associated function: `Self` in it marks it as one.
    #[adaptive_kernel(complexity = "Low")]
    fn from_slice(x: &[f32]) -> Self {
        Self { samples: x.to_vec() }
    }

    /// `?` and `return` leave the variant, whose value is the method's.
    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn checked_first(&self) -> Result<f32, String> {
        let first = self.samples.first().ok_or_else(|| "empty".to_owned())?;
        if *first < 0.0 {
            return Err("negative".to_owned());
        }
        Ok(*first)
    }

    /// A generic method: one routing table per `N`.
    #[adaptive_kernel(complexity = "Low", size = self.samples.len())]
    fn head<const N: usize>(&self) -> [f32; N] {
        let mut out = [0.0; N];
        out.copy_from_slice(&self.samples[..N]);
        out
    }

    #[adaptive_kernel(complexity = "Low", size = self.samples.len(), name = "signal.tail")]
    unsafe fn last_unchecked(&self) -> f32 {
        *self.samples.get_unchecked(self.samples.len() - 1)
    }
}

fn main() {
    let mut s = Signal::from_slice(&[1.0, 2.0, 3.0]);
    assert_eq!(s.energy(), 14.0);
    for b in [Backend::Scalar, Backend::Simd, Backend::Parallel, Backend::Gpu] {
        assert_eq!(with_backend(b, || s.energy()), 14.0);
    }
    s.scale(&[2.0, 2.0, 2.0]);
    assert_eq!(s.clone().into_total(), 12.0);
    assert_eq!(Box::new(s.clone()).boxed(), 3);
    assert_eq!(Arc::new(s.clone()).shared(), 3);
    assert_eq!(Rc::new(s.clone()).counted(), 3);
    assert_eq!(std::pin::pin!(s.clone()).as_mut().pinned_mut(), 2.0);
    assert_eq!(s.checked_first(), Ok(2.0));
    assert_eq!(Signal::from_slice(&[]).checked_first(), Err("empty".to_owned()));
    assert_eq!(s.head::<2>(), [2.0, 4.0]);
    // SAFETY: `s` is not empty.
    assert_eq!(unsafe { s.last_unchecked() }, 6.0);

    // Named after `type_name::<Self>()`, whose path starts with this crate's name.
    let crate_name = module_path!();
    let energy = kernel_named(&format!("{crate_name}::Signal::energy")).expect("listed once called");
    energy.force(Some(Backend::Scalar));
    assert_eq!(s.energy(), 56.0);
    assert_eq!(energy.table().forced, Some(Backend::Scalar));
    assert!(kernel_named(&format!("{crate_name}::Signal::head::<2>")).is_some());
    assert!(kernel_named(&format!("signal.tail::<{crate_name}::Signal>")).is_some());
}
