//! A real program, four ways: a small Llama-style transformer (the shapes of
//! stories15M: dim 288, hidden 768, 6 layers, 6 heads, vocab 32,000) written
//! from scratch with its `rmsnorm`, `softmax` and `matmul` as index loops,
//! decoding 32 tokens greedily from random weights (a fixed-seed xorshift).
//!
//! The four builds differ only in those three functions:
//! - `plain`: the index loops, unannotated;
//! - `annotated`: the same loops (one `macro_rules!` writes all three loop
//!   builds) under `#[adaptive_kernel]`: routed calls, SIMD variants with the
//!   reductions reassociated (issue #16);
//! - `exact`: the same loops under `#[adaptive_kernel(exact)]`: nothing is
//!   rewritten, so no variant is faster than the loops as written. It measures
//!   what annotating costs when it cannot help (the target: at least 0.98× the
//!   plain program, cold start included);
//! - `ops`: annotated kernels whose bodies call `ops::rmsnorm`-style
//!   compositions of `ops::dot`, `ops::softmax`, `ops::matvec`.
//!
//! The rest of the forward pass (RoPE, attention, SwiGLU) is shared code.
//!
//! Rounds are interleaved (each round runs every build, in a rotating order);
//! each build's figure is the median over rounds. Per round and build, every
//! kernel of the build is `reset()` (fresh routing state; history is off, so
//! nothing is loaded), then `generations()` generations run back to back:
//! **cold** is the first (it includes the router's exploration), **warm** the
//! last (every bucket settled), **run** all of them together (tokens over the
//! time from the reset: a run of a few seconds, cold start included). `plain`
//! has no state: its cold run is just its first run of the round.
//!
//! Run: `cargo bench --bench transformer` (about a minute and a half). History and the
//! GPU are off unless `ADAPTIVE_KERNEL_HISTORY` / `ADAPTIVE_KERNEL_GPU` say
//! otherwise (with history on, "cold" is not cold; with a GPU, the `ops`
//! build may route the classifier there).
//! Figures and their reading: BENCHMARKS.md, "A transformer written with loops".
//!
//! Smoke run (CI: `scripts/bench-smoke`): `cargo bench --bench transformer -- --test`
//! runs one round of two generations per build (`common/smoke.rs`).

#![allow(missing_docs)]
// The kernels are written as index loops on purpose: that is the code under test.
#![allow(clippy::needless_range_loop)]

mod common;
#[path = "common/smoke.rs"]
mod smoke;

use std::time::{Duration, Instant};

use common::Xorshift;

const DIM: usize = 288;
const HIDDEN: usize = 768;
const LAYERS: usize = 6;
const HEADS: usize = 6;
const HEAD_SIZE: usize = DIM / HEADS;
const VOCAB: usize = 32_000;
const SEQ: usize = 64;
const TOKENS: usize = 32;
/// Rounds (every build once per round).
fn rounds() -> usize {
    smoke::pick(11, 1)
}

/// Generations per round and build: the first is cold, the last warm.
fn generations() -> usize {
    smoke::pick(5, 2)
}

/// The three kernels as index loops, each preceded by the given attribute (or none).
macro_rules! loop_kernels {
    (rmsnorm: [$($rms:tt)*], softmax: [$($soft:tt)*], matmul: [$($mm:tt)*]) => {
        /// `o = weight ⊙ x / rms(x)`.
        $($rms)*
        pub(crate) fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32]) {
            let size = x.len();
            let mut ss = 0.0f32;
            for j in 0..size {
                ss += x[j] * x[j];
            }
            ss /= size as f32;
            ss += 1e-5;
            ss = 1.0 / ss.sqrt();
            for j in 0..size {
                o[j] = weight[j] * (ss * x[j]);
            }
        }

        /// `x = softmax(x)`, in place.
        $($soft)*
        pub(crate) fn softmax(x: &mut [f32]) {
            let size = x.len();
            let mut max_val = x[0];
            for i in 1..size {
                if x[i] > max_val {
                    max_val = x[i];
                }
            }
            let mut sum = 0.0f32;
            for i in 0..size {
                x[i] = (x[i] - max_val).exp();
                sum += x[i];
            }
            for i in 0..size {
                x[i] /= sum;
            }
        }

        /// `xout = W·x` for a row-major `d × n` matrix `W`.
        $($mm)*
        pub(crate) fn matmul(xout: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
            for i in 0..d {
                let mut val = 0.0f32;
                for j in 0..n {
                    val += w[i * n + j] * x[j];
                }
                xout[i] = val;
            }
        }
    };
}

