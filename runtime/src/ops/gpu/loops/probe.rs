//! The run-time type checks of a generated loop's captured values.
//!
//! The macro sees tokens, not types: it infers the type of each scalar, slice
//! and accumulator the loop captures (from declared types, literals, and how
//! the value is used) and writes the shader for that. Generated code must
//! compile whatever the real types are, and a wrong guess must not compute on
//! wrong data, so the captured values are handed over through these probes:
//! `Probe(&x).word()`, `Probe(&a[..]).slice()`, `ProbeMut(&mut out[..]).slice_mut()`,
//! `ProbeMut(&mut acc).acc()`. Each compiles for any `T` and answers `Some` only
//! for the types a shader can hold (autoref specialisation: the method of a
//! `Known*` trait, implemented for the concrete types, is found before the one of
//! the `Other*` trait, implemented for a reference to any probe). In a generic
//! function, where `T` is a parameter, the answer is `None`: the loop then runs on
//! the host.

use super::spec::Elem;

/// A shared value a generated loop captures.
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// A value a generated loop writes: a slice or an accumulator.
pub struct ProbeMut<'a, T: ?Sized>(pub &'a mut T);

/// A scalar as a shader may take it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Word {
    /// An `f32`.
    F32(f32),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// A `usize` (on the device only up to `u32::MAX`).
    Usize(usize),
    /// A `bool`.
    Bool(bool),
}

/// A slice a generated loop reads.
#[derive(Debug)]
pub enum HostSlice<'a> {
    /// `[f32]`.
    F32(&'a [f32]),
    /// `[i32]`.
    I32(&'a [i32]),
    /// `[u32]`.
    U32(&'a [u32]),
    /// `[usize]`.
    Usize(&'a [usize]),
}

/// A slice a generated loop writes.
#[derive(Debug)]
pub enum HostSliceMut<'a> {
    /// `[f32]`.
    F32(&'a mut [f32]),
    /// `[i32]`.
    I32(&'a mut [i32]),
    /// `[u32]`.
    U32(&'a mut [u32]),
    /// `[usize]`.
    Usize(&'a mut [usize]),
}

/// An accumulator of a reduction a generated loop carries.
#[derive(Debug)]
pub enum AccMut<'a> {
    /// An `f32`.
    F32(&'a mut f32),
    /// An `i32`.
    I32(&'a mut i32),
    /// A `u32`.
    U32(&'a mut u32),
    /// A `usize`.
    Usize(&'a mut usize),
}

/// `Probe(&x).word()` for the scalar types a shader takes.
pub trait KnownWord {
    /// The value as a shader's scalar.
    fn word(self) -> Option<Word>;
}

/// `Probe(&x).word()` for any other type: `None`.
pub trait OtherWord {
    /// `None`: the shader cannot take this value.
    fn word(self) -> Option<Word>;
}

impl<T: ?Sized> OtherWord for &Probe<'_, T> {
    fn word(self) -> Option<Word> {
        None
    }
}

macro_rules! known_words {
    ($($t:ty => $variant:ident),*) => {$(
        impl KnownWord for Probe<'_, $t> {
            fn word(self) -> Option<Word> {
                Some(Word::$variant(*self.0))
            }
        }

        impl KnownWord for Probe<'_, &$t> {
            fn word(self) -> Option<Word> {
                Some(Word::$variant(**self.0))
            }
        }
    )*};
}

known_words!(f32 => F32, i32 => I32, u32 => U32, usize => Usize, bool => Bool);

/// `Probe(&a[..]).slice()` for the element types a shader takes.
pub trait KnownSlice<'a> {
    /// The slice, typed.
    fn slice(self) -> Option<HostSlice<'a>>;
}

/// `Probe(&a[..]).slice()` for any other type: `None`.
pub trait OtherSlice<'a> {
    /// `None`: the shader cannot bind this.
    fn slice(self) -> Option<HostSlice<'a>>;
}

impl<'a, T: ?Sized> OtherSlice<'a> for &Probe<'a, T> {
    fn slice(self) -> Option<HostSlice<'a>> {
        None
    }
}

/// `ProbeMut(&mut out[..]).slice_mut()` for the element types a shader takes.
pub trait KnownSliceMut<'a> {
    /// The slice, typed.
    fn slice_mut(self) -> Option<HostSliceMut<'a>>;
}

/// `ProbeMut(&mut out[..]).slice_mut()` for any other type: `None`.
pub trait OtherSliceMut<'a> {
    /// `None`: the shader cannot bind this.
    fn slice_mut(self) -> Option<HostSliceMut<'a>>;
}

impl<'a, T: ?Sized> OtherSliceMut<'a> for &ProbeMut<'a, T> {
    fn slice_mut(self) -> Option<HostSliceMut<'a>> {
        None
    }
}

/// `ProbeMut(&mut acc).acc()` for the accumulator types a shader combines.
pub trait KnownAcc<'a> {
    /// The accumulator, typed.
    fn acc(self) -> Option<AccMut<'a>>;
}

/// `ProbeMut(&mut acc).acc()` for any other type: `None`.
pub trait OtherAcc<'a> {
    /// `None`: the shader cannot combine into this.
    fn acc(self) -> Option<AccMut<'a>>;
}

impl<'a, T: ?Sized> OtherAcc<'a> for &ProbeMut<'a, T> {
    fn acc(self) -> Option<AccMut<'a>> {
        None
    }
}

