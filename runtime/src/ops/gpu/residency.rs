//! Data kept on the device between calls: the device side of a
//! [`Resident`](crate::resident::Resident) handle ([`DeviceCopy`]: which copy
//! is current, and the device buffer), the calls in progress that may use it
//! ([`Scope`]: a thread's resident regions, by host address), and what happens
//! to it when the device fails (the rescue).
//!
//! # Coherence
//! A handle's data lives in host memory and, once a GPU variant used it, in a
//! device buffer. [`Coherence`] says which is current: `Host` (the device copy,
//! if any, is stale), `Both`, or `Device` (a GPU variant wrote it; the host
//! memory is stale). Only two things change it: the handle's host accessors
//! (which download first when the device is newer, and mark the host newer when
//! they hand out `&mut`), and a GPU variant's group of loops, which binds the
//! device copy (uploading it first when the host is newer) and, when a loop
//! wrote it, makes its result the device copy (`Device`).
//!
//! # Failures
//! The device is never the only keeper of data the runtime could still read
//! back: when a call on the device fails while the device still answers (out of
//! memory, a validation error, a failed mapping), every `Device` copy is read
//! back first, in one submission, into the handle ([`Coherence::Rescued`]), and
//! only then is the GPU declared failed; later accesses take the data from
//! there. A device that is truly lost (a driver reset; `GpuFault::DeviceLost` in
//! tests) cannot be read: data only it held is [`Coherence::Lost`], and every
//! later access to it says so (`DataLost`) rather than compute on the stale host
//! copy. The host copy is never freed, so data the device never changed is
//! always intact.
//!
//! # Locks
//! A copy's state is behind its own mutex. Code that also needs the device takes
//! the device's lock first (inside `device::run`), then the copy's: the batch of
//! a GPU variant's loops, the downloads here and the rescue all do.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::loops::Elem;

/// Which copy of a handle's data is current.
#[derive(Debug)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) enum Coherence {
    /// Host memory; a device buffer, if any, is stale.
    Host,
    /// Both copies hold the same data.
    Both,
    /// The device buffer; host memory is stale.
    Device,
    /// The device failed after its copy was read back here (host memory is stale).
    Rescued(Vec<u32>),
    /// The device was lost while it held the only current copy.
    Lost(String),
}

/// The state behind a [`DeviceCopy`]'s lock.
#[derive(Debug)]
pub(crate) struct CopyState {
    pub(crate) coherence: Coherence,
    /// The device buffer: `words` 4-byte elements (its size may be larger: pooled classes).
    #[cfg(feature = "gpu")]
    pub(crate) buffer: Option<trueno::backends::gpu::wgpu::Buffer>,
}

/// The device side of a resident handle of `words` 4-byte elements of type `elem`.
#[derive(Debug)]
pub(crate) struct DeviceCopy {
    pub(crate) words: usize,
    pub(crate) elem: Elem,
    state: Mutex<CopyState>,
}

/// Why a handle's data cannot be read: the device held the only current copy and was lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLost {
    /// What happened to the device.
    pub reason: String,
}

impl std::fmt::Display for DataLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the GPU held the only current copy of this resident data and was lost ({}); the data cannot be \
             recovered. Keep a host copy of data that must survive a device reset (read it with `host()` now and \
             then), or recompute it",
            self.reason
        )
    }
}

impl std::error::Error for DataLost {}

impl DeviceCopy {
    /// A copy of `words` elements whose host memory is current.
    pub(crate) fn new(words: usize, elem: Elem) -> Arc<DeviceCopy> {
        let state = CopyState {
            coherence: Coherence::Host,
            #[cfg(feature = "gpu")]
            buffer: None,
        };
        Arc::new(DeviceCopy { words, elem, state: Mutex::new(state) })
    }

