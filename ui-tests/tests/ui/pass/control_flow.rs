//! Bodies with `return`, `?`, early exits, closures, labelled loops and `unsafe` blocks.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

#[derive(Debug, PartialEq)]
enum Error {
    NotFinite(usize),
    Parse,
}

impl From<std::num::ParseFloatError> for Error {
    fn from(_: std::num::ParseFloatError) -> Self {
        Error::Parse
    }
}

#[adaptive_kernel(complexity = "Medium")]
fn checked_sum(x: &[f32]) -> Result<f32, Error> {
    if x.is_empty() {
        return Ok(0.0);
    }
    let mut s = 0.0;
    'outer: for (i, v) in x.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::NotFinite(i));
        }
        if *v == 0.0 {
            continue 'outer;
        }
        s += v;
    }
    Ok(s)
}

#[adaptive_kernel(complexity = "Low", size = text.len())]
fn parse_scaled(text: &str, scale: &[f32]) -> Result<f32, Error> {
    let v: f32 = text.trim().parse()?;
    let apply = |f: f32| v * f;
    Ok(scale.iter().copied().map(apply).sum())
}

#[adaptive_kernel(complexity = "Low")]
fn first_raw(x: &[f32]) -> Option<f32> {
    if x.is_empty() {
        return None;
    }
    // SAFETY: `x` is not empty.
    Some(unsafe { *x.as_ptr() })
}

fn main() {
    assert_eq!(checked_sum(&[]), Ok(0.0));
    assert_eq!(checked_sum(&[1.0, 0.0, 2.0]), Ok(3.0));
    assert_eq!(checked_sum::simd(&[1.0, f32::NAN]), Err(Error::NotFinite(1)));
    assert_eq!(parse_scaled(" 2 ", &[1.0, 3.0]), Ok(8.0));
    assert_eq!(parse_scaled::scalar("x", &[1.0]), Err(Error::Parse));
    assert_eq!(first_raw(&[]), None);
    assert_eq!(first_raw::simd(&[5.0]), Some(5.0));
}
