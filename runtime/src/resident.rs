//! Data kept on the GPU between kernel calls: [`Resident`], and the argument
//! types through which an annotated kernel's `k::resident` entry takes it
//! ([`In`], [`InOut`]).
//!
//! The rules (the [guide's chapter](../../adaptive_kernel/guide/resident/index.html)
//! tells the story):
//!
//! * A `Resident<T>` owns its data (`f32`, `i32` or `u32`). It has no `Deref` to
//!   a slice: the host reads it with [`host`](Resident::host) and writes it with
//!   [`host_mut`](Resident::host_mut), and kernels take it through their
//!   `k::resident(..)` entry, which accepts a handle or a plain slice for each
//!   slice parameter. (A handle that dereferenced to `&[T]` would be
//!   dereferenced at every kernel call, where it cannot tell a kernel argument
//!   from a host read, so it would have to download the device's copy each time.)
//! * A host read after a GPU write sees the GPU's result: `host()` downloads
//!   the device's copy first when it is newer, and only then. A GPU call after
//!   a host write sees the host's data: `host_mut()` marks the device's copy
//!   stale, and the next GPU call uploads it, once.
//! * A kernel called through `k::resident` on data already on the device
//!   uploads nothing for it, and leaves what it writes there; a call the router
//!   sends to a CPU variant downloads the device's copy first (and the router's
//!   cost model counts that download against the CPU variants).
//! * Dropping a handle frees its device buffer once the device no longer uses
//!   it (wgpu defers the release); it never waits and never downloads.
//! * When the GPU fails while it still answers, the device's copies are read
//!   back before it is declared failed, and the data is intact; later calls run
//!   on the CPU. A device that is truly lost cannot be read: data only it held is
//!   reported lost ([`DataLost`]), never read stale.
//!
//! A `Resident` is `Send` but not `Sync`: its host accessors take `&self` and
//! may download into host memory, which is sound only while no other thread can
//! hold a slice of it.

use std::cell::{Cell, UnsafeCell};
use std::fmt;
use std::sync::Arc;

use crate::cost::Transfers;
use crate::ops::gpu::loops::Elem;
pub use crate::ops::gpu::residency::DataLost;
use crate::ops::gpu::residency::{DeviceCopy, Scope as Regions};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

/// An element type a [`Resident`] can keep on the device: `f32`, `i32` or `u32`
/// (4 bytes, as a GPU variant's shader holds them). Sealed.
pub trait Element: sealed::Sealed + bytemuck::Pod + Send + 'static {
    /// How a generated loop's shader binds it.
    #[doc(hidden)]
    const ELEM: Elem;
}

impl Element for f32 {
    const ELEM: Elem = Elem::F32;
}
impl Element for i32 {
    const ELEM: Elem = Elem::I32;
}
impl Element for u32 {
    const ELEM: Elem = Elem::U32;
}

/// Where a [`Resident`]'s current data is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// In host memory only (the device has no copy, or a stale one): the next GPU call uploads it.
    Host,
    /// On both: host reads and GPU calls move nothing.
    Both,
    /// On the device only (a GPU call wrote it): the next host read downloads it.
    Device,
    /// The device was lost while it held the only current copy ([`DataLost`]).
    Lost,
}

/// An array kept on the GPU between calls of annotated kernels, and in host memory.
///
/// ```
/// # use adaptive_kernel_runtime as adaptive_kernel;
/// use adaptive_kernel::resident::{Residence, Resident};
/// let mut grid = Resident::new(vec![0.0f32; 1024]);
/// grid.host_mut()[0] = 1.0; // a host write: the device's copy, if any, is now stale
/// assert_eq!(grid.host()[0], 1.0); // a host read: downloads only when the device's copy is newer
/// assert_eq!(grid.residence(), Residence::Host);
/// // Kernels take it through their `k::resident(..)` entry: `jacobi::resident(&grid, &mut next, 32)`.
/// let data: Vec<f32> = grid.into_vec();
/// assert_eq!(data.len(), 1024);
/// ```
///
/// See the [module docs](self) for the rules.
pub struct Resident<T> {
    /// Host memory. Written through `&self` only by a download, when the device's copy is
    /// newer: no slice of it is borrowed then (see [`Resident::try_host`]).
    host: UnsafeCell<Vec<T>>,
    copy: Arc<DeviceCopy>,
    /// Calls in progress that hold a view of host memory (`k::resident` with `&handle`).
    in_calls: Cell<u32>,
}

// SAFETY: the handle owns its host memory and its device state (an `Arc` of a `Send +
// Sync` state); moving it to another thread moves all of it. It is not `Sync`
// (`UnsafeCell`, `Cell`): every `&self` access is on the thread that owns it.
unsafe impl<T: Send> Send for Resident<T> {}

