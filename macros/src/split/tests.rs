//! Which top-level loops are split and which are left on one thread, with
//! their words: one case per shape and per reason. That the split code
//! computes what the loop computes is `tests/split_loops.rs`; that each shape
//! compiles warning-free in a user's crate is the trybuild pass cases.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::*;

/// The words of `f`'s top-level loops (`split` for a split one) and its Parallel body.
fn split(f: TokenStream) -> (Vec<&'static str>, String) {
    let f: syn::ItemFn = syn::parse2(f).unwrap();
    let (body, reports) = split_loops(&f.block, &f.sig, false, None);
    let words = reports.iter().map(|r| r.reason.map_or("split", Reason::word)).collect();
    (words, body.into_token_stream().to_string())
}

fn words(f: TokenStream) -> Vec<&'static str> {
    split(f).0
}

/// `fn k(<params>) { <stmts> }` with the usual parameters.
fn kernel(stmts: TokenStream) -> TokenStream {
    quote!(fn k(a: &[f32], b: &[f32], out: &mut [f32], o2: &mut Vec<f32>, n: usize, w: usize, cfg: &mut Cfg) -> f32 {
        let mut s = 0.0f32;
        let mut m = f32::NEG_INFINITY;
        let mut count = 0usize;
        #stmts
        s
    })
}

#[test]
fn items_rows_and_ranges_are_split() {
    for stmts in [
        quote!(for o in out.iter_mut() {
            *o = 1.0;
        }),
        quote!(for o in out {
            *o = 1.0;
        }),
        quote!(for (i, o) in out.iter_mut().enumerate() {
            *o = a[i] + i as f32;
        }),
        quote!(for (o, (x, y)) in out.iter_mut().zip(a.iter().zip(b)) {
            *o = x * y;
        }),
        quote!(for (o, x) in o2.iter_mut().zip(a.iter().copied()) {
            *o = x;
        }),
        quote!(for row in out.chunks_mut(w) {
            row[0] = 1.0;
        }),
        quote!(for (r, (row, src)) in out.chunks_exact_mut(w).zip(a.chunks_exact(w)).enumerate() {
            row[0] = src[r % w];
        }),
        quote!(for i in 0..n {
            out[i] = a[i] * 2.0;
        }),
        quote!(for i in 1..n - 1 {
            out[i] = a[i - 1] + a[i + 1];
        }),
        quote!(for i in 0..n {
            for j in 0..w {
                out[i * w + j] = a[j];
            }
        }),
        quote!(for i in 0..n {
            for j in 0..w {
                out[j + w * i] = a[j];
            }
        }),
        quote!(for i in 0..n {
            let row = &mut out[i * w..(i + 1) * w];
            row[0] = 1.0;
        }),
        quote!(for i in 0..n {
            out[3 * i] = 1.0;
            out[3 * i + 2] = 2.0;
        }),
        quote!(for i in 0..n {
            out[i] = a[i];
            o2[i] = b[i];
        }),
        quote!(for i in 0..a.len() {
            s += a[i] * b[i];
        }),
        quote!(for i in 0..n {
            out[i] += 1.0;
            m = m.max(out[i]);
            count += 1;
        }),
        quote!(for x in a.iter() {
            s += x;
        }),
        quote!(for i in 0..n {
            out[i] = helper(a[i]);
            println!("{} {}", i, a[i]);
        }),
        quote!(for (o, x) in out.iter_mut().zip(a) {
            if *x < 0.0 {
                continue;
            }
            *o = *x;
        }),
        quote!(for i in 0..n {
            out[i] = cfg.scale * a[i];
        }),
    ] {
        assert_eq!(words(kernel(stmts.clone())), ["split"], "{stmts}");
    }
}