    /// The state, locked (take the device's lock first when both are needed).
    pub(crate) fn lock(&self) -> MutexGuard<'_, CopyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes host memory current: downloads the device's copy into `host` (through
    /// `host`, called under the lock and only when something must be written), or
    /// copies the rescued data. `Ok(true)` when host memory was written.
    pub(crate) fn make_host_current(&self, host: impl FnOnce(&[u32])) -> Result<bool, DataLost> {
        let mut host = Some(host);
        loop {
            {
                let mut st = self.lock();
                match &st.coherence {
                    Coherence::Host | Coherence::Both => return Ok(false),
                    Coherence::Lost(reason) => return Err(DataLost { reason: reason.clone() }),
                    Coherence::Rescued(words) => {
                        (host.take().expect("written once"))(words);
                        st.coherence = Coherence::Host;
                        return Ok(true);
                    }
                    Coherence::Device => {}
                }
            }
            // The device's copy is newer: download it (the device's lock first, then ours).
            match self.download() {
                Download::Done(words) => {
                    let mut st = self.lock();
                    if matches!(st.coherence, Coherence::Device) {
                        (host.take().expect("written once"))(&words);
                        st.coherence = Coherence::Both;
                        return Ok(true);
                    }
                    // Changed meanwhile (rescued by a failing call): look again.
                }
                Download::Changed => {}
                Download::Lost(reason) => self.lose(reason),
            }
        }
    }

    /// Marks a `Device` copy lost (the device cannot be read).
    fn lose(&self, reason: String) {
        let mut st = self.lock();
        if matches!(st.coherence, Coherence::Device) {
            st.coherence = Coherence::Lost(reason);
        }
    }

    /// The current data when host memory is stale (`None` when host memory is current),
    /// without changing which copy is current: what a loop run on the host reads
    /// through a shared slice it cannot write.
    pub(crate) fn current_words(&self) -> Result<Option<Vec<u32>>, DataLost> {
        loop {
            {
                let st = self.lock();
                match &st.coherence {
                    Coherence::Host | Coherence::Both => return Ok(None),
                    Coherence::Lost(reason) => return Err(DataLost { reason: reason.clone() }),
                    Coherence::Rescued(words) => return Ok(Some(words.clone())),
                    Coherence::Device => {}
                }
            }
            match self.download() {
                Download::Done(words) => return Ok(Some(words)),
                Download::Changed => {}
                Download::Lost(reason) => self.lose(reason),
            }
        }
    }

    /// Marks host memory as written: the device copy (kept for reuse) is stale.
    pub(crate) fn host_written(&self) {
        let mut st = self.lock();
        if !matches!(st.coherence, Coherence::Lost(_)) {
            st.coherence = Coherence::Host;
        }
    }

    /// Whether the device was lost while it held the only current copy.
    pub(crate) fn is_lost(&self) -> bool {
        matches!(self.lock().coherence, Coherence::Lost(_))
    }

    /// Whether the device holds data newer than host memory (also when it was rescued or lost).
    pub(crate) fn device_newer(&self) -> bool {
        matches!(self.lock().coherence, Coherence::Device | Coherence::Rescued(_) | Coherence::Lost(_))
    }

    /// Whether the device holds a current copy (so a GPU run uploads nothing for it).
    pub(crate) fn on_device(&self) -> bool {
        matches!(self.lock().coherence, Coherence::Device | Coherence::Both)
    }

    fn download(&self) -> Download {
        #[cfg(feature = "gpu")]
        return device::download(self);
        #[cfg(not(feature = "gpu"))]
        return Download::Lost("built without the `gpu` feature".into());
    }
}

/// The outcome of downloading a copy.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
enum Download {
    /// The device copy's data.
    Done(Vec<u32>),
    /// The device copy was no longer the newer one (rescued meanwhile): look again.
    Changed,
    /// The device cannot be read.
    Lost(String),
}

/// One resident region of a call in progress: a handle's host memory, by address.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    addr: usize,
    len: usize,
    pub(crate) copy: Arc<DeviceCopy>,
}

thread_local! {
    /// The resident regions of the calls in progress on this thread, innermost last.
    static REGIONS: RefCell<Vec<Region>> = const { RefCell::new(Vec::new()) };
}

