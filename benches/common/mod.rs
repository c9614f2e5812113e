//! Inputs the benches share: a fixed-seed xorshift stream, so every run of a
//! bench measures the same data.

/// A xorshift32 generator of uniform `f32` values.
pub(crate) struct Xorshift(u32);

impl Xorshift {
    /// The stream for `seed` (any value, 0 included).
    pub(crate) fn new(seed: u32) -> Xorshift {
        Xorshift(seed.wrapping_mul(0x9E37_79B9) | 1)
    }

    /// `n` values uniform in [`lo`, `hi`), on a grid of 2⁻²⁴ of the range: finite, no denormals.
    pub(crate) fn uniform(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 17;
                self.0 ^= self.0 << 5;
                lo + (self.0 >> 8) as f32 / (1u32 << 24) as f32 * (hi - lo)
            })
            .collect()
    }
}
