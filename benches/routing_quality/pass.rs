//! A pass over the workload: every item calls each measured strategy once, in a random order.

use std::time::Instant;

use crate::calls::{call, has_gpu, has_parallel, How, BACKENDS, DIRECT, GPU, NONE, PARALLEL, SLOTS, TRUENO};
use crate::trace::{Track, Via, EVENTS};
use crate::workload::{Pair, Rng, SEED};

/// Direct measurements per pair across passes, and which variants stopped being called.
pub(crate) struct Measured {
    pub(crate) samples: Vec<[Vec<u64>; SLOTS]>,
    pub(crate) dropped: Vec<[bool; SLOTS]>,
}

/// The median of `ns` (the crate's own median, over nanoseconds); `None` when empty.
pub(crate) fn median(ns: &[u64]) -> Option<f64> {
    adaptive_kernel::__private::median(&mut ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

impl Measured {
    pub(crate) fn new(n: usize) -> Measured {
        Measured { samples: (0..n).map(|_| Default::default()).collect(), dropped: vec![[false; SLOTS]; n] }
    }

    /// Records a direct call; within its first 8 calls a hopeless variant is dropped (see the
    /// module docs). Medians skip each variant's first call at the pair, which pays for fresh
    /// memory (first-touch page faults of a new size's output) whichever variant comes first.
    pub(crate) fn record(&mut self, p: usize, j: usize, ns: u64) {
        self.samples[p][j].push(ns);
        let len = self.samples[p][j].len();
        if len > 8 {
            return;
        }
        let early = |v: &[u64]| median(&v[usize::from(v.len() > 1)..v.len().min(9)]);
        let best =
            (0..BACKENDS).filter(|&u| u != j).filter_map(|u| early(&self.samples[p][u])).fold(f64::INFINITY, f64::min);
        let mine = early(&self.samples[p][j]).unwrap_or(0.0);
        let slower = |factor: f64, ns: f64| mine > factor * best && mine > ns;
        let huge = ns as f64 > 16.0 * best && ns as f64 > 50e6;
        if (len >= 6 && (slower(4.0, 1e6) || slower(16.0, 1e5))) || huge {
            self.dropped[p][j] = true;
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct PassCfg {
    pub(crate) direct: bool,
    pub(crate) trueno: bool,
    pub(crate) routed: bool,
    pub(crate) gpu: bool,
}

/// One item's measurements: the direct calls (`NONE` where not called) and the routed call.
pub(crate) struct Item {
    pub(crate) pair: usize,
    pub(crate) t: [u64; SLOTS],
    pub(crate) routed: u64,
    pub(crate) via: Via,
    /// The routed call took the cold path (see [`Track::attribute`]).
    pub(crate) cold: bool,
    /// The routed call explored: the router ran it on a candidate to measure it.
    pub(crate) exploring: bool,
}

pub(crate) fn pass(
    pairs: &mut [Pair],
    order: &[usize],
    m: &mut Measured,
    cfg: PassCfg,
    track: &mut Track,
) -> (Vec<Item>, f64) {
    let start = Instant::now();
    let mut items = Vec::with_capacity(order.len());
    let mut hows = Vec::with_capacity(5);
    let mut within = Rng(SEED ^ 0x17E7);
    for &pi in order {
        let p = &mut pairs[pi];
        hows.clear();
        if cfg.direct {
            hows.extend(
                [How::Scalar, How::Simd].into_iter().enumerate().filter(|(j, _)| !m.dropped[pi][*j]).map(|x| x.1),
            );
            if has_parallel(p.k) && !m.dropped[pi][PARALLEL] {
                hows.push(How::Parallel);
            }
            if cfg.gpu && has_gpu(p.k) && !m.dropped[pi][GPU] {
                hows.push(How::Gpu);
            }
        }
        if cfg.trueno && p.k.trueno().is_some() && !m.dropped[pi][TRUENO] {
            hows.push(How::Trueno);
        }
        if cfg.routed {
            hows.push(How::Routed);
        }
        if hows.is_empty() {
            continue;
        }
        // A fresh random order per item: a rotation would keep each call's predecessor fixed,
        // and a call after another that freed memory or polluted caches pays for it.
        for a in (1..hows.len()).rev() {
            hows.swap(a, (within.next() % (a as u64 + 1)) as usize);
        }
        let mut item =
            Item { pair: pi, t: [NONE; SLOTS], routed: NONE, via: Via::Unknown, cold: false, exploring: false };
        for &h in &hows {
            if h == How::Routed {
                EVENTS.with(|e| e.borrow_mut().clear());
                item.routed = call(p, h);
                (item.via, item.cold, item.exploring) = track.attribute(pi, start.elapsed().as_secs_f64());
            } else {
                let j = DIRECT.iter().position(|&d| d == h).expect("direct");
                let ns = call(p, h);
                item.t[j] = ns;
                m.record(pi, j, ns);
            }
        }
        items.push(item);
    }
    (items, start.elapsed().as_secs_f64())
}