#[test]
fn loops_left_on_one_thread_say_why() {
    for (stmts, word) in [
        (
            quote!(for v in a {
                let b = (*v * 10.0) as usize;
                if out[b] < 3.0 {
                    out[b] += 1.0;
                }
            }),
            "overlap",
        ),
        (
            quote!(for i in 1..n {
                out[i] = out[i - 1] + a[i];
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                out[i] = a[i];
                out[i + 1] = 0.0;
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                out[i * w + w] = a[i];
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                for j in 0..=w {
                    out[i * w + j] = 0.0;
                }
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                out[i] = 1.0;
                out[i * 2] = 0.0;
            }),
            "overlap",
        ),
        (
            quote!(for i in 0..n {
                if a[i] < 0.0 {
                    break;
                }
                out[i] = 1.0;
            }),
            "break",
        ),
        (
            quote!(for i in 0..n {
                if a[i] < 0.0 {
                    return 0.0;
                }
                out[i] = 1.0;
            }),
            "return",
        ),
        (
            quote!(for i in 0..n {
                out[i] = parse(a[i])?;
            }),
            "try",
        ),
        (
            quote!(for i in 0..n {
                out[i] = 1.0;
                cfg.calls += 1;
            }),
            "writes",
        ),
        (
            quote!(for i in 0..n {
                out[i] = 1.0;
                cfg.bump();
            }),
            "writes",
        ),
        (
            quote!(for i in 0..n {
                out[i] = 1.0;
                s = a[i];
            }),
            "writes",
        ),
        (
            quote!(for i in 0..n {
                out[i] = s;
                s += a[i];
            }),
            "reads",
        ),
        (
            quote!(for i in 0..n {
                s += a[i];
                s *= 2.0;
            }),
            "mixed",
        ),
        (
            quote!(for i in 0..n {
                out[i] = unsafe { *a.as_ptr().add(i) };
            }),
            "unsafe",
        ),
        (
            quote!(for i in 0..n {
                out[i] = my_macro!(a[i]);
            }),
            "macro",
        ),
        (
            quote!(for i in 0..n {
                let i = i + 1;
                out[i] = 1.0;
            }),
            "shadow",
        ),
        (
            quote!(for i in 0..n {
                println!("{}", a[i]);
            }),
            "nothing",
        ),
        (
            quote!(for o in out.iter_mut().rev() {
                *o = 1.0;
            }),
            "source",
        ),
        (
            quote!(for i in (0..n).step_by(2) {
                out[i] = 1.0;
            }),
            "source",
        ),
        (
            quote!(for o in out.iter_mut().zip(o2.iter_mut()) {
                *o.0 = 1.0;
            }),
            "split",
        ),
        (
            quote!(for i in 0..n {
                m = m.min(a[i]);
                s += a[i];
                count -= 1;
            }),
            "type",
        ),
    ] {
        assert_eq!(words(kernel(stmts.clone())), [word], "{stmts}");
    }
}

#[test]
fn each_top_level_loop_is_judged_on_its_own() {
    let f = kernel(quote! {
        for i in 0..n { out[i] = a[i]; }
        for i in 1..n { out[i] += out[i - 1]; }
        let t = 2.0f32;
        for o in out.iter_mut() { *o *= t; }
    });
    assert_eq!(words(f), ["split", "overlap", "split"]);
}

#[test]
fn opt_outs_split_nothing() {
    let f: syn::ItemFn = syn::parse2(kernel(quote!(for i in 0..n {
        out[i] = 1.0;
    })))
    .unwrap();
    for (opt, word) in [(OptOut::Serial, "serial"), (OptOut::Parallel, "parallel")] {
        let (body, reports) = split_loops(&f.block, &f.sig, false, Some(opt));
        assert_eq!(crate::reason::word(reports[0].reason), word);
        assert_eq!(body.to_token_stream().to_string(), f.block.to_token_stream().to_string());
    }
    let carried = kernel(quote!(for i in 0..n {
        out[i] = a[i];
        s += a[i];
    }));
    let f: syn::ItemFn = syn::parse2(carried).unwrap();
    assert_eq!(
        split_loops(&f.block, &f.sig, true, None).1[0].reason,
        Some(Reason::Exact),
        "a float reduction is reassociated"
    );
    let counted = kernel(quote!(for i in 0..n {
        out[i] = a[i];
        count += 1;
    }));
    let f: syn::ItemFn = syn::parse2(counted).unwrap();
    assert_eq!(split_loops(&f.block, &f.sig, true, None).1[0].reason, None, "an integer sum is exact");
}

