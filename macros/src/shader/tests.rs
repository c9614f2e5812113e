//! Which top-level loops the GPU variant runs on the device and which it
//! leaves on the host, with their words, and what the shader says for each
//! construct. That the shaders validate and compute what the loops compute is
//! `tests/gpu_loops.rs` (on lavapipe); that each shape compiles in a user's
//! crate is the trybuild pass cases.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::*;

/// The words of `f`'s top-level loops (`gpu` for one on the GPU), its GPU body and its shaders.
fn gpu(f: TokenStream) -> (Vec<&'static str>, String) {
    let f: syn::ItemFn = syn::parse2(f).unwrap();
    let loops = crate::split::analyse_loops(&f.block, &f.sig, false);
    let (body, reports) = gpu_loops(&f.block, &f.sig, &loops, None);
    let words = reports.iter().map(|r| if r.reason.is_empty() { "gpu" } else { r.reason }).collect();
    (words, body.into_token_stream().to_string())
}

fn words(f: TokenStream) -> Vec<&'static str> {
    gpu(f).0
}

/// `fn k(<params>) { <stmts> }` with the usual parameters.
fn kernel(stmts: TokenStream) -> TokenStream {
    quote!(fn k(a: &[f32], b: &[f32], out: &mut [f32], idx: &mut [u32], n: usize, w: usize, s: f32, d: f64, v: &[f64]) -> f32 {
        let mut acc = 0.0f32;
        #stmts
        acc
    })
}

#[test]
fn independent_loops_run_on_the_gpu() {
    for stmts in [
        quote!(for o in out.iter_mut() {
            *o = 1.0;
        }),
        quote!(for (o, x) in out.iter_mut().zip(a) {
            *o = x * s + 1.0;
        }),
        quote!(for (i, o) in out.iter_mut().enumerate() {
            *o = a[i].max(b[i]) + i as f32;
        }),
        quote!(for i in 0..n {
            out[i] = a[i].sqrt().powi(3).clamp(0.0, 1.0);
        }),
        quote!(for i in 0..n {
            acc += a[i] * b[i];
        }),
        quote!(for (o, p) in out.iter_mut().zip(a.chunks(w)) {
            let mut best = f32::INFINITY;
            for (c, q) in b.chunks(w).enumerate() {
                let mut d2 = 0.0f32;
                for (x, y) in p.iter().zip(q) {
                    d2 += (x - y) * (x - y);
                }
                if d2 < best {
                    best = d2 + c as f32;
                }
            }
            for q in b.chunks_exact(n) {
                best += q[0];
            }
            *o = best;
        }),
        quote!(for row in out.chunks_mut(w) {
            let mut m = f32::NEG_INFINITY;
            for &x in row.iter() {
                m = m.max(x);
            }
            for x in row.iter_mut() {
                *x = (*x - m).exp();
            }
        }),
        quote!(for i in 0..n {
            let p = &a[i * w..(i + 1) * w];
            let mut best = 0;
            let mut bd = f32::INFINITY;
            for c in 0..w {
                if p[c] < bd {
                    bd = p[c];
                    best = c;
                }
            }
            idx[i] = best as u32;
        }),
        quote!(for i in 0..n {
            let (mut x, mut y) = (0.0f32, 1.0f32);
            for j in 0..n {
                x += a[j];
                y = y.mul_add(b[j], x);
            }
            out[i] = if x > y { x } else { y.recip() };
        }),
        quote!(for i in 0..n {
            if a[i].is_nan() {
                continue;
            }
            out[i] = a[i].ln() + a[i].sin().cos().tanh().abs().floor().ceil().round().powf(2.0);
        }),
        quote!(for i in 0..n {
            let mut k = 0usize;
            while k < w {
                k += 1;
            }
            idx[i] = (k as u32) << 2u32;
        }),
    ] {
        assert_eq!(words(kernel(stmts.clone())), ["gpu"], "{stmts}");
    }
}

