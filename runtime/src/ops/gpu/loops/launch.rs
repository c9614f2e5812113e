//! One call of a generated loop: what the generated code hands over (the loop's
//! units, its scalars, slices and accumulators, each through a [`probe`](super::probe)),
//! checked against what the shader was written for, then added to its group's
//! [`Batch`](super::Batch) or refused, so that the loop as written runs on the host.

use super::probe::{AccMut, HostSlice, HostSliceMut, Word};
use super::slot::Slot;
use super::spec::{Elem, GpuLoop, HostReason, Scalar, HEADER_WORDS, UNIFORM_WORDS};

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
    // Validated once per loop: `shader` is 1 once known valid (the device's first call sets it too).
    use std::sync::atomic::Ordering;
    if spec.shader.load(Ordering::Relaxed) == 1 {
        return;
    }
    match spec.validate() {
        Ok(()) => spec.shader.store(1, Ordering::Relaxed),
        Err(e) => panic!(
            "ADAPTIVE_KERNEL_CHECK_SHADERS: the shader generated for the GPU loop at {}:{} is invalid: {e}",
            spec.file, spec.line
        ),
    }
}

/// One call of a generated loop, assembled by generated code in the order the
/// loop's [`GpuLoop`] declares: the units, every scalar, every slice, every
/// accumulator; then handed to its group's [`Batch::launch`](super::Batch::launch).
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

    /// The loop this is a call of.
    pub(super) fn spec(&self) -> &'static GpuLoop {
        self.spec
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

    /// The accumulator of the next reduction. Its own value stays on the host (the device's
    /// combined result is combined into it there, [`Finish::accumulate`](super::Finish::accumulate)),
    /// so a NaN or an infinity in it (a maximum starting from `f32::NEG_INFINITY`) keeps the
    /// call on the device.
    pub fn accumulate(&mut self, acc: Option<AccMut<'a>>) {
        let expected = self.spec.reductions.get(self.accs.len());
        let elem = match &acc {
            Some(AccMut::F32(_)) => Some(Elem::F32),
            Some(AccMut::I32(_)) => Some(Elem::I32),
            Some(AccMut::U32(_)) => Some(Elem::U32),
            Some(AccMut::Usize(_)) => Some(Elem::Usize),
            None => None,
        };
        match (acc, expected) {
            (Some(acc), Some(r)) if Some(r.elem) == elem => self.accs.push(acc),
            _ => self.refuse(HostReason::Type),
        }
    }

    /// Marks the call as one the host must run (a row narrower than the width the
    /// shader's bounds were proved for): not said, counted as a host run.
    pub fn narrow(&mut self) {
        self.refuse(HostReason::Narrow);
    }

    /// The call's parts, once every check has run: its refusal, if any, else what the
    /// device needs.
    pub(super) fn checked(mut self) -> Checked<'a> {
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
        match self.refused {
            Some(reason) => Checked::Host(reason),
            None if self.units == 0 => Checked::Empty,
            None => Checked::Device(Parts {
                spec,
                start: self.start,
                units: self.units,
                words: self.words,
                slots: self.slots,
            }),
        }
    }
}

/// A launch after its checks ([`Launch::checked`]).
pub(super) enum Checked<'a> {
    /// The host must run it, for this reason.
    Host(HostReason),
    /// No units: nothing to run anywhere.
    Empty,
    /// What the device needs.
    Device(Parts<'a>),
}

/// What the device needs of a launch: its loop, its range, its scalar words and its
/// slices (the accumulators are handed over again when the group finishes).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(super) struct Parts<'a> {
    pub(super) spec: &'static GpuLoop,
    pub(super) start: usize,
    pub(super) units: usize,
    pub(super) words: Vec<u32>,
    pub(super) slots: Vec<Slot<'a>>,
}
