//! The buffer pool: device buffers are expensive to create (on lavapipe a
//! 1 MiB storage buffer costs about as much as the dispatch that uses it), so
//! every op call takes its buffers from here and gives them back afterwards.
//!
//! Buffers are kept per kind (storage, readback staging, uniform) and size
//! class. Classes step by quarter powers of two (256 B, 320 B, 384 B, 448 B,
//! 512 B, 640 B, …), so a buffer wastes at most a quarter of its size and
//! nearby sizes share buffers. The pool is bounded: at most
//! [`PER_CLASS`] idle buffers per class and [`CACHED_BYTES`] bytes in all; a
//! buffer given back beyond that is dropped (freed by wgpu).
//!
//! The pool lives inside the device's execution lock, so it needs no lock of
//! its own.

use std::collections::HashMap;
use std::sync::mpsc;

use trueno::backends::gpu::wgpu;

/// At most this many idle buffers are kept per (kind, size class).
pub(super) const PER_CLASS: usize = 4;

/// At most this many bytes of idle buffers are kept in all.
pub(super) const CACHED_BYTES: u64 = 384 << 20;

/// The smallest buffer the pool creates.
const MIN_CLASS: u64 = 256;

/// What a buffer is for; each kind has its own usages and its own free lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    /// Inputs, outputs and partials of kernels (`STORAGE | COPY_SRC | COPY_DST`).
    Storage,
    /// Where results are copied to be mapped and read (`MAP_READ | COPY_DST`).
    Readback,
    /// Per-dispatch parameters (`UNIFORM | COPY_DST`).
    Uniform,
}

impl Kind {
    fn usage(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            Kind::Storage => U::STORAGE | U::COPY_SRC | U::COPY_DST,
            Kind::Readback => U::MAP_READ | U::COPY_DST,
            Kind::Uniform => U::UNIFORM | U::COPY_DST,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Storage => "adaptive-kernel storage",
            Kind::Readback => "adaptive-kernel readback",
            Kind::Uniform => "adaptive-kernel params",
        }
    }
}

/// The size a request of `bytes` is rounded up to: at least 256 B, then the
/// next quarter step of a power of two. Never above `max_buffer` (a request
/// that fits the device but whose class would not gets its exact size,
/// rounded up to 4 bytes).
pub(super) fn class_size(bytes: u64, max_buffer: u64) -> u64 {
    let b = bytes.max(MIN_CLASS);
    let p = b.next_power_of_two();
    let class = if p == b { b } else { b.div_ceil(p / 8) * (p / 8) };
    if class <= max_buffer {
        class
    } else {
        bytes.next_multiple_of(4)
    }
}

/// Idle device buffers by (kind, size class).
pub(super) struct BufferPool {
    free: HashMap<(Kind, u64), Vec<wgpu::Buffer>>,
    cached: u64,
    max_buffer: u64,
}

impl BufferPool {
    /// An empty pool for a device whose largest buffer is `max_buffer` bytes.
    pub(super) fn new(max_buffer: u64) -> Self {
        BufferPool { free: HashMap::new(), cached: 0, max_buffer }
    }

    /// A buffer of `kind` holding at least `bytes` bytes: an idle one of the
    /// right class, or a new one. The caller checks `bytes` against the
    /// device's `max_buffer_size` first; creation errors (out of memory) are
    /// reported through the device's error scopes.
    pub(super) fn take(&mut self, device: &wgpu::Device, kind: Kind, bytes: u64) -> wgpu::Buffer {
        let size = class_size(bytes, self.max_buffer);
        if let Some(buffer) = self.free.get_mut(&(kind, size)).and_then(Vec::pop) {
            self.cached -= size;
            return buffer;
        }
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(kind.label()),
            size,
            usage: kind.usage(),
            mapped_at_creation: false,
        })
    }

    /// Returns a buffer taken with [`take`](Self::take); it is dropped instead
    /// when its class or the pool is full.
    pub(super) fn give(&mut self, kind: Kind, buffer: wgpu::Buffer) {
        let size = buffer.size();
        if self.cached + size > CACHED_BYTES {
            return;
        }
        let list = self.free.entry((kind, size)).or_default();
        if list.len() < PER_CLASS {
            list.push(buffer);
            self.cached += size;
        }
    }
}

/// Waits for submission `index`, maps the first `bytes` of `staging` and hands them to `read`;
/// the error says what failed (the caller makes it a device error).
pub(super) fn map_read(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
    bytes: u64,
    index: wgpu::SubmissionIndex,
    read: impl FnOnce(&[u8]),
) -> Result<(), String> {
    let slice = staging.slice(..bytes);
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        // The receiver outlives the poll below; a send can only fail after an
        // earlier error return, when nobody waits for it any more.
        let _ = tx.send(result);
    });
    device
        .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
        .map_err(|e| format!("waiting for the submission failed: {e}"))?;
    match rx.try_recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("mapping the result failed: {e}")),
        Err(_) => return Err("the result was not mapped once its submission finished".into()),
    }
    read(&slice.get_mapped_range());
    staging.unmap();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = 1 << 40;

    #[test]
    fn classes_are_quarter_steps_of_powers_of_two() {
        assert_eq!(class_size(0, BIG), 256);
        assert_eq!(class_size(4, BIG), 256);
        assert_eq!(class_size(256, BIG), 256);
        assert_eq!(class_size(257, BIG), 320);
        assert_eq!(class_size(4000, BIG), 4096);
        assert_eq!(class_size(4100, BIG), 5120);
        assert_eq!(class_size(64 << 20, BIG), 64 << 20);
        assert_eq!(class_size((40 << 20) + 4, BIG), 48 << 20);
        for bytes in (4..1_000_000u64).step_by(4 * 997) {
            let c = class_size(bytes, BIG);
            assert!(c >= bytes && c.is_multiple_of(4), "{bytes} -> {c}");
            assert!(c <= MIN_CLASS || c * 4 <= bytes.max(MIN_CLASS) * 5, "{bytes} -> {c} wastes over a quarter");
        }
    }

    #[test]
    fn a_class_above_the_device_limit_falls_back_to_the_exact_size() {
        assert_eq!(class_size(1000, 1024), 1024);
        assert_eq!(class_size(1000, 1000), 1000);
        assert_eq!(class_size(998, 1000), 1000);
    }
}
