//! Named and elided lifetimes, bounds and `where` clauses pass through to every variant.
#![deny(warnings)]

use adaptive_kernel::adaptive_kernel;

#[adaptive_kernel(complexity = "Low")]
fn largest<'a>(x: &'a [f32]) -> &'a f32 {
    x.iter().fold(&x[0], |m, v| if v > m { v } else { m })
}

#[adaptive_kernel(complexity = "Low")]
fn first(x: &[f32]) -> &f32 {
    &x[0]
}

#[adaptive_kernel(complexity = "Medium")]
fn pick<'a, 'b: 'a>(a: &'a [f32], b: &'b [f32]) -> &'a [f32]
where
    'b: 'a,
{
    if a.len() >= b.len() {
        a
    } else {
        b
    }
}

#[adaptive_kernel(complexity = "Low", size = words.len())]
fn longest<'s>(words: &[&'s str]) -> Option<&'s str> {
    words.iter().copied().max_by_key(|w| w.len())
}

fn main() {
    let x = [1.0_f32, 5.0, 3.0];
    assert_eq!(*largest(&x), 5.0);
    assert_eq!(*largest::simd(&x), 5.0);
    assert_eq!(*first(&x), 1.0);
    assert_eq!(pick(&x, &x[..1]), &x[..]);
    assert_eq!(longest(&["a", "abc", "ab"]), Some("abc"));
}