/// The resident handle whose host memory is exactly `len` elements of type `elem` at
/// `addr`, if a call in progress on this thread passed one.
pub(crate) fn lookup(addr: usize, len: usize, elem: Elem) -> Option<Arc<DeviceCopy>> {
    if len == 0 {
        return None;
    }
    REGIONS.with(|r| {
        let r = r.borrow();
        r.iter().rev().find(|g| g.addr == addr && g.len == len && g.copy.elem == elem).map(|g| g.copy.clone())
    })
}

/// Whether a call on this thread has resident regions (the fast check before a lookup).
pub(crate) fn active() -> bool {
    REGIONS.with(|r| !r.borrow().is_empty())
}

/// When the `len` elements at `addr` are a resident handle's host memory (of a call in
/// progress on this thread) and the device's copy is newer, the current data; `None`
/// when that memory is current.
///
/// # Panics
/// When the device was lost while it held the only current copy.
#[track_caller]
pub(crate) fn current(addr: usize, len: usize, elem: Elem) -> Option<Vec<u32>> {
    if !active() {
        return None;
    }
    let copy = lookup(addr, len, elem)?;
    copy.current_words().unwrap_or_else(|e| panic!("{e}"))
}

/// When `host` is a resident handle's host memory (of a call in progress on this
/// thread), makes it current and marks the device's copy stale: the host is about to
/// use it.
///
/// # Panics
/// When the device was lost while it held the only current copy.
#[track_caller]
pub(crate) fn sync(host: &mut [u32], elem: Elem) {
    if !active() {
        return;
    }
    let Some(copy) = lookup(host.as_ptr() as usize, host.len(), elem) else { return };
    if let Err(e) = copy.make_host_current(|words| host.copy_from_slice(words)) {
        panic!("{e}");
    }
    copy.host_written();
}

/// A call's resident regions, registered for this thread until dropped.
#[derive(Debug)]
pub(crate) struct Scope {
    depth: usize,
    added: usize,
}

impl Scope {
    /// A scope with no region yet.
    pub(crate) fn new() -> Scope {
        Scope { depth: REGIONS.with(|r| r.borrow().len()), added: 0 }
    }

    /// Registers the handle `copy`, whose host memory is `len` elements at `addr`.
    pub(crate) fn add(&mut self, addr: usize, len: usize, copy: Arc<DeviceCopy>) {
        REGIONS.with(|r| r.borrow_mut().push(Region { addr, len, copy }));
        self.added += 1;
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        REGIONS.with(|r| r.borrow_mut().truncate(self.depth));
    }
}

/// Registers `copy` as holding a device buffer, for the rescue (`device::rescue` below,
/// which `device::run` calls before the GPU is declared failed, under the device's lock).
#[cfg(feature = "gpu")]
pub(crate) use device::register;

#[cfg(feature = "gpu")]
mod device {
    use std::sync::{Arc, Mutex, PoisonError, Weak};

    use super::{Coherence, DeviceCopy, Download};
    use crate::ops::gpu::buffers::map_read;
    use crate::ops::gpu::buffers::Kind;
    use crate::ops::gpu::device::{self, Exec, GpuError};
    use crate::ops::gpu::traffic;

    /// Every copy that has had a device buffer (dead ones are dropped as new ones come).
    static LIVE: Mutex<Vec<Weak<DeviceCopy>>> = Mutex::new(Vec::new());

