//! Private copies of a scatter target, for the split loops whose iterations
//! update slots of a slice chosen by data (`bins[idx] += 1`, `sums[label * d +
//! j] += x[j]`, `best[k] = best[k].max(v)`): OpenMP's `reduction(+: bins[:n])`.
//!
//! Each chunk of the loop gets a copy of the target of its own, as long as the
//! target and set to the update's identity by the chunk itself (so on its own
//! thread); the chunk's loop updates its copy; after the loop the copies are
//! merged into the target in chunk order, element by element. An integer merge
//! is exact (a sum in any order is the same number, wrapping as the loop's own
//! arithmetic would); a float sum is regrouped within the tolerance contract
//! and, chunks depending only on the range and the thread count, is the same
//! number on every run at a given thread count.
//!
//! The copies of one call lie in one buffer, taken from the calling thread's
//! cache of buffers (one per element type, up to [`KEEP_BYTES`]) and put back
//! after the merge, so a warm call of a size seen before allocates nothing of
//! its own. The generated code:
//!
//! ```text
//! let len = bins.len();
//! let mut buffer = private_buffer();                         // from the cache
//! let copies = private_parts(&mut buffer, len, bounds.len()); // one `&mut [T]` per chunk
//! // ... each chunk: `copy.fill(identity)`, then its loop with `bins` renamed to `copy`
//! merge_private(&mut bins[..], &buffer, len, |b, c| *b += *c);
//! keep_buffer(buffer);                                         // back into the cache
//! ```

use std::any::Any;
use std::cell::RefCell;

/// The largest buffer a thread keeps for its next call, in bytes: a larger one is freed.
pub const KEEP_BYTES: usize = 64 << 20;

thread_local! {
    /// Buffers kept for the next call, at most one per element type.
    static CACHE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer for private copies of `T`: the one this thread kept from an earlier call
/// (holding whatever that call left), else an empty one.
pub fn private_buffer<T: Copy + 'static>() -> Vec<T> {
    let kept = CACHE.with(|c| {
        let mut cache = c.try_borrow_mut().ok()?;
        let at = cache.iter().position(|b| b.is::<Vec<T>>())?;
        cache.swap_remove(at).downcast::<Vec<T>>().ok()
    });
    kept.map(|b| *b).unwrap_or_default()
}

/// `chunks` copies of `len` elements each, cut from `buffer` (grown where it is too
/// short, with copies of an element it holds or of `T::default()`): one `&mut [T]` per
/// chunk, in chunk order. What they hold is unspecified until each chunk sets its own.
pub fn private_parts<T: Copy + Default>(buffer: &mut Vec<T>, len: usize, chunks: usize) -> Vec<&mut [T]> {
    let need = len.saturating_mul(chunks);
    if buffer.len() < need {
        buffer.resize(need, T::default());
    }
    if len == 0 {
        // `chunks_mut(0)` panics: each chunk gets an empty copy.
        return (0..chunks).map(|_| <&mut [T]>::default()).collect();
    }
    buffer[..need].chunks_mut(len).collect()
}

/// Merges the copies in `buffer` (as [`private_parts`] cut them, `len` elements each)
/// into `target`, in chunk order: `merge(&mut target[k], &copy[k])` for each copy and
/// element. `buffer` holds whole copies only up to the number of chunks the call had:
/// the caller passes exactly that many elements' worth.
pub fn merge_private<T>(target: &mut [T], buffer: &[T], len: usize, chunks: usize, merge: impl Fn(&mut T, &T)) {
    if len == 0 {
        return;
    }
    for copy in buffer[..len * chunks].chunks_exact(len) {
        for (t, c) in target.iter_mut().zip(copy) {
            merge(t, c);
        }
    }
}

/// Puts `buffer` back into this thread's cache for the next call, unless it is larger
/// than [`KEEP_BYTES`].
pub fn keep_buffer<T: 'static>(buffer: Vec<T>) {
    if buffer.capacity().saturating_mul(size_of::<T>()) > KEEP_BYTES {
        return;
    }
    CACHE.with(|c| {
        if let Ok(mut cache) = c.try_borrow_mut() {
            cache.retain(|b| !b.is::<Vec<T>>());
            cache.push(Box::new(buffer));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_cut_per_chunk_and_merged_in_chunk_order() {
        let mut buffer = private_buffer::<u32>();
        let parts = private_parts(&mut buffer, 3, 2);
        assert_eq!(parts.len(), 2);
        for (c, part) in parts.into_iter().enumerate() {
            part.fill(0);
            part[c] += 5;
            part[2] += 1;
        }
        let mut target = vec![1u32, 1, 1];
        merge_private(&mut target, &buffer, 3, 2, |t, c| *t += *c);
        assert_eq!(target, [6, 6, 3]);
        assert!(private_parts(&mut buffer, 0, 3).iter().all(|p| p.is_empty()));
    }

    #[test]
    fn a_buffer_is_kept_for_the_next_call_of_its_type() {
        let mut buffer = private_buffer::<f64>();
        let _ = private_parts(&mut buffer, 100, 4);
        let at = buffer.as_ptr();
        keep_buffer(buffer);
        assert!(private_buffer::<u8>().is_empty(), "another type's buffer is its own");
        let again = private_buffer::<f64>();
        assert_eq!(again.as_ptr(), at, "the same allocation");
        assert!(again.len() >= 400);
        assert!(private_buffer::<f64>().is_empty(), "taken: the cache holds none now");
        keep_buffer(vec![0u8; KEEP_BYTES + 1]);
        assert!(private_buffer::<u8>().is_empty(), "too large to keep");
    }
}
