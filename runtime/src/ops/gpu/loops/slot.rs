//! A slice of a generated loop's call, as the generated code handed it over
//! ([`probe`](super::probe)) and as the device holds it (`usize` as `u32`).

use super::probe::{HostSlice, HostSliceMut};
use super::spec::{Access, Elem};

/// A slice of the call, in binding order.
#[derive(Debug)]
pub(crate) enum Slot<'a> {
    Read(HostSlice<'a>),
    Write(HostSliceMut<'a>),
}

impl Slot<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Slot::Read(HostSlice::F32(s)) => s.len(),
            Slot::Read(HostSlice::I32(s)) => s.len(),
            Slot::Read(HostSlice::U32(s)) => s.len(),
            Slot::Read(HostSlice::Usize(s)) => s.len(),
            Slot::Write(HostSliceMut::F32(s)) => s.len(),
            Slot::Write(HostSliceMut::I32(s)) => s.len(),
            Slot::Write(HostSliceMut::U32(s)) => s.len(),
            Slot::Write(HostSliceMut::Usize(s)) => s.len(),
        }
    }

    /// The address of its first element (what a resident handle's host memory is known by).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn addr(&self) -> usize {
        match self {
            Slot::Read(HostSlice::F32(s)) => s.as_ptr() as usize,
            Slot::Read(HostSlice::I32(s)) => s.as_ptr() as usize,
            Slot::Read(HostSlice::U32(s)) => s.as_ptr() as usize,
            Slot::Read(HostSlice::Usize(s)) => s.as_ptr() as usize,
            Slot::Write(HostSliceMut::F32(s)) => s.as_ptr() as usize,
            Slot::Write(HostSliceMut::I32(s)) => s.as_ptr() as usize,
            Slot::Write(HostSliceMut::U32(s)) => s.as_ptr() as usize,
            Slot::Write(HostSliceMut::Usize(s)) => s.as_ptr() as usize,
        }
    }

    /// Whether every element is finite (integers always are): a NaN or an infinity makes the
    /// call run on the host (`HostReason::Special`). A resident handle's memory whose device
    /// copy is current is not read (it may be stale, and the device copy holds what checked
    /// uploads and shaders, whose computed values are checked, left there).
    pub(crate) fn finite(&self) -> bool {
        #[cfg(feature = "gpu")]
        if crate::ops::gpu::residency::active()
            && crate::ops::gpu::residency::lookup(self.addr(), self.len(), self.elem()).is_some_and(|c| c.on_device())
        {
            return true;
        }
        match self {
            Slot::Read(HostSlice::F32(s)) => s.iter().all(|v| v.is_finite()),
            Slot::Write(HostSliceMut::F32(s)) => s.iter().all(|v| v.is_finite()),
            _ => true,
        }
    }

    pub(crate) fn elem(&self) -> Elem {
        match self {
            Slot::Read(HostSlice::F32(_)) | Slot::Write(HostSliceMut::F32(_)) => Elem::F32,
            Slot::Read(HostSlice::I32(_)) | Slot::Write(HostSliceMut::I32(_)) => Elem::I32,
            Slot::Read(HostSlice::U32(_)) | Slot::Write(HostSliceMut::U32(_)) => Elem::U32,
            Slot::Read(HostSlice::Usize(_)) | Slot::Write(HostSliceMut::Usize(_)) => Elem::Usize,
        }
    }

    pub(crate) fn access(&self) -> Access {
        match self {
            Slot::Read(_) => Access::Read,
            Slot::Write(_) => Access::ReadWrite,
        }
    }

    /// Its elements as the device holds them (`usize` as `u32`), or `None` when a value exceeds `u32`.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn device_words(&self) -> Option<std::borrow::Cow<'_, [u32]>> {
        use std::borrow::Cow;
        let usize_words = |s: &[usize]| s.iter().map(|&v| u32::try_from(v).ok()).collect::<Option<Vec<u32>>>();
        Some(match self {
            Slot::Read(HostSlice::F32(s)) => Cow::Owned(s.iter().map(|v| v.to_bits()).collect()),
            Slot::Write(HostSliceMut::F32(s)) => Cow::Owned(s.iter().map(|v| v.to_bits()).collect()),
            Slot::Read(HostSlice::I32(s)) => Cow::Owned(s.iter().map(|&v| v as u32).collect()),
            Slot::Write(HostSliceMut::I32(s)) => Cow::Owned(s.iter().map(|&v| v as u32).collect()),
            Slot::Read(HostSlice::U32(s)) => Cow::Borrowed(*s),
            Slot::Write(HostSliceMut::U32(s)) => Cow::Borrowed(&**s),
            Slot::Read(HostSlice::Usize(s)) => Cow::Owned(usize_words(s)?),
            Slot::Write(HostSliceMut::Usize(s)) => Cow::Owned(usize_words(s)?),
        })
    }

    /// Writes `words` (as the device held them) back into a written slice.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn store(&mut self, words: &[u32]) {
        match self {
            Slot::Read(_) => {}
            Slot::Write(HostSliceMut::F32(s)) => s.iter_mut().zip(words).for_each(|(d, w)| *d = f32::from_bits(*w)),
            Slot::Write(HostSliceMut::I32(s)) => s.iter_mut().zip(words).for_each(|(d, w)| *d = *w as i32),
            Slot::Write(HostSliceMut::U32(s)) => s.copy_from_slice(&words[..s.len()]),
            Slot::Write(HostSliceMut::Usize(s)) => s.iter_mut().zip(words).for_each(|(d, w)| *d = *w as usize),
        }
    }
}
