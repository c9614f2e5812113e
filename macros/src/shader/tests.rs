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
    let body = gpu_loops(&f.block, &f.sig, &crate::body::Body::new(&f.block, &f.sig, false), None);
    let words = body.reports.iter().map(|r| r.reason.map_or("gpu", Reason::word)).collect();
    (words, body.block.into_token_stream().to_string())
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
    let model = crate::body::Body::new(&f.block, &f.sig, false);
    for why in [Reason::Exact, Reason::Gpu] {
        let body = gpu_loops(&f.block, &f.sig, &model, Some(why));
        assert_eq!(body.reports[0].reason, Some(why));
        assert!(body.host_reads.is_none(), "an opted-out body is left as written: no `k::resident` entry");
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
    assert!(body.contains("range (__adaptive_start1 , __adaptive_end1)"), "{body}");
    assert!(body.contains("simd_run"), "the loop as written is the fallback: {body}");
}

/// How many submissions (batches) `f`'s GPU body makes, and the body.
fn batches(f: TokenStream) -> (usize, String) {
    let (_, body) = gpu(f);
    (body.matches("Batch :: new ()").count(), body)
}

#[test]
fn loops_with_nothing_between_them_but_other_data_are_one_submission() {
    let (n, body) = batches(kernel(quote!(
        for i in 0..n {
            out[i] = a[i] * 2.0;
        }
        let half = s * 0.5;
        let len = out.len();
        for i in 0..n {
            idx[i] = (out[i] + b[i] * half) as u32;
        }
    )));
    assert_eq!(n, 1, "{body}");
    // Both loops are stored and finished once, and run as written where the device did not.
    assert_eq!(body.matches(". finish ()").count(), 1, "{body}");
    assert_eq!(body.matches("on_device (0usize)").count() + body.matches("on_device (1usize)").count(), 2, "{body}");
}

#[test]
fn host_code_that_uses_a_loops_data_ends_its_submission() {
    for between in [
        quote!(let first = out[0];),
        quote!(if n == 0 {
            return acc;
        }),
        quote!(helper!(n);),
        quote!(acc += 1.0;),
    ] {
        let (n, body) = batches(kernel(quote!(
            for i in 0..n {
                out[i] = a[i] * 2.0;
                acc += a[i];
            }
            #between
            for i in 0..n {
                idx[i] = b[i] as u32;
            }
        )));
        assert_eq!(n, 2, "{between}: {body}");
    }
    // A later loop whose bounds are an earlier loop's result waits for it too.
    let (n, body) = batches(kernel(quote!(
        for i in 0..n {
            idx[i] = i as u32;
        }
        for i in 0..(idx[0] as usize) {
            out[i] = 1.0;
        }
    )));
    assert_eq!(n, 2, "{body}");
}

#[test]
fn host_uses_of_slice_parameters_get_current_data() {
    let f: syn::ItemFn = syn::parse2(kernel(quote!(
        let first = a[0] + b.len() as f32;
        for i in 0..n {
            out[i] = a[i] * first;
        }
        acc = out[0];
    )))
    .unwrap();
    let g = gpu_loops(&f.block, &f.sig, &crate::body::Body::new(&f.block, &f.sig, false), None);
    // `a`'s data is read on the host (the entry makes it current); `b` only by its length.
    let reads: Vec<String> = g.host_reads.unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(reads, ["a"]);
    // `out` (a `&mut [f32]`) is made current where the host reads it after the loop wrote it.
    let body = g.block.into_token_stream().to_string();
    let sync = body.find("ProbeMut (& mut out [..]) . sync ()").expect(&body);
    assert!(sync > body.find(". finish ()").unwrap() && sync < body.find("acc = out [0]").unwrap(), "{body}");
}

#[test]
fn slices_every_invocation_walks_are_kept_in_workgroup_memory() {
    // k-means: the centroids (binding 1) are walked by every invocation, the points (0) at the
    // invocation's own row, the labels (2) written.
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
    assert!(body.contains("var<workgroup> lp_tile1: array<f32, 3520>"), "{body}");
    assert!(body.contains("lp_ld1(") && body.contains("workgroupBarrier()"), "{body}");
    assert!(!body.contains("lp_tile0") && !body.contains("lp_tile2"), "{body}");
    // n-body: every position array is walked by every invocation; four share the tile budget.
    let (_, body) = gpu(quote!(
        fn forces(x: &[f32], y: &[f32], z: &[f32], m: &[f32], ax: &mut [f32]) {
            for i in 0..ax.len() {
                let mut a = 0.0f32;
                for j in 0..x.len() {
                    let (dx, dy, dz) = (x[j] - x[i], y[j] - y[i], z[j] - z[i]);
                    let r2 = dx * dx + dy * dy + dz * dz + 0.01;
                    a += dx * m[j] / (r2 * r2.sqrt());
                }
                ax[i] = a;
            }
        }
    ));
    // `x[i]` is read at the invocation's own index too: from the tile as well.
    for k in 0..4 {
        assert!(body.contains(&format!("var<workgroup> lp_tile{k}: array<f32, 896>")), "{k}: {body}");
    }
    // A slice read only at the invocation's own index is not walked: nothing to keep.
    let (_, body) = gpu(kernel(quote!(for i in 0..n {
        let mut t = 0.0f32;
        for j in 0..3 {
            t += a[i] * j as f32;
        }
        out[i] = t;
    })));
    assert!(!body.contains("lp_tile"), "{body}");
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

#[test]
fn the_halves_of_split_at_are_slices_to_the_gpu_too() {
    // Disagreement resolved: `let (lo, hi) = x.split_at(m);` bound two slices to the SIMD
    // rewrite and nothing the GPU's could read; the model says what the halves are, so an `f32`
    // loop over them runs on the device and an `f64` one is refused for its type.
    let halves = |ty: TokenStream| {
        quote!(fn k(x: &[#ty]) -> #ty {
            let (lo, hi) = x.split_at(x.len() / 2);
            let mut s = 0.0;
            for i in 0..lo.len() {
                s += lo[i] * hi[i];
            }
            s
        })
    };
    assert_eq!(words(halves(quote!(f32))), ["gpu"]);
    assert_eq!(words(halves(quote!(f64))), ["f64"]);
}

#[test]
fn a_row_width_may_be_a_field() {
    // Disagreement resolved (`crate::body::pure`): a field (`cfg.w`) is a width the split's
    // chunks took and the GPU's refused (`syntax`); both take it.
    let f = quote!(
        fn k(a: &[f32], out: &mut [f32], cfg: &Cfg) {
            for (o, row) in out.iter_mut().zip(a.chunks(cfg.w)) {
                *o = row[0];
            }
        }
    );
    assert_eq!(words(f), ["gpu"]);
}