mod plain {
    loop_kernels!(rmsnorm: [], softmax: [], matmul: []);
}

mod annotated {
    use adaptive_kernel::adaptive_kernel;

    loop_kernels!(
        rmsnorm: [#[adaptive_kernel(complexity = "Low")]],
        softmax: [#[adaptive_kernel(complexity = "Medium")]],
        // The default size (the slices' lengths, ≈ n·d): a `size = n * d` written here could not
        // name the parameters the macro_rules declares (hygiene).
        matmul: [#[adaptive_kernel(complexity = "High")]]
    );
}

mod annotated_exact {
    use adaptive_kernel::adaptive_kernel;

    loop_kernels!(
        rmsnorm: [#[adaptive_kernel(complexity = "Low", exact)]],
        softmax: [#[adaptive_kernel(complexity = "Medium", exact)]],
        matmul: [#[adaptive_kernel(complexity = "High", exact)]]
    );
}

mod with_ops {
    use adaptive_kernel::{adaptive_kernel, ops};

    /// `o = weight ⊙ x / rms(x)`.
    #[adaptive_kernel(complexity = "Low")]
    pub(crate) fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32]) {
        let ss = ops::dot(x, x) / x.len() as f32 + 1e-5;
        let y = ops::mul(weight, &ops::scale(x, 1.0 / ss.sqrt()));
        o.copy_from_slice(&y);
    }

    /// `x = softmax(x)`, in place.
    #[adaptive_kernel(complexity = "Medium")]
    pub(crate) fn softmax(x: &mut [f32]) {
        let y = ops::softmax(x);
        x.copy_from_slice(&y);
    }

    /// `xout = W·x` for a row-major `d × n` matrix `W`.
    #[adaptive_kernel(complexity = "High")]
    pub(crate) fn matmul(xout: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
        let y = ops::matvec(&w[..n * d], x, d, n);
        xout[..d].copy_from_slice(&y);
    }
}

/// One way of providing the three kernels.
trait Build {
    const NAME: &'static str;
    fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32]);
    fn softmax(x: &mut [f32]);
    fn matmul(xout: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize);
    /// Forgets what the kernels' routers learned.
    fn reset() {}
}

/// A [`Build`] named `$name` whose kernels are `$module`'s; `reset` forgets their routing.
macro_rules! build {
    ($build:ident, $name:literal, $module:ident $(, reset: $($kernel:ident),*)?) => {
        struct $build;

        impl Build for $build {
            const NAME: &'static str = $name;
            fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32]) {
                $module::rmsnorm(o, x, weight)
            }
            fn softmax(x: &mut [f32]) {
                $module::softmax(x)
            }
            fn matmul(xout: &mut [f32], x: &[f32], w: &[f32], n: usize, d: usize) {
                $module::matmul(xout, x, w, n, d)
            }
            $(fn reset() {
                $($module::$kernel::KERNEL.reset();)*
            })?
        }
    };
}

build!(Plain, "plain", plain);
build!(Annotated, "annotated", annotated, reset: rmsnorm, softmax, matmul);
build!(Exact, "exact", annotated_exact, reset: rmsnorm, softmax, matmul);
build!(Ops, "ops", with_ops, reset: rmsnorm, softmax, matmul);

