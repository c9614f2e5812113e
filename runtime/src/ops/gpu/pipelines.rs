//! The compute kernels of the GPU op backend and the cache of their pipelines.
//!
//! Every [`EntryPoint`] is one entry point of one WGSL module. A module is
//! compiled to a shader module the first time one of its kernels is used, and
//! each kernel's pipeline the first time it is dispatched; both are then kept
//! for the life of the process (trueno's `GpuBackend` rebuilds them on every
//! call, which costs 0.5–4 ms).
//!
//! Shader sources: our own modules (`shaders/*.wgsl`, each prefixed with
//! `shaders/common.wgsl` and `shaders/math.wgsl`) and trueno's `TRANSPOSE_SHADER`, used as is. Our own
//! element-wise and reduction kernels replace trueno's because those size
//! their work by `arrayLength` (wrong for pooled buffers, which are larger
//! than the data), dispatch in 1-D (at most 65,535 × 256 elements), and use
//! WGSL `max`/`min`, which may drop NaN. Its `MATMUL_SHADER` has no tile
//! offset, so a matrix with more than 65,535 tiles along a side could not be
//! dispatched; ours adds one.

use std::collections::HashMap;

use trueno::backends::gpu::wgpu;

/// A WGSL module: a set of kernels compiled together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    Elementwise,
    Reduce,
    Matrix,
    Transpose,
}

impl Module {
    const COUNT: usize = 4;

    fn source(self) -> &'static str {
        match self {
            Module::Elementwise => concat!(
                include_str!("shaders/common.wgsl"),
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/elementwise.wgsl")
            ),
            Module::Reduce => concat!(
                include_str!("shaders/common.wgsl"),
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/reduce.wgsl")
            ),
            Module::Matrix => concat!(
                include_str!("shaders/common.wgsl"),
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/matrix.wgsl")
            ),
            Module::Transpose => trueno::backends::gpu::shaders::TRANSPOSE_SHADER,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Module::Elementwise => "adaptive-kernel elementwise.wgsl",
            Module::Reduce => "adaptive-kernel reduce.wgsl",
            Module::Matrix => "adaptive-kernel matrix.wgsl",
            Module::Transpose => "trueno TRANSPOSE_SHADER",
        }
    }
}

/// Declares [`EntryPoint`] from one table: each variant with its module and
/// WGSL function name, so the list, its length and the lookups cannot drift apart.
macro_rules! entry_points {
    ($($name:ident => $module:ident :: $entry:literal,)*) => {
        /// One compute kernel: an entry point of a WGSL module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum EntryPoint {
            $($name,)*
        }

        impl EntryPoint {
            /// Every entry point, in declaration order (`ALL[e as usize] == e`).
            const ALL: &'static [EntryPoint] = &[$(EntryPoint::$name,)*];
            const COUNT: usize = Self::ALL.len();

            fn module(self) -> Module {
                match self {
                    $(EntryPoint::$name => Module::$module,)*
                }
            }

            fn entry(self) -> &'static str {
                match self {
                    $(EntryPoint::$name => $entry,)*
                }
            }
        }
    };
}

entry_points! {
    Add => Elementwise::"ew_add",
    Sub => Elementwise::"ew_sub",
    Mul => Elementwise::"ew_mul",
    Div => Elementwise::"ew_div",
    Scale => Elementwise::"ew_scale",
    Axpy => Elementwise::"ew_axpy",
    Relu => Elementwise::"ew_relu",
    Sigmoid => Elementwise::"ew_sigmoid",
    Tanh => Elementwise::"ew_tanh",
    Gelu => Elementwise::"ew_gelu",
    Exp => Elementwise::"ew_exp",
    Sum => Reduce::"reduce_sum",
    SumSq => Reduce::"reduce_sum_sq",
    Dot => Reduce::"reduce_dot",
    Max => Reduce::"reduce_max",
    Min => Reduce::"reduce_min",
    SoftmaxExp => Reduce::"softmax_exp",
    SoftmaxNormalize => Reduce::"softmax_normalize",
    Matmul => Matrix::"matmul",
    Matvec => Matrix::"matvec",
    Conv2d => Matrix::"conv2d",
    Transpose => Transpose::"main",
}

impl EntryPoint {
    /// The binding of the kernel's uniform parameters (trueno's transpose
    /// shader has its own layout: src 0, dst 1, params 2).
    pub(super) fn params_binding(self) -> u32 {
        match self {
            EntryPoint::Transpose => 2,
            _ => 3,
        }
    }
}

/// A compiled kernel and the layout its bind groups must follow.
#[derive(Clone)]
pub(super) struct Pipeline {
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) layout: wgpu::BindGroupLayout,
}

/// Shader modules and pipelines, each created on first use and kept.
pub(super) struct PipelineCache {
    modules: [Option<wgpu::ShaderModule>; Module::COUNT],
    pipelines: [Option<Pipeline>; EntryPoint::COUNT],
    /// The pipelines of loops `#[adaptive_kernel]` generated (`loops`), by the
    /// address of the loop's static.
    generated: HashMap<usize, Pipeline>,
}

impl PipelineCache {
    /// An empty cache.
    pub(super) fn new() -> Self {
        PipelineCache { modules: Default::default(), pipelines: Default::default(), generated: HashMap::new() }
    }

    /// The pipeline of the generated loop whose static is at `key`, made by `create`
    /// the first time it is asked for.
    pub(super) fn generated(&mut self, key: usize, create: impl FnOnce() -> Pipeline) -> Pipeline {
        self.generated.entry(key).or_insert_with(create).clone()
    }

    /// The kernel's pipeline, compiling its module and itself if this is the
    /// first use. Compilation errors surface through the device's error
    /// scopes, which every op call holds open.
    pub(super) fn get(&mut self, device: &wgpu::Device, kernel: EntryPoint) -> Pipeline {
        if let Some(p) = &self.pipelines[kernel as usize] {
            return p.clone();
        }
        let module = kernel.module();
        let shader = self.modules[module as usize]
            .get_or_insert_with(|| {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(module.label()),
                    source: wgpu::ShaderSource::Wgsl(module.source().into()),
                })
            })
            .clone();
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.entry()),
            layout: None,
            module: &shader,
            entry_point: Some(kernel.entry()),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let p = Pipeline { pipeline, layout };
        self.pipelines[kernel as usize] = Some(p.clone());
        p
    }

    /// How many pipelines have been compiled (the op set's and generated loops').
    pub(super) fn compiled(&self) -> usize {
        self.pipelines.iter().filter(|p| p.is_some()).count() + self.generated.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_a_distinct_slot_and_its_entry_point_exists() {
        for (i, k) in EntryPoint::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            let source = k.module().source();
            assert!(source.contains(&format!("fn {}(", k.entry())), "{k:?}: no entry point {}", k.entry());
        }
    }

    #[test]
    fn our_modules_parse_and_validate() {
        // naga is what wgpu runs on these sources; catching errors here keeps a
        // typo from surfacing as a GPU failure at run time.
        for module in [Module::Elementwise, Module::Reduce, Module::Matrix, Module::Transpose] {
            let parsed = wgpu::naga::front::wgsl::parse_str(module.source())
                .unwrap_or_else(|e| panic!("{}: {}", module.label(), e.emit_to_string(module.source())));
            wgpu::naga::valid::Validator::new(
                wgpu::naga::valid::ValidationFlags::all(),
                wgpu::naga::valid::Capabilities::empty(),
            )
            .validate(&parsed)
            .unwrap_or_else(|e| panic!("{}: {e:?}", module.label()));
        }
    }
}