#[test]
fn writes_go_to_the_chunk_s_part_rebased_and_reductions_to_partials() {
    let (_, body) = split(kernel(quote!(for i in 0..n {
        for j in 0..w {
            out[i * w + j] = a[j];
        }
        s += a[i];
    })));
    assert!(body.contains("__adaptive_o0 [(i - __adaptive_lo) * w + j]"), "{body}");
    assert!(body.contains("split :: parts (& mut out [..] , __adaptive_s0 , & __adaptive_bounds)"), "{body}");
    assert!(body.contains("let mut s = - 0.0f32 ;"), "{body}");
    assert!(body.contains("s += __adaptive_q . 0 ;"), "{body}");
    let (_, body) = split(kernel(quote!(for (r, row) in out.chunks_mut(w).enumerate() {
        row[0] = r as f32;
    })));
    assert!(
        body.contains(
            ":: core :: iter :: Iterator :: zip ((__adaptive_lo ..) , __adaptive_o0 . chunks_mut (__adaptive_w0))"
        ),
        "{body}"
    );
}

#[test]
fn row_widths_from_fields_and_expressions() {
    let f = quote!(
        fn k(img: &Img, out: &mut [f32], n: usize) {
            let w = img.width;
            for i in 0..n {
                for j in 0..img.width {
                    out[i * img.width + j] = 0.0;
                }
            }
            for i in 0..n {
                for j in 0..w * 2 {
                    out[i * (w * 2) + j] = 0.0;
                }
            }
            for row in out.chunks_mut(img.width) {
                row[0] = 1.0;
            }
        }
    );
    assert_eq!(words(f), ["split", "split", "split"]);
    let unsafe_fn = quote!(
        unsafe fn k(out: &mut [f32]) {
            for o in out.iter_mut() {
                *o = 0.0;
            }
        }
    );
    assert_eq!(words(unsafe_fn), ["unsafe"]);
}

#[test]
fn a_chain_s_read_streams_are_shared_with_the_chunks() {
    let (_, body) = split(kernel(quote!(for (o, x) in out.iter_mut().zip(a.chunks(w)) {
        *o = x[0];
    })));
    assert!(body.contains("Split :: new ((& a ,) ,"), "{body}");
}

/// `fn k(..)` of an image: `src` read, `out` written, `w` wide and `h` high.
fn image(stmts: TokenStream) -> TokenStream {
    quote!(fn k(src: &[f32], out: &mut [f32], w: usize, h: usize) {
        #stmts
    })
}

#[test]
fn row_loops_with_border_writes_are_split() {
    for stmts in [
        // The 5-point stencil: border pixels copied, the interior averaged.
        quote!(for r in 1..h - 1 {
            out[r * w] = src[r * w];
            out[r * w + w - 1] = src[r * w + w - 1];
            for c in 1..w - 1 {
                let i = r * w + c;
                out[r * w + c] = 0.2 * (src[i] + src[i - 1] + src[i + 1] + src[i - w] + src[i + w]);
            }
        }),
        // A row-wise prefix sum, its first element set first and read back.
        quote!(for r in 0..h {
            out[r * w] = src[r * w];
            for c in 1..w {
                out[r * w + c] = out[r * w + c - 1] + src[r * w + c];
            }
        }),
        quote!(for r in 0..h {
            out[w * r + (w - 1)] = 0.0;
            out[2 + r * w] = 1.0;
        }),
        quote!(for r in 0..h {
            for c in 0..4 {
                out[r * 4 + c] = src[c];
            }
        }),
    ] {
        assert_eq!(words(image(stmts.clone())), ["split"], "{stmts}");
    }
}