/// The model: the classifier shares the token embedding, as in stories15M.
struct Weights {
    embedding: Vec<f32>,
    rms_att: Vec<f32>,
    rms_ffn: Vec<f32>,
    wq: Vec<f32>,
    wk: Vec<f32>,
    wv: Vec<f32>,
    wo: Vec<f32>,
    w1: Vec<f32>,
    w2: Vec<f32>,
    w3: Vec<f32>,
    rms_final: Vec<f32>,
}

impl Weights {
    fn random(seed: u32) -> Weights {
        let mut rng = Xorshift::new(seed);
        let (d, h) = (1.0 / (DIM as f32).sqrt(), 1.0 / (HIDDEN as f32).sqrt());
        Weights {
            embedding: rng.uniform(VOCAB * DIM, -1.0, 1.0),
            rms_att: vec![1.0; LAYERS * DIM],
            rms_ffn: vec![1.0; LAYERS * DIM],
            wq: rng.uniform(LAYERS * DIM * DIM, -d, d),
            wk: rng.uniform(LAYERS * DIM * DIM, -d, d),
            wv: rng.uniform(LAYERS * DIM * DIM, -d, d),
            wo: rng.uniform(LAYERS * DIM * DIM, -d, d),
            w1: rng.uniform(LAYERS * HIDDEN * DIM, -d, d),
            w2: rng.uniform(LAYERS * DIM * HIDDEN, -h, h),
            w3: rng.uniform(LAYERS * HIDDEN * DIM, -d, d),
            rms_final: vec![1.0; DIM],
        }
    }
}

/// Activations and the key/value cache of one generation.
struct State {
    x: Vec<f32>,
    xb: Vec<f32>,
    xb2: Vec<f32>,
    hb: Vec<f32>,
    hb2: Vec<f32>,
    q: Vec<f32>,
    att: Vec<f32>,
    logits: Vec<f32>,
    key_cache: Vec<f32>,
    value_cache: Vec<f32>,
}

impl State {
    fn new() -> State {
        State {
            x: vec![0.0; DIM],
            xb: vec![0.0; DIM],
            xb2: vec![0.0; DIM],
            hb: vec![0.0; HIDDEN],
            hb2: vec![0.0; HIDDEN],
            q: vec![0.0; DIM],
            att: vec![0.0; HEADS * SEQ],
            logits: vec![0.0; VOCAB],
            key_cache: vec![0.0; LAYERS * SEQ * DIM],
            value_cache: vec![0.0; LAYERS * SEQ * DIM],
        }
    }
}

