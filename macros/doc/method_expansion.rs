// The method itself: its signature, visibility and attributes as written (`#[inline]` added when none
// is given). Nothing else is generated: everything lives inside it, where `self`, `Self` and the impl's
// generics can be named, so it works in a trait impl (which takes no extra item) as in an inherent one.
/// The weighted sum of `x`.
#[inline]
pub fn forward(&self, x: &[f32]) -> f32 {
    // One kernel per instantiation of `Self` (the attribute cannot see whether the impl is generic).
    // `name: ""`: each instance's name is what the closure below returns; with `name = "N"` it is
    // `N::<Self type>`.
    static __ADAPTIVE_FAMILY: ::adaptive_kernel::__private::KernelFamily =
        ::adaptive_kernel::__private::KernelFamily::new(::adaptive_kernel::__private::KernelSpec {
            name: "",
            complexity: ::adaptive_kernel::__private::OpComplexity::Low,
            has_gpu: false,
            has_parallel: false,
            token_hash: 6557573450371488385u64,
            loops: &[::adaptive_kernel::__private::LoopRewrite {
                line: 12,
                idiom: "?.sum()",
                variants: &[],
                reason: "source",
                vector_math: &[],
            }],
            splits: &[],
            gpu_loops: &[],
        });
    let __adaptive_size: usize = x.len();
    // The closure names this instantiation (`my_crate::nn::Layer::forward`); its address finds the
    // instance's cached kernel with one load and a compare, and it runs only on the first call.
    // `adaptive_kernel::kernel_named("my_crate::nn::Layer::forward")` returns the same handle.
    let __adaptive_route = __ADAPTIVE_FAMILY
        .get(|| -> ::std::string::String { ::std::format!("{}::forward", ::core::any::type_name::<Self>()) })
        .route(__adaptive_size, || {
            ::adaptive_kernel::__private::Work::estimate(
                ::adaptive_kernel::__private::OpComplexity::Low,
                __adaptive_size,
                ::core::option::Option::None,
                ::core::option::Option::None
            )
        });
    // Each variant is a `move` closure holding a copy of the body: it captures `self` and the parameters
    // as they are, and `return`/`?` in the body leave the closure. `with_backend(Backend::Scalar, || ..)`
    // around a call runs one variant.
    match __adaptive_route.backend() {
        ::adaptive_kernel::__private::Backend::Scalar => __adaptive_route.run(move || {
            #[allow(unused_imports)]
            use ::adaptive_kernel::__private::ops_scalar as ops;
            self.w.iter().zip(x).map(|(w, v)| w * v).sum()
        }),
        ::adaptive_kernel::__private::Backend::Simd
        | ::adaptive_kernel::__private::Backend::Parallel
        // The runtime's `#[target_feature]` clones (AVX-512, AVX2+FMA), picked by `simd_level()`; the
        // closure is inlined into the clone and compiled with its features. No `ops::` call in the body:
        // no GPU or Parallel variant, and those backends share this arm (never chosen).
        | ::adaptive_kernel::__private::Backend::Gpu => __adaptive_route.run(move || ::adaptive_kernel::__private::simd_run(#[inline(always)] move || {
            #[allow(unused_imports)]
            use ::adaptive_kernel::__private::ops_simd as ops;
            self.w.iter().zip(x).map(|(w, v)| w * v).sum()
        })),
    }
}
