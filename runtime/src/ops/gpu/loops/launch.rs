//! One call of a generated loop: what the generated code hands over (the loop's
//! units, its scalars, slices and accumulators, each through a [`probe`](super::probe)),
//! checked against what the shader was written for, then run on the device or
//! refused, so that the loop as written runs on the host.

use super::probe::{AccMut, HostSlice, HostSliceMut, Word};
use super::slot::Slot;
use super::spec::{Elem, GpuLoop, HostReason, ReduceOp, Scalar, HEADER_WORDS, UNIFORM_WORDS};

impl GpuLoop {
    /// Whether the shader parses and validates (naga, as wgpu runs it), or the error.
    /// Always `Ok` without the `gpu` feature (nothing would compile it).
    pub fn validate(&self) -> Result<(), String> {
        #[cfg(feature = "gpu")]
        return super::exec::validate(&self.source());
        #[cfg(not(feature = "gpu"))]
        return Ok(());
    }
}

/// Under `ADAPTIVE_KERNEL_CHECK_SHADERS=1` (what `scripts/test` sets), validates the loop's
/// shader before every first call, device or not, and panics when it is invalid: in the
/// project's tests an invalid shader is a failure, not a silent run on the host.
fn check_shader_if_asked(spec: &'static GpuLoop) {
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*ASKED.get_or_init(|| std::env::var("ADAPTIVE_KERNEL_CHECK_SHADERS").as_deref() == Ok("1")) {
        return;
    }
    if let Err(e) = spec.validate() {
        panic!(
            "ADAPTIVE_KERNEL_CHECK_SHADERS: the shader generated for the GPU loop at {}:{} is invalid: {e}",
            spec.file, spec.line
        );
    }
}

/// One call of a generated loop, assembled by generated code in the order the
/// loop's [`GpuLoop`] declares: the units, every scalar, every slice, every
/// accumulator; then [`run`](Launch::run).
#[derive(Debug)]
pub struct Launch<'a> {
    spec: &'static GpuLoop,
    start: usize,
    units: usize,
    words: Vec<u32>,
    slots: Vec<Slot<'a>>,
    accs: Vec<AccMut<'a>>,
    refused: Option<HostReason>,
}