/// One token through the model at position `pos`; the logits end in `s.logits`.
fn forward<B: Build>(w: &Weights, s: &mut State, token: usize, pos: usize) {
    s.x.copy_from_slice(&w.embedding[token * DIM..(token + 1) * DIM]);
    for l in 0..LAYERS {
        let (mat, vec) = (l * DIM * DIM, l * DIM);
        B::rmsnorm(&mut s.xb, &s.x, &w.rms_att[vec..vec + DIM]);

        let cache = l * SEQ * DIM + pos * DIM;
        B::matmul(&mut s.q, &s.xb, &w.wq[mat..mat + DIM * DIM], DIM, DIM);
        B::matmul(&mut s.key_cache[cache..cache + DIM], &s.xb, &w.wk[mat..mat + DIM * DIM], DIM, DIM);
        B::matmul(&mut s.value_cache[cache..cache + DIM], &s.xb, &w.wv[mat..mat + DIM * DIM], DIM, DIM);

        // RoPE on the query and this position's key.
        for i in (0..DIM).step_by(2) {
            let freq = 1.0 / 10000f32.powf((i % HEAD_SIZE) as f32 / HEAD_SIZE as f32);
            let (sin, cos) = (pos as f32 * freq).sin_cos();
            for v in [&mut s.q[i..i + 2], &mut s.key_cache[cache + i..cache + i + 2]] {
                let (v0, v1) = (v[0], v[1]);
                v[0] = v0 * cos - v1 * sin;
                v[1] = v0 * sin + v1 * cos;
            }
        }

        // Multi-head attention over positions 0..=pos.
        for h in 0..HEADS {
            let q = &s.q[h * HEAD_SIZE..(h + 1) * HEAD_SIZE];
            let att = &mut s.att[h * SEQ..h * SEQ + pos + 1];
            for t in 0..=pos {
                let k = &s.key_cache[l * SEQ * DIM + t * DIM + h * HEAD_SIZE..][..HEAD_SIZE];
                let mut score = 0.0f32;
                for i in 0..HEAD_SIZE {
                    score += q[i] * k[i];
                }
                att[t] = score / (HEAD_SIZE as f32).sqrt();
            }
            B::softmax(att);
            let xb = &mut s.xb[h * HEAD_SIZE..(h + 1) * HEAD_SIZE];
            xb.fill(0.0);
            for t in 0..=pos {
                let v = &s.value_cache[l * SEQ * DIM + t * DIM + h * HEAD_SIZE..][..HEAD_SIZE];
                for i in 0..HEAD_SIZE {
                    xb[i] += att[t] * v[i];
                }
            }
        }
        B::matmul(&mut s.xb2, &s.xb, &w.wo[mat..mat + DIM * DIM], DIM, DIM);
        for i in 0..DIM {
            s.x[i] += s.xb2[i];
        }

        // SwiGLU feed-forward.
        B::rmsnorm(&mut s.xb, &s.x, &w.rms_ffn[vec..vec + DIM]);
        let ffn = l * HIDDEN * DIM;
        B::matmul(&mut s.hb, &s.xb, &w.w1[ffn..ffn + HIDDEN * DIM], DIM, HIDDEN);
        B::matmul(&mut s.hb2, &s.xb, &w.w3[ffn..ffn + HIDDEN * DIM], DIM, HIDDEN);
        for i in 0..HIDDEN {
            let v = s.hb[i];
            s.hb[i] = v / (1.0 + (-v).exp()) * s.hb2[i];
        }
        B::matmul(&mut s.xb, &s.hb, &w.w2[ffn..ffn + DIM * HIDDEN], HIDDEN, DIM);
        for i in 0..DIM {
            s.x[i] += s.xb[i];
        }
    }
    B::rmsnorm(&mut s.xb, &s.x, &w.rms_final);
    B::matmul(&mut s.logits, &s.xb, &w.embedding, DIM, VOCAB);
}

/// `TOKENS` greedy steps from token 1: the tokens and the time taken.
fn generate<B: Build>(w: &Weights) -> (Vec<usize>, Duration) {
    let mut s = State::new();
    let mut tokens = Vec::with_capacity(TOKENS);
    let start = Instant::now();
    let mut token = 1;
    for pos in 0..TOKENS {
        forward::<B>(w, &mut s, token, pos);
        token = s.logits.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i);
        tokens.push(token);
    }
    (tokens, start.elapsed())
}

/// One build's round: tokens per second cold, warm and over the whole run, and the warm run's tokens.
struct Round {
    cold: f64,
    warm: f64,
    run: f64,
    tokens: Vec<usize>,
}

