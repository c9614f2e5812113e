//! A runtime with a reason word the macro never writes (`spare`): the facade's check does
//! not compile.
#![allow(dead_code)]

mod fake {
    pub enum LoopReason {
        Exact,
        Simd,
        Break,
        Continue,
        Return,
        Try,
        Label,
        Await,
        Yield,
        Macro,
        Effect,
        Reads,
        Type,
        Mixed,
        Shadow,
        Op,
        Source,
        Serial,
        Parallel,
        Writes,
        Overlap,
        Unsafe,
        Nothing,
        Gpu,
        F64,
        Call,
        Value,
        Size,
        Syntax,
        Carried,
        Spare,
    }

    impl LoopReason {
        pub const ALL: &'static [LoopReason] = &[LoopReason::Exact, LoopReason::Simd, LoopReason::Break, LoopReason::Continue, LoopReason::Return, LoopReason::Try, LoopReason::Label, LoopReason::Await, LoopReason::Yield, LoopReason::Macro, LoopReason::Effect, LoopReason::Reads, LoopReason::Type, LoopReason::Mixed, LoopReason::Shadow, LoopReason::Op, LoopReason::Source, LoopReason::Serial, LoopReason::Parallel, LoopReason::Writes, LoopReason::Overlap, LoopReason::Unsafe, LoopReason::Nothing, LoopReason::Gpu, LoopReason::F64, LoopReason::Call, LoopReason::Value, LoopReason::Size, LoopReason::Syntax, LoopReason::Carried, LoopReason::Spare];

        pub const fn word(self) -> &'static str {
            match self {
            LoopReason::Exact => "exact",
            LoopReason::Simd => "simd",
            LoopReason::Break => "break",
            LoopReason::Continue => "continue",
            LoopReason::Return => "return",
            LoopReason::Try => "try",
            LoopReason::Label => "label",
            LoopReason::Await => "await",
            LoopReason::Yield => "yield",
            LoopReason::Macro => "macro",
            LoopReason::Effect => "effect",
            LoopReason::Reads => "reads",
            LoopReason::Type => "type",
            LoopReason::Mixed => "mixed",
            LoopReason::Shadow => "shadow",
            LoopReason::Op => "op",
            LoopReason::Source => "source",
            LoopReason::Serial => "serial",
            LoopReason::Parallel => "parallel",
            LoopReason::Writes => "writes",
            LoopReason::Overlap => "overlap",
            LoopReason::Unsafe => "unsafe",
            LoopReason::Nothing => "nothing",
            LoopReason::Gpu => "gpu",
            LoopReason::F64 => "f64",
            LoopReason::Call => "call",
            LoopReason::Value => "value",
            LoopReason::Size => "size",
            LoopReason::Syntax => "syntax",
            LoopReason::Carried => "carried",
            LoopReason::Spare => "spare",
            }
        }
    }
}

adaptive_kernel::__private::loop_reasons!(fake::LoopReason);

fn main() {}