impl<T: Element> Resident<T> {
    /// A handle owning `data`, current in host memory; nothing is uploaded until a
    /// GPU call uses it.
    pub fn new(data: Vec<T>) -> Resident<T> {
        let copy = DeviceCopy::new(data.len(), T::ELEM);
        Resident { host: UnsafeCell::new(data), copy, in_calls: Cell::new(0) }
    }

    /// A handle owning a copy of `data`.
    pub fn from_slice(data: &[T]) -> Resident<T> {
        Resident::new(data.to_vec())
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.copy.words
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.copy.words == 0
    }

    /// Where the current data is.
    pub fn residence(&self) -> Residence {
        if self.copy.is_lost() {
            Residence::Lost
        } else if self.copy.device_newer() {
            Residence::Device
        } else if self.copy.on_device() {
            Residence::Both
        } else {
            Residence::Host
        }
    }

    /// The data, for reading on the host: downloads the device's copy first when it is
    /// newer (once: then both copies are current).
    ///
    /// # Panics
    /// When the device was lost while it held the only current copy (see
    /// [`try_host`](Self::try_host)), and when called from inside a kernel call that
    /// was given this handle (the call holds a view of host memory the download would
    /// write).
    #[track_caller]
    pub fn host(&self) -> &[T] {
        self.try_host().unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`host`](Self::host), or why the data cannot be read.
    pub fn try_host(&self) -> Result<&[T], DataLost> {
        self.copy.make_host_current(|words| {
            assert!(
                self.in_calls.get() == 0,
                "a resident handle was read on the host from inside a kernel call that was given it"
            );
            // SAFETY: host memory is written here only while the device's copy is newer. The
            // device's copy becomes newer only in a GPU call given `&mut Resident` (an
            // `InOut`), which no `&[T]` borrowed from `host()` can outlive, and it stops being
            // newer here, before any slice is handed out; a call given `&Resident` (`in_calls`)
            // holds a view, checked above. The handle is not `Sync`, so no other thread holds
            // a slice either.
            let host = unsafe { &mut *self.host.get() };
            bytemuck::cast_slice_mut::<T, u32>(host).copy_from_slice(words);
        })?;
        // SAFETY: nothing writes host memory while a shared borrow of the handle lives
        // (see above); the borrow returned is tied to `&self`.
        Ok(unsafe { (*self.host.get()).as_slice() })
    }

    /// The data, for writing on the host: downloads the device's copy first when it is
    /// newer, and marks the device's copy stale (the next GPU call uploads the data).
    ///
    /// # Panics
    /// When the device was lost while it held the only current copy (see [`try_host`](Self::try_host)).
    #[track_caller]
    pub fn host_mut(&mut self) -> &mut [T] {
        self.try_host_mut().unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`host_mut`](Self::host_mut), or why the data cannot be read.
    pub fn try_host_mut(&mut self) -> Result<&mut [T], DataLost> {
        let host = self.host.get_mut();
        self.copy.make_host_current(|words| bytemuck::cast_slice_mut::<T, u32>(host).copy_from_slice(words))?;
        self.copy.host_written();
        Ok(self.host.get_mut().as_mut_slice())
    }

    /// The data as a vector (downloaded first when the device's copy is newer).
    ///
    /// # Panics
    /// As [`host`](Self::host).
    #[track_caller]
    pub fn into_vec(mut self) -> Vec<T> {
        self.host_mut();
        std::mem::take(self.host.get_mut())
    }

    /// Registers the handle for a GPU call and returns its host memory as it is (possibly stale).
    ///
    /// # Safety
    /// The view may hold stale data: it must only be passed to a kernel's generated GPU
    /// variant while `scope` lives (whose loops use the device's copy and make host memory
    /// current before the host reads it).
    unsafe fn device_view(&self, scope: &mut Scope) -> &[T] {
        self.in_calls.set(self.in_calls.get() + 1);
        let view = (*self.host.get()).as_slice();
        scope.regions.add(view.as_ptr() as usize, view.len(), self.copy.clone());
        scope.calls.push(self.in_calls_ptr());
        view
    }

    fn in_calls_ptr(&self) -> *const Cell<u32> {
        &self.in_calls
    }
}

impl<T: Element> From<Vec<T>> for Resident<T> {
    fn from(data: Vec<T>) -> Resident<T> {
        Resident::new(data)
    }
}

impl<T: Element> Clone for Resident<T> {
    /// A handle with a copy of the current data, in host memory (downloaded first when needed).
    ///
    /// # Panics
    /// As [`host`](Resident::host).
    fn clone(&self) -> Resident<T> {
        Resident::from_slice(self.host())
    }
}