#[test]
fn offsets_that_may_leave_the_row_stay_on_one_thread() {
    for stmts in [
        quote!(for r in 0..h {
            out[r * w + w] = 0.0;
        }),
        quote!(for r in 0..h {
            for c in 0..w {
                out[r * w + c + 1] = 0.0;
            }
        }),
        quote!(for r in 0..h {
            for c in 0..w {
                out[r * w + c - 1] = 0.0;
            }
        }),
        quote!(for r in 1..h {
            out[r * w - 1] = 0.0;
        }),
        quote!(for r in 0..h {
            out[r * 4 + 4] = 0.0;
        }),
        quote!(for r in 0..h {
            for c in 0..6 {
                out[r * 4 + c] = 0.0;
            }
        }),
        quote!(for r in 0..h {
            out[r * w] = 0.0;
            out[r * h] = 0.0;
        }),
        // `c` is rebound below the range that bounds it.
        quote!(for r in 0..h {
            for c in 0..w {
                let c = c + w;
                out[r * w + c] = 0.0;
            }
        }),
        quote!(for r in 0..h {
            for c in 0..w {
                {
                    let c = c + 1;
                    out[r * w + c] = 0.0;
                }
            }
        }),
        // The range's end names what the body binds.
        quote!(for r in 0..h {
            let n = w + 1;
            for c in 0..n {
                out[r * w + c] = 0.0;
            }
        }),
    ] {
        assert_eq!(words(image(stmts.clone())), ["overlap"], "{stmts}");
    }
}

#[test]
fn a_row_narrower_than_the_proof_needs_runs_the_loop_as_written() {
    let (_, body) = split(image(quote!(for r in 0..h {
        out[r * w] = 1.0;
        out[r * w + w - 3] = 2.0;
    })));
    assert!(body.contains("if __adaptive_start >= __adaptive_end || (__adaptive_s0 >= 3)"), "{body}");
    assert!(body.contains("else { for r in __adaptive_start .. __adaptive_end { out [r * w] = 1.0 ;"), "{body}");
    let (_, body) = split(image(quote!(for r in 0..h {
        for c in 0..w {
            out[r * w + c] = 1.0;
        }
    })));
    assert!(!body.contains("else { for r"), "every width: no premise, {body}");
}

/// `fn k(..)` of samples and tables: `x` and `labels` read, the rest written.
fn tables(stmts: TokenStream) -> TokenStream {
    quote!(fn k(x: &[f32], labels: &[usize], bins: &mut [u32], sums: &mut Vec<f64>, best: &mut [i64], d: usize, out: &mut [f32]) {
        let mut seen = vec![false; 64];
        #stmts
    })
}

#[test]
fn scatter_updates_are_split_with_private_copies() {
    for stmts in [
        quote!(for v in x {
            let b = (*v * 10.0) as usize;
            bins[b.min(bins.len() - 1)] += 1;
        }),
        quote!(for i in 0..labels.len() {
            let l = labels[i];
            bins[l] += 1;
            for j in 0..d {
                sums[l * d + j] += f64::from(x[i * d + j]);
            }
        }),
        quote!(for (i, l) in labels.iter().enumerate() {
            best[*l] = best[*l].max(i as i64);
        }),
        quote!(for (i, l) in labels.iter().enumerate() {
            best[*l] = i64::min(best[*l], i as i64);
        }),
        quote!(for l in labels {
            seen[*l % 64] |= true;
            bins[*l % 8] ^= 1;
        }),
        quote!(for i in 0..x.len() {
            out[i] = x[i] * 2.0;
            sums[labels[i]] -= f64::from(x[i]);
        }),
    ] {
        assert_eq!(words(tables(stmts.clone())), ["split"], "{stmts}");
    }
}