#[test]
fn loops_outside_the_subset_stay_on_the_host_with_their_word() {
    for (stmts, word) in [
        (
            quote!(for i in 0..n {
                out[i] = d as f32;
            }),
            "f64",
        ),
        (
            quote!(for i in 0..n {
                out[i] = v[i] as f32;
            }),
            "f64",
        ),
        (
            quote!(for i in 0..n {
                out[i] = helper(a[i]);
            }),
            "call",
        ),
        (
            quote!(for i in 0..n {
                out[i] = a[i].atan2(b[i]);
            }),
            "call",
        ),
        (
            quote!(for i in 0..n {
                let t = [a[i], b[i]];
                out[i] = t[0];
            }),
            "value",
        ),
        (
            quote!(for i in 0..n {
                out[i] = a[i] % 2.0;
            }),
            "syntax",
        ),
        (
            quote!(for i in 0..n {
                out[i] = match i {
                    0 => 1.0,
                    _ => 2.0,
                };
            }),
            "syntax",
        ),
        (
            quote!(for i in 0..n {
                println!("{i}");
                out[i] = 1.0;
            }),
            "macro",
        ),
        (
            quote!(for i in 0..n {
                out[i] = 0.5;
                out[0] = 1.0;
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                out[i] = (i as u64) as f32;
            }),
            "size",
        ),
        (
            quote!(for i in 0..n {
                let z = 1.0;
                out[i] = a[i];
                let _ = z;
            }),
            "f64",
        ),
        (
            quote!(for i in 0..n {
                'inner: for j in 0..n {
                    if j > i {
                        break 'inner;
                    }
                }
                out[i] = 1.0;
            }),
            "label",
        ),
    ] {
        assert_eq!(words(kernel(stmts.clone())), [word], "{stmts}");
    }
}

#[test]
fn opted_out_and_unsafe_kernels_say_why() {
    let f: syn::ItemFn = syn::parse2(kernel(quote!(for o in out.iter_mut() {
        *o = 1.0;
    })))
    .unwrap();
    let loops = crate::split::analyse_loops(&f.block, &f.sig, false);
    for word in ["exact", "gpu"] {
        let (_, reports) = gpu_loops(&f.block, &f.sig, &loops, Some(word));
        assert_eq!(reports[0].reason, word);
    }
    let unsafe_fn = quote!(
        unsafe fn k(out: &mut [f32]) {
            for o in out.iter_mut() {
                *o = 1.0;
            }
        }
    );
    assert_eq!(words(unsafe_fn), ["unsafe"]);
}

#[test]
fn the_shader_says_rusts_meaning() {
    let (_, body) = gpu(kernel(quote!(for i in 0..n {
        out[i] = a[i].max(s) / 0.1 + (i / w) as f32;
        acc += a[i];
    })));
    // The WGSL is a string literal in the body; its escapes are those of a Rust string.
    for piece in [
        "lp_max (",
        "lp_div (",
        "bitcast<f32>(0x3dcccccdu)",
        "lp_udiv (",
        "lp_partial (",
        "LP_REDUCTIONS: u32 = 1u",
        "var<storage, read_write> b",
    ] {
        let piece = piece.replace(" (", "(");
        assert!(body.contains(&piece), "{piece} missing from\n{body}");
    }
    assert!(body.contains("range (__adaptive_start , __adaptive_end)"), "{body}");
    assert!(body.contains("simd_run"), "the loop as written is the fallback: {body}");
}

#[test]
#[ignore = "prints a shader, for eyes"]
fn print_a_shader() {
    let (_, body) = gpu(quote!(
        fn assign(points: &[f32], centroids: &[f32], d: usize, labels: &mut [u32]) -> f32 {
            let n = points.len() / d;
            let k = centroids.len() / d;
            let mut inertia = 0.0f32;
            for i in 0..n {
                let p = &points[i * d..(i + 1) * d];
                let mut best = 0;
                let mut best_dist = f32::INFINITY;
                for c in 0..k {
                    let q = &centroids[c * d..(c + 1) * d];
                    let mut dist = 0.0f32;
                    for j in 0..d {
                        let t = p[j] - q[j];
                        dist += t * t;
                    }
                    if dist < best_dist {
                        best_dist = dist;
                        best = c;
                    }
                }
                labels[i] = best as u32;
                inertia += best_dist;
            }
            inertia
        }
    ));
    let start = body.find("\"const LP_BINDINGS").unwrap();
    let end = body[start + 1..].find('"').unwrap() + start + 1;
    println!("{}", body[start + 1..end].replace("\\n", "\n"));
}