impl<T: Element> fmt::Debug for Resident<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resident").field("len", &self.len()).field("residence", &self.residence()).finish()
    }
}

impl<T: Element> Default for Resident<T> {
    fn default() -> Resident<T> {
        Resident::new(Vec::new())
    }
}

/// A slice argument of a kernel's `k::resident` entry, read-only: plain data or a
/// [`Resident`] handle. Made by `.into()` from `&[T]`, `&Vec<T>`, `&[T; N]`,
/// `&Resident<T>` or `&mut Resident<T>`.
pub enum In<'a, T> {
    /// Host data: uploaded for a GPU call, as by the routed function.
    Host(&'a [T]),
    /// Data kept on the device.
    Resident(&'a Resident<T>),
}

/// A slice argument of a kernel's `k::resident` entry that the kernel may write:
/// plain data or a [`Resident`] handle. Made by `.into()` from `&mut [T]`,
/// `&mut Vec<T>`, `&mut [T; N]` or `&mut Resident<T>`.
pub enum InOut<'a, T> {
    /// Host data: uploaded for a GPU call and read back after it.
    Host(&'a mut [T]),
    /// Data kept on the device: a GPU call leaves what it writes there.
    Resident(&'a mut Resident<T>),
}

impl<T: Element> fmt::Debug for In<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            In::Host(s) => f.debug_tuple("Host").field(&s.len()).finish(),
            In::Resident(r) => f.debug_tuple("Resident").field(r).finish(),
        }
    }
}

impl<T: Element> fmt::Debug for InOut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InOut::Host(s) => f.debug_tuple("Host").field(&s.len()).finish(),
            InOut::Resident(r) => f.debug_tuple("Resident").field(r).finish(),
        }
    }
}

impl<'a, T: Element> In<'a, T> {
    /// The number of elements (without moving any data).
    pub fn len(&self) -> usize {
        match self {
            In::Host(s) => s.len(),
            In::Resident(r) => r.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The data, current in host memory (a resident handle's device copy is downloaded
    /// first when it is newer): what a CPU variant is given.
    ///
    /// # Panics
    /// As [`Resident::host`].
    #[track_caller]
    pub fn host(&self) -> &'a [T] {
        match self {
            In::Host(s) => s,
            In::Resident(r) => r.host(),
        }
    }
}

impl<T: Element> InOut<'_, T> {
    /// The number of elements (without moving any data).
    pub fn len(&self) -> usize {
        match self {
            InOut::Host(s) => s.len(),
            InOut::Resident(r) => r.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The data, current in host memory, for writing (a resident handle's device copy is
    /// downloaded first when it is newer, then marked stale): what a CPU variant is given.
    ///
    /// # Panics
    /// As [`Resident::host_mut`].
    #[track_caller]
    pub fn host_mut(&mut self) -> &mut [T] {
        match self {
            InOut::Host(s) => s,
            InOut::Resident(r) => r.host_mut(),
        }
    }
}

impl<'a, T> From<&'a [T]> for In<'a, T> {
    fn from(s: &'a [T]) -> Self {
        In::Host(s)
    }
}
impl<'a, T> From<&'a mut [T]> for In<'a, T> {
    fn from(s: &'a mut [T]) -> Self {
        In::Host(s)
    }
}
impl<'a, T> From<&'a Vec<T>> for In<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        In::Host(s)
    }
}
impl<'a, T, const N: usize> From<&'a [T; N]> for In<'a, T> {
    fn from(s: &'a [T; N]) -> Self {
        In::Host(s)
    }
}
impl<'a, T> From<&'a Resident<T>> for In<'a, T> {
    fn from(r: &'a Resident<T>) -> Self {
        In::Resident(r)
    }
}
impl<'a, T> From<&'a mut Resident<T>> for In<'a, T> {
    fn from(r: &'a mut Resident<T>) -> Self {
        In::Resident(r)
    }
}
impl<'a, T> From<&'a mut [T]> for InOut<'a, T> {
    fn from(s: &'a mut [T]) -> Self {
        InOut::Host(s)
    }
}
impl<'a, T> From<&'a mut Vec<T>> for InOut<'a, T> {
    fn from(s: &'a mut Vec<T>) -> Self {
        InOut::Host(s)
    }
}
impl<'a, T, const N: usize> From<&'a mut [T; N]> for InOut<'a, T> {
    fn from(s: &'a mut [T; N]) -> Self {
        InOut::Host(s)
    }
}
impl<'a, T> From<&'a mut Resident<T>> for InOut<'a, T> {
    fn from(r: &'a mut Resident<T>) -> Self {
        InOut::Resident(r)
    }
}