/// A slice a loop run on the host reads, as [`KnownFresh::fresh`] gives it: the slice
/// itself, or a current copy of a resident handle's data whose host memory is stale.
#[derive(Debug)]
pub enum Fresh<'a, T> {
    /// The slice as handed over: its memory is current.
    Host(&'a [T]),
    /// A copy of the device's newer data.
    Copy(Vec<T>),
}

impl<T> std::ops::Deref for Fresh<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Fresh::Host(s) => s,
            Fresh::Copy(v) => v,
        }
    }
}

/// `Probe(&a[..]).fresh()` for the element types a [`Resident`](crate::resident::Resident)
/// holds: when `a` is the host memory of a handle given to the call in progress and the
/// device's copy is newer, a current copy (downloaded); otherwise `a` itself. What a loop
/// the device refused reads through a shared slice it cannot make current in place.
pub trait KnownFresh<'a, T> {
    /// The slice, or a current copy of it.
    ///
    /// # Panics
    /// When the device was lost while it held the only current copy.
    fn fresh(self) -> Fresh<'a, T>;
}

/// `Probe(&a[..]).fresh()` for any other slice: `a` itself (it cannot be resident).
pub trait OtherFresh<'a, T> {
    /// The slice itself.
    fn fresh(self) -> Fresh<'a, T>;
}

impl<'a, T> OtherFresh<'a, T> for &Probe<'a, [T]> {
    fn fresh(self) -> Fresh<'a, T> {
        Fresh::Host(self.0)
    }
}

/// `ProbeMut(&mut a[..]).sync()` for the element types a [`Resident`](crate::resident::Resident)
/// holds: when `a` is the host memory of a handle given to the call in progress, makes it
/// current (downloading the device's newer copy into it) and marks the device's copy
/// stale, since the host is about to use it; otherwise nothing.
pub trait KnownSync {
    /// Makes the slice's memory current for the host.
    ///
    /// # Panics
    /// When the device was lost while it held the only current copy.
    fn sync(self);
}

/// `ProbeMut(&mut a[..]).sync()` for any other slice: nothing (it cannot be resident).
pub trait OtherSync {
    /// Nothing.
    fn sync(self);
}

impl<T: ?Sized> OtherSync for &ProbeMut<'_, T> {
    fn sync(self) {}
}

macro_rules! resident_elements {
    ($($t:ty => $elem:ident),*) => {$(
        impl<'a> KnownFresh<'a, $t> for Probe<'a, [$t]> {
            #[track_caller]
            fn fresh(self) -> Fresh<'a, $t> {
                let s = self.0;
                match crate::ops::gpu::residency::current(s.as_ptr() as usize, s.len(), Elem::$elem) {
                    Some(words) => Fresh::Copy(bytemuck::cast_slice::<u32, $t>(&words).to_vec()),
                    None => Fresh::Host(s),
                }
            }
        }

        impl KnownSync for ProbeMut<'_, [$t]> {
            #[track_caller]
            fn sync(self) {
                crate::ops::gpu::residency::sync(bytemuck::cast_slice_mut::<$t, u32>(self.0), Elem::$elem);
            }
        }
    )*};
}

resident_elements!(f32 => F32, i32 => I32, u32 => U32);

macro_rules! known_slices {
    ($($t:ty => $variant:ident),*) => {$(
        impl<'a> KnownSlice<'a> for Probe<'a, [$t]> {
            fn slice(self) -> Option<HostSlice<'a>> {
                Some(HostSlice::$variant(self.0))
            }
        }

        impl<'a> KnownSliceMut<'a> for ProbeMut<'a, [$t]> {
            fn slice_mut(self) -> Option<HostSliceMut<'a>> {
                Some(HostSliceMut::$variant(self.0))
            }
        }

        impl<'a> KnownAcc<'a> for ProbeMut<'a, $t> {
            fn acc(self) -> Option<AccMut<'a>> {
                Some(AccMut::$variant(self.0))
            }
        }
    )*};
}

known_slices!(f32 => F32, i32 => I32, u32 => U32, usize => Usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Meters(#[allow(dead_code)] f32);

    #[test]
    fn concrete_types_are_known_and_others_are_not() {
        let (x, n, flag, r) = (1.5f32, 7usize, true, &2.0f32);
        assert_eq!(Probe(&x).word(), Some(Word::F32(1.5)));
        assert_eq!(Probe(&n).word(), Some(Word::Usize(7)));
        assert_eq!(Probe(&flag).word(), Some(Word::Bool(true)));
        assert_eq!(Probe(&r).word(), Some(Word::F32(2.0)));
        assert_eq!(Probe(&2.0f64).word(), None);
        assert_eq!(Probe(&Meters(1.0)).word(), None);
        let a = [1.0f32, 2.0];
        assert!(matches!(Probe(&a[..]).slice(), Some(HostSlice::F32(s)) if s.len() == 2));
        assert!(Probe(&[1.0f64][..]).slice().is_none());
        let mut out = [0u32; 3];
        assert!(matches!(ProbeMut(&mut out[..]).slice_mut(), Some(HostSliceMut::U32(_))));
        let mut acc = 0.0f32;
        assert!(matches!(ProbeMut(&mut acc).acc(), Some(AccMut::F32(_))));
        let mut wide = 0i64;
        assert!(ProbeMut(&mut wide).acc().is_none());
    }

    /// In a generic function the answer is the general one, whatever `T` is at the call.
    fn generic_word<T>(x: &T) -> Option<Word> {
        Probe(x).word()
    }

    #[test]
    fn a_type_parameter_is_not_known() {
        assert_eq!(generic_word(&1.0f32), None);
    }
}