    pub(crate) fn register(copy: &Arc<DeviceCopy>) {
        device::before_failure(rescue);
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|w| w.strong_count() > 0);
        if !live.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(copy))) {
            live.push(Arc::downgrade(copy));
        }
    }

    /// Downloads `copy`'s device buffer (when it is still the newer copy).
    pub(super) fn download(copy: &DeviceCopy) -> Download {
        let words = copy.words;
        let result = device::run("downloading resident data", |exec| {
            let buffer = {
                let st = copy.lock();
                match (&st.coherence, &st.buffer) {
                    (Coherence::Device, Some(b)) => b.clone(),
                    (Coherence::Device, None) => {
                        return Ok(Download::Lost("the device buffer of resident data is missing".into()))
                    }
                    _ => return Ok(Download::Changed),
                }
            };
            let mut data = read_buffers(exec, &[(&buffer, words)])?;
            Ok(Download::Done(data.pop().unwrap_or_default()))
        });
        result.unwrap_or_else(|| {
            Download::Lost(match crate::ops::gpu::health() {
                crate::ops::gpu::GpuHealth::Failed { reason } => reason,
                other => format!("the GPU is not usable: {other}"),
            })
        })
    }

    /// Reads `buffers` (each with its element count) back in one submission.
    pub(in crate::ops::gpu) fn read_buffers(
        exec: &mut Exec<'_>,
        buffers: &[(&trueno::backends::gpu::wgpu::Buffer, usize)],
    ) -> Result<Vec<Vec<u32>>, GpuError> {
        use trueno::backends::gpu::wgpu;
        let total: u64 = buffers.iter().map(|&(_, w)| w as u64 * 4).sum();
        if total == 0 {
            return Ok(buffers.iter().map(|_| Vec::new()).collect());
        }
        let gpu = exec.gpu;
        let staging = exec.state.pool.take(&gpu.device, Kind::Readback, total);
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let mut at = 0;
        for &(b, w) in buffers {
            if w > 0 {
                encoder.copy_buffer_to_buffer(b, 0, &staging, at, w as u64 * 4);
            }
            at += w as u64 * 4;
        }
        let index = gpu.queue.submit([encoder.finish()]);
        traffic::submission();
        let mut out = Vec::with_capacity(buffers.len());
        map_read(&gpu.device, &staging, total, index, |bytes| {
            let words: &[u32] = bytemuck::cast_slice(bytes);
            let mut at = 0;
            for &(_, w) in buffers {
                out.push(words[at..at + w].to_vec());
                at += w;
            }
        })
        .map_err(GpuError::Device)?;
        traffic::down(total);
        exec.state.pool.give(Kind::Readback, staging);
        Ok(out)
    }

    /// Reads back every copy whose device buffer is newer than host memory, before the
    /// GPU is declared failed (see the module docs): every `Device` copy becomes `Rescued` with its data, or
    /// `Lost` when the device cannot be read.
    pub(crate) fn rescue(exec: &mut Exec<'_>, why: &str) {
        let live: Vec<Arc<DeviceCopy>> = {
            let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
            live.iter().filter_map(Weak::upgrade).collect()
        };
        let newer: Vec<(Arc<DeviceCopy>, trueno::backends::gpu::wgpu::Buffer)> = live
            .into_iter()
            .filter_map(|c| {
                let b = {
                    let st = c.lock();
                    match (&st.coherence, &st.buffer) {
                        (Coherence::Device, Some(b)) => Some(b.clone()),
                        _ => None,
                    }
                };
                b.map(|b| (c, b))
            })
            .collect();
        if newer.is_empty() {
            return;
        }
        let buffers: Vec<_> = newer.iter().map(|(c, b)| (b, c.words)).collect();
        match read_buffers(exec, &buffers) {
            Ok(data) => {
                for ((copy, _), words) in newer.iter().zip(data) {
                    let mut st = copy.lock();
                    if matches!(st.coherence, Coherence::Device) {
                        st.coherence = Coherence::Rescued(words);
                        st.buffer = None;
                    }
                }
                tracing::info!(target: "adaptive_kernel", copies = newer.len(), "resident data read back before the GPU was declared failed");
            }
            Err(e) => {
                let reason = format!("{why}; reading the data back failed too: {e:?}");
                for (copy, _) in &newer {
                    let mut st = copy.lock();
                    if matches!(st.coherence, Coherence::Device) {
                        st.coherence = Coherence::Lost(reason.clone());
                        st.buffer = None;
                    }
                }
            }
        }
    }
}

#[cfg(feature = "gpu")]
pub(in crate::ops::gpu) use device::read_buffers;
