//! A `sin` alternative that loses by far at small sizes and wins at large ones, for the
//! routing benches' `sine` kernels (their `simd = path`): a table of 4,096 intervals
//! built on every call (tens of microseconds), then linear interpolation (a cheaper
//! per-element cost than libm's `sin`; error below 1e-6 on the inputs used there).

pub(crate) fn sin_by_table(x: &[f32]) -> Vec<f32> {
    const N: usize = 4096;
    let step = std::f64::consts::TAU / N as f64;
    let table: Vec<f32> = (0..=N).map(|i| (i as f64 * step).sin() as f32).collect();
    let per_unit = (N as f64 / std::f64::consts::TAU) as f32;
    x.iter()
        .map(|&v| {
            let t = v * per_unit;
            let whole = t.floor();
            // N is a power of two: masking the two's-complement index wraps negatives too.
            let i = (whole as i32 & (N as i32 - 1)) as usize;
            table[i] + (table[i + 1] - table[i]) * (t - whole)
        })
        .collect()
}
