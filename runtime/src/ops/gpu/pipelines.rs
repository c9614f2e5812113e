//! The compute kernels of the GPU op backend and the cache of their pipelines.
//!
//! Every [`Kernel`] is one entry point of one WGSL module. A module is
//! compiled to a shader module the first time one of its kernels is used, and
//! each kernel's pipeline the first time it is dispatched; both are then kept
//! for the life of the process (trueno's `GpuBackend` rebuilds them on every
//! call, which costs 0.5–4 ms).
//!
//! Shader sources: our own modules (`shaders/*.wgsl`, each prefixed with
//! `shaders/common.wgsl`) and trueno's `TRANSPOSE_SHADER`, used as is. Our own
//! element-wise and reduction kernels replace trueno's because those size
//! their work by `arrayLength` (wrong for pooled buffers, which are larger
//! than the data), dispatch in 1-D (at most 65,535 × 256 elements), and use
//! WGSL `max`/`min`, which may drop NaN. Its `MATMUL_SHADER` has no tile
//! offset, so a matrix with more than 65,535 tiles along a side could not be
//! dispatched; ours adds one.

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
            Module::Elementwise => {
                concat!(include_str!("shaders/common.wgsl"), include_str!("shaders/elementwise.wgsl"))
            }
            Module::Reduce => concat!(include_str!("shaders/common.wgsl"), include_str!("shaders/reduce.wgsl")),
            Module::Matrix => concat!(include_str!("shaders/common.wgsl"), include_str!("shaders/matrix.wgsl")),
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

/// One compute kernel (a WGSL entry point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kernel {
    Add,
    Sub,
    Mul,
    Div,
    Scale,
    Axpy,
    Relu,
    Sigmoid,
    Tanh,
    Gelu,
    Exp,
    Sum,
    SumSq,
    Dot,
    Max,
    Min,
    SoftmaxExp,
    SoftmaxNormalize,
    Matmul,
    Matvec,
    Conv2d,
    Transpose,
}

impl Kernel {
    const COUNT: usize = 22;

    fn module(self) -> Module {
        use Kernel::*;
        match self {
            Add | Sub | Mul | Div | Scale | Axpy | Relu | Sigmoid | Tanh | Gelu | Exp => Module::Elementwise,
            Sum | SumSq | Dot | Max | Min | SoftmaxExp | SoftmaxNormalize => Module::Reduce,
            Matmul | Matvec | Conv2d => Module::Matrix,
            Transpose => Module::Transpose,
        }
    }

    fn entry(self) -> &'static str {
        use Kernel::*;
        match self {
            Add => "ew_add",
            Sub => "ew_sub",
            Mul => "ew_mul",
            Div => "ew_div",
            Scale => "ew_scale",
            Axpy => "ew_axpy",
            Relu => "ew_relu",
            Sigmoid => "ew_sigmoid",
            Tanh => "ew_tanh",
            Gelu => "ew_gelu",
            Exp => "ew_exp",
            Sum => "reduce_sum",
            SumSq => "reduce_sum_sq",
            Dot => "reduce_dot",
            Max => "reduce_max",
            Min => "reduce_min",
            SoftmaxExp => "softmax_exp",
            SoftmaxNormalize => "softmax_normalize",
            Matmul => "matmul",
            Matvec => "matvec",
            Conv2d => "conv2d",
            Transpose => "main",
        }
    }

    /// The binding of the kernel's uniform parameters (trueno's transpose
    /// shader has its own layout: src 0, dst 1, params 2).
    pub(super) fn params_binding(self) -> u32 {
        match self {
            Kernel::Transpose => 2,
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
    pipelines: [Option<Pipeline>; Kernel::COUNT],
}

impl PipelineCache {
    /// An empty cache.
    pub(super) fn new() -> Self {
        PipelineCache { modules: Default::default(), pipelines: Default::default() }
    }

    /// The kernel's pipeline, compiling its module and itself if this is the
    /// first use. Compilation errors surface through the device's error
    /// scopes, which every op call holds open.
    pub(super) fn get(&mut self, device: &wgpu::Device, kernel: Kernel) -> Pipeline {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Kernel; Kernel::COUNT] = {
        use Kernel::*;
        [
            Add,
            Sub,
            Mul,
            Div,
            Scale,
            Axpy,
            Relu,
            Sigmoid,
            Tanh,
            Gelu,
            Exp,
            Sum,
            SumSq,
            Dot,
            Max,
            Min,
            SoftmaxExp,
            SoftmaxNormalize,
            Matmul,
            Matvec,
            Conv2d,
            Transpose,
        ]
    };

    #[test]
    fn every_kernel_has_a_distinct_slot_and_its_entry_point_exists() {
        for (i, k) in ALL.iter().enumerate() {
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