/// What a `k::resident` call's argument would move, for the router's cost model
/// ([`transfers`]). Implemented by [`In`] and [`InOut`]. Not a public API.
#[doc(hidden)]
pub trait Placed {
    /// Bytes a GPU run of the call moves for this argument; `host_data`: the GPU
    /// variant reads it on the host too (it is made current first).
    fn gpu_bytes(&self, host_data: bool) -> u64;
    /// Bytes a CPU run downloads for it first.
    fn cpu_bytes(&self) -> u64;
}

fn bytes(len: usize) -> u64 {
    len as u64 * 4
}

impl<T: Element> Placed for In<'_, T> {
    fn gpu_bytes(&self, host_data: bool) -> u64 {
        match self {
            In::Host(s) => bytes(s.len()),
            In::Resident(r) => {
                let sync = if host_data { r.copy_newer_bytes() } else { 0 };
                sync + if r.copy.on_device() { 0 } else { bytes(r.len()) }
            }
        }
    }

    fn cpu_bytes(&self) -> u64 {
        match self {
            In::Host(_) => 0,
            In::Resident(r) => r.copy_newer_bytes(),
        }
    }
}

impl<T: Element> Placed for InOut<'_, T> {
    fn gpu_bytes(&self, host_data: bool) -> u64 {
        match self {
            InOut::Host(s) => 2 * bytes(s.len()),
            InOut::Resident(r) if host_data => r.copy_newer_bytes() + bytes(r.len()),
            InOut::Resident(r) => {
                if r.copy.on_device() {
                    0
                } else {
                    bytes(r.len())
                }
            }
        }
    }

    fn cpu_bytes(&self) -> u64 {
        match self {
            InOut::Host(_) => 0,
            InOut::Resident(r) => r.copy_newer_bytes(),
        }
    }
}

impl<T: Element> Resident<T> {
    /// Bytes a host read would download now.
    fn copy_newer_bytes(&self) -> u64 {
        if self.copy.device_newer() {
            bytes(self.len())
        } else {
            0
        }
    }
}

/// The transfers a `k::resident` call of these arguments would make, by where it runs;
/// each with whether the GPU variant also reads it on the host. Not a public API.
#[doc(hidden)]
pub fn transfers(args: &[(&dyn Placed, bool)]) -> Transfers {
    args.iter().fold(Transfers::default(), |t, &(a, host_data)| Transfers {
        gpu: t.gpu.saturating_add(a.gpu_bytes(host_data)),
        cpu: t.cpu.saturating_add(a.cpu_bytes()),
    })
}

/// A `k::resident` call's GPU run in progress: the handles it was given, registered
/// (by host address) for the GPU variant's loops on this thread until dropped. Not a
/// public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Scope {
    regions: Regions,
    /// The `in_calls` counters of the `&Resident` handles given, decremented on drop.
    calls: Vec<*const Cell<u32>>,
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

impl Scope {
    /// A scope with no handle yet.
    pub fn new() -> Scope {
        Scope { regions: Regions::new(), calls: Vec::new() }
    }

    /// The read-only argument `arg` as the GPU variant takes it. `host_data`: the GPU
    /// variant reads it on the host too, so a resident handle is made current in host
    /// memory first.
    ///
    /// # Safety
    /// The slice returned may hold stale data: pass it only to the kernel's generated
    /// GPU variant, called while this scope lives, and drop the scope after that call.
    #[track_caller]
    pub unsafe fn read<'s, T: Element>(&mut self, arg: &'s In<'_, T>, host_data: bool) -> &'s [T] {
        match arg {
            In::Host(s) => s,
            In::Resident(r) => {
                if host_data {
                    r.host();
                }
                r.device_view(self)
            }
        }
    }

    /// The argument `arg`, which the kernel may write, as the GPU variant takes it.
    /// `host_data`: the GPU variant reads or writes it on the host too, so a resident
    /// handle is made current in host memory first (and its device copy marked stale).
    ///
    /// # Safety
    /// As [`read`](Self::read).
    #[track_caller]
    pub unsafe fn write<'s, T: Element>(&mut self, arg: &'s mut InOut<'_, T>, host_data: bool) -> &'s mut [T] {
        match arg {
            InOut::Host(s) => s,
            InOut::Resident(r) => {
                if host_data {
                    r.host_mut();
                }
                let view = r.host.get_mut().as_mut_slice();
                self.regions.add(view.as_ptr() as usize, view.len(), r.copy.clone());
                view
            }
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        for &c in &self.calls {
            // SAFETY: each pointer is the `in_calls` of a handle borrowed (`&Resident`) by an
            // argument that outlives this scope (`read`'s contract: the scope is dropped after
            // the call, while the arguments still live).
            let c = unsafe { &*c };
            c.set(c.get() - 1);
        }
    }
}