impl<'a> Launch<'a> {
    /// A call of `spec`'s loop.
    pub fn new(spec: &'static GpuLoop) -> Launch<'a> {
        Launch {
            spec,
            start: 0,
            units: 0,
            words: Vec::with_capacity(spec.scalars.len()),
            slots: Vec::with_capacity(spec.bindings.len()),
            accs: Vec::with_capacity(spec.reductions.len()),
            refused: None,
        }
    }

    fn refuse(&mut self, reason: HostReason) {
        self.refused.get_or_insert(reason);
    }

    /// A range loop over `start..end` (nothing when `end <= start`).
    pub fn range(&mut self, start: usize, end: usize) {
        self.start = start;
        self.units = end.saturating_sub(start);
    }

    /// A loop over `units` items or rows.
    pub fn units(&mut self, units: usize) {
        self.units = units;
    }

    /// The next scalar argument: a value of the user's (a NaN or an infinity runs the call on
    /// the host, as the GPU contract says).
    pub fn word(&mut self, word: Option<Word>) {
        if matches!(word, Some(Word::F32(v)) if !v.is_finite()) {
            self.refuse(HostReason::Special);
        }
        self.push_word(word);
    }

    /// The next scalar argument: a constant the body names by path (`f32::INFINITY`,
    /// `f32::MAX`). An infinite one is taken to the device: compare-and-keep loops start from
    /// `f32::INFINITY`, and the results of arithmetic on it go through the shader's `lp_fin`.
    pub fn constant(&mut self, word: Option<Word>) {
        self.push_word(word);
    }

    fn push_word(&mut self, word: Option<Word>) {
        let expected = self.spec.scalars.get(self.words.len()).copied();
        let bits = match (word, expected) {
            (Some(Word::F32(v)), Some(Scalar::F32)) => Some(v.to_bits()),
            (Some(Word::I32(v)), Some(Scalar::I32)) => Some(v as u32),
            (Some(Word::U32(v)), Some(Scalar::U32)) => Some(v),
            (Some(Word::Bool(v)), Some(Scalar::Bool)) => Some(u32::from(v)),
            (Some(Word::Usize(v)), Some(Scalar::Usize)) => match u32::try_from(v) {
                Ok(v) => Some(v),
                Err(_) => {
                    self.refuse(HostReason::Size);
                    Some(0)
                }
            },
            _ => None,
        };
        if bits.is_none() {
            self.refuse(HostReason::Type);
        }
        self.words.push(bits.unwrap_or(0));
    }

    /// The next slice, read-only.
    pub fn read(&mut self, slice: Option<HostSlice<'a>>) {
        match slice {
            Some(s) => self.slot(Slot::Read(s)),
            None => self.refuse(HostReason::Type),
        }
    }

    /// The next slice, written.
    pub fn write(&mut self, slice: Option<HostSliceMut<'a>>) {
        match slice {
            Some(s) => self.slot(Slot::Write(s)),
            None => self.refuse(HostReason::Type),
        }
    }

    fn slot(&mut self, slot: Slot<'a>) {
        if !slot.finite() {
            self.refuse(HostReason::Special);
        }
        let expected = self.spec.bindings.get(self.slots.len());
        if expected.is_none_or(|b| b.elem != slot.elem() || b.access != slot.access()) {
            self.refuse(HostReason::Type);
        }
        self.slots.push(slot);
    }

    /// The accumulator of the next reduction.
    pub fn accumulate(&mut self, acc: Option<AccMut<'a>>) {
        let expected = self.spec.reductions.get(self.accs.len());
        let elem = match &acc {
            Some(AccMut::F32(_)) => Some(Elem::F32),
            Some(AccMut::I32(_)) => Some(Elem::I32),
            Some(AccMut::U32(_)) => Some(Elem::U32),
            Some(AccMut::Usize(_)) => Some(Elem::Usize),
            None => None,
        };
        if matches!(&acc, Some(AccMut::F32(a)) if !a.is_finite()) {
            self.refuse(HostReason::Special);
        }
        match (acc, expected) {
            (Some(acc), Some(r)) if Some(r.elem) == elem => self.accs.push(acc),
            _ => self.refuse(HostReason::Type),
        }
    }

    /// Runs the call on the device: `true` when it did (the written slices and the
    /// accumulators hold the loop's results), `false` when the loop must run on the
    /// host (nothing was written). Zero units need no device.
    pub fn run(mut self) -> bool {
        let spec = self.spec;
        check_shader_if_asked(spec);
        if self.slots.len() != spec.bindings.len()
            || self.words.len() != spec.scalars.len()
            || self.accs.len() != spec.reductions.len()
        {
            self.refuse(HostReason::Type);
        }
        let fits = |n: usize| u32::try_from(n).is_ok();
        let end = self.start.checked_add(self.units);
        let in_u32 = end.is_some_and(fits)
            && self.slots.iter().all(|s| s.len().checked_add(self.units).is_some_and(fits))
            && HEADER_WORDS + self.slots.len() + self.words.len() <= UNIFORM_WORDS;
        if !in_u32 {
            self.refuse(HostReason::Size);
        }
        if let Some(reason) = self.refused {
            spec.ran_on_host(Some(reason));
            return false;
        }
        if self.units == 0 {
            return true;
        }
        let outcome = self.on_device();
        match outcome {
            Ok(()) => {
                spec.count(true);
                true
            }
            Err(reason) => {
                spec.ran_on_host(reason);
                false
            }
        }
    }

    /// The call on the device; `Err(None)` when there is no usable device (said elsewhere).
    #[cfg(feature = "gpu")]
    fn on_device(&mut self) -> Result<(), Option<HostReason>> {
        use std::sync::atomic::Ordering;
        let spec = self.spec;
        match spec.shader.load(Ordering::Relaxed) {
            0 => match spec.validate() {
                Ok(()) => spec.shader.store(1, Ordering::Relaxed),
                Err(e) => {
                    spec.shader.store(2, Ordering::Relaxed);
                    tracing::error!(target: "adaptive_kernel", file = spec.file, line = spec.line, error = %e, "a generated GPU loop's shader is invalid");
                    return Err(Some(HostReason::Shader));
                }
            },
            1 => {}
            _ => return Err(Some(HostReason::Shader)),
        }
        let partials = super::exec::run_on_device(spec, self.start, self.units, &self.words, &mut self.slots)?;
        self.combine(&partials);
        Ok(())
    }

    #[cfg(not(feature = "gpu"))]
    fn on_device(&mut self) -> Result<(), Option<HostReason>> {
        Err(None)
    }

    /// Combines each workgroup's partial results (`partials[group * reductions + r]`),
    /// in workgroup order, into the accumulators.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    fn combine(&mut self, partials: &[u32]) {
        let count = self.spec.reductions.len();
        if count == 0 {
            return;
        }
        for group in partials.chunks_exact(count) {
            for ((acc, r), &bits) in self.accs.iter_mut().zip(self.spec.reductions).zip(group) {
                match acc {
                    AccMut::F32(a) => {
                        let p = f32::from_bits(bits);
                        **a = match r.op {
                            ReduceOp::Sum => **a + p,
                            ReduceOp::Product => **a * p,
                            ReduceOp::Max => a.max(p),
                            ReduceOp::Min => a.min(p),
                        };
                    }
                    // Integer sums wrap on the device as in a release build; `usize` ones were checked there.
                    AccMut::I32(a) => **a = a.wrapping_add(bits as i32),
                    AccMut::U32(a) => **a = a.wrapping_add(bits),
                    AccMut::Usize(a) => **a = a.wrapping_add(bits as usize),
                }
            }
        }
    }
}