#[test]
fn scatter_updates_the_split_cannot_prove_say_why() {
    for (stmts, word) in [
        (
            quote!(for l in labels {
                bins[*l] += 1;
                bins[*l / 2] -= 1;
            }),
            "mixed",
        ),
        (
            quote!(for l in labels {
                bins[*l] += bins[0];
            }),
            "overlap",
        ),
        (
            quote!(for l in labels {
                bins[*l] *= 2;
            }),
            "overlap",
        ),
        (
            quote!(for l in labels {
                seen[*l] += 1;
            }),
            "type",
        ),
        (
            quote!(for l in labels {
                out[*l] = out[*l].max(1.0);
                let copy = out.to_vec();
                drop(copy);
            }),
            "overlap",
        ),
        (
            quote!(for l in labels {
                bins[*l] += 1;
                let bins = 3;
                drop(bins);
            }),
            "shadow",
        ),
    ] {
        assert_eq!(words(tables(stmts.clone())), [word], "{stmts}");
    }
    let exact: syn::ItemFn = syn::parse2(tables(quote!(for (v, l) in x.iter().zip(labels) {
        out[*l] += *v;
    })))
    .unwrap();
    assert_eq!(split_loops(&exact.block, &exact.sig, true, None).1[0].reason, Some(Reason::Exact));
}

#[test]
fn a_chunk_updates_its_copy_and_the_copies_are_merged_after_the_loop() {
    let (_, body) = split(tables(quote!(for l in labels {
        bins[*l] += 1;
        sums[*l] -= 2.0;
        best[*l] = best[*l].max(7);
    })));
    for (k, (name, ty, identity)) in
        [("best", "i64", "i64 :: MIN"), ("bins", "u32", "0"), ("sums", "f64", "- 0.0f64")].into_iter().enumerate()
    {
        assert!(body.contains(&format!("let __adaptive_xl{k} : usize = {name} . len () ;")), "{body}");
        assert!(body.contains(&format!("let __adaptive_x{k} : & mut [{ty}] =")), "{body}");
        assert!(body.contains(&format!("__adaptive_x{k} . fill ({identity}) ;")), "{body}");
        assert!(body.contains(&format!("merge_private (& mut {name} [..] , & __adaptive_xb{k}")), "{body}");
    }
    assert!(body.contains("__adaptive_x2 [* l] += 2.0"), "a subtraction is summed in the copy: {body}");
    assert!(body.contains("* __adaptive_slot -= * __adaptive_copy"), "and subtracted at the merge: {body}");
    assert!(body.contains("__adaptive_x0 [* l] = __adaptive_x0 [* l] . max (7)"), "{body}");
    assert!(!body.contains("bins [* l]"), "every update goes to the copy: {body}");
}

#[test]
fn a_mut_reference_bound_by_a_let_is_not_shared_with_the_chunks() {
    // Disagreement resolved: `let r = log;` of a `&mut` parameter, or `let r = &mut v;`, was
    // "anything else" to the split, which took `r.push(..)` for a read and split the loop: its
    // chunks, `Fn` closures, could not have borrowed `r` mutably (generated code that did not
    // compile). The typer knows `r` is a `&mut`; the loop stays on one thread.
    for bind in [quote!(let r = log;), quote!(let r = &mut *log;), quote!(let mut v = Vec::new(); let r = &mut v;)] {
        let f = quote!(fn k(a: &[f32], out: &mut [f32], log: &mut Vec<f32>) {
            #bind
            for i in 0..a.len() {
                out[i] = a[i];
                r.push(a[i]);
            }
        });
        assert_eq!(words(f), ["writes"]);
    }
}

#[test]
fn a_row_width_may_be_a_constant_s_path() {
    // Disagreement resolved: a width that can be evaluated again was two functions, the split's
    // (names and fields) and the GPU's (paths, no fields). One (`crate::body::pure`): a constant's
    // path (`consts::W`) is a row width the split cuts by, as the GPU variant took it.
    assert_eq!(
        words(kernel(quote!(for i in 0..n {
            out[i * consts::W] = a[i];
        }))),
        ["split"]
    );
}