/// One round of build `B` (see the module docs).
fn round<B: Build>(w: &Weights) -> Round {
    let start = Instant::now();
    B::reset();
    let (_, cold) = generate::<B>(w);
    for _ in 2..generations() {
        generate::<B>(w);
    }
    let (tokens, warm) = generate::<B>(w);
    let run = start.elapsed();
    let per_second = |d: Duration, tokens: usize| tokens as f64 / d.as_secs_f64();
    Round {
        cold: per_second(cold, TOKENS),
        warm: per_second(warm, TOKENS),
        run: per_second(run, generations() * TOKENS),
        tokens,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this program takes no options. Before any thread or kernel
    // exists: no history, so that cold means cold; no GPU, so that every build runs on the CPU.
    for (variable, default) in [("ADAPTIVE_KERNEL_HISTORY", "off"), ("ADAPTIVE_KERNEL_GPU", "off")] {
        if std::env::var_os(variable).is_none() {
            std::env::set_var(variable, default);
        }
    }
    let w = Weights::random(0x5EED);
    let names = [Plain::NAME, Annotated::NAME, Exact::NAME, Ops::NAME];
    let runs: [fn(&Weights) -> Round; 4] = [round::<Plain>, round::<Annotated>, round::<Exact>, round::<Ops>];
    let n = runs.len();
    let (mut cold, mut warm, mut run) = (vec![Vec::new(); n], vec![Vec::new(); n], vec![Vec::new(); n]);
    let mut tokens: Vec<Vec<usize>> = vec![Vec::new(); n];
    println!(
        "transformer: dim {DIM}, hidden {HIDDEN}, {LAYERS} layers, {HEADS} heads, vocab {VOCAB}; \
         {TOKENS} greedy tokens; {} interleaved rounds of {} generations per build",
        rounds(),
        generations()
    );
    for r in 0..rounds() {
        for k in 0..n {
            let b = (r + k) % n;
            let out = runs[b](&w);
            cold[b].push(out.cold);
            warm[b].push(out.warm);
            run[b].push(out.run);
            tokens[b] = out.tokens;
        }
        let each: Vec<String> = (0..n).map(|b| format!("{} {:.1}", names[b], run[b][r])).collect();
        println!("round {r}: run tok/s {}", each.join(", "));
    }
    // Ratios to plain are medians of the per-round ratios: both figures of a ratio come from the
    // same round, so they saw the same load on the machine.
    let ratio = |v: &[Vec<f64>], b: usize| median(v[b].iter().zip(&v[0]).map(|(x, p)| x / p).collect());
    println!("\nmedian tokens/s over {} rounds; × plain: the median of the per-round ratios", rounds());
    println!("| build | cold tok/s | warm tok/s | run tok/s | cold × plain | warm × plain | run × plain |");
    println!("|---|---|---|---|---|---|---|");
    for b in 0..n {
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} | {:.3} |",
            names[b],
            median(cold[b].clone()),
            median(warm[b].clone()),
            median(run[b].clone()),
            ratio(&cold, b),
            ratio(&warm, b),
            ratio(&run, b)
        );
    }
    let agree = |b: usize| match tokens[0].iter().zip(&tokens[b]).position(|(a, c)| a != c) {
        None => "the same tokens".to_string(),
        Some(step) => format!("tokens differ from step {step}"),
    };
    println!("\nannotated vs plain: {}; exact vs plain: {}; ops vs plain: {}", agree(1), agree(2), agree(3));
    println!("\nwhat the SIMD variants did to each reduction:");
    for (kernel, loops) in [
        ("annotated::rmsnorm", annotated::rmsnorm::KERNEL.spec().loops),
        ("annotated::softmax", annotated::softmax::KERNEL.spec().loops),
        ("annotated::matmul", annotated::matmul::KERNEL.spec().loops),
        ("annotated_exact::matmul", annotated_exact::matmul::KERNEL.spec().loops),
    ] {
        print!("  {kernel}\n{}", adaptive_kernel::LoopSummary::new("    ", loops));
    }
    println!("\nwhere the annotated builds' routers settled (last round):");
    for table in [
        annotated::rmsnorm::KERNEL.table(),
        annotated::softmax::KERNEL.table(),
        annotated::matmul::KERNEL.table(),
        annotated_exact::rmsnorm::KERNEL.table(),
        annotated_exact::softmax::KERNEL.table(),
        annotated_exact::matmul::KERNEL.table(),
    ] {
        for row in &table.rows {
            println!("  {}: sizes {:?}: {:?}", table.kernel, row.sizes, row.chosen);
        }
    }
    println!("\nthe exact build's matmul, in full:\n{}", annotated_exact::matmul::KERNEL.table());
}
