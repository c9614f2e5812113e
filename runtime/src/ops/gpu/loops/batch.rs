//! A group of a GPU variant's loops, run in one submission: generated code
//! starts a [`Batch`], hands it each loop's [`Launch`] in order (the device
//! records it; the host memory it read is no longer borrowed), then
//! [`finish`](Batch::finish)es it where the group ends, hands every written
//! slice and accumulator back to the [`Finish`] (by address: the results are
//! stored into them), and runs as written each loop [`Done`] says the device did
//! not run.
//!
//! ```text
//! let mut batch = Batch::new();
//! { let mut launch = Launch::new(&LOOP_A); ...; batch.launch(launch); }
//! let w = n - 1;                                   // host code that touches no loop's data
//! { let mut launch = Launch::new(&LOOP_B); ...; batch.launch(launch); }
//! let done = { let mut f = batch.finish(); f.store(ProbeMut(&mut out[..]).slice_mut());
//!              f.accumulate(1, ProbeMut(&mut acc).acc()); f.done() };
//! if !done.on_device(0) { /* loop A as written */ }
//! if !done.on_device(1) { /* loop B as written */ }
//! ```
//!
//! A loop the device refuses (a type, a size, a device limit: known at its
//! launch; or its status word, set by what Rust would panic on or compute
//! otherwise: known once the group ran) runs on the host, and so does every
//! later loop of the group: what they read may be its result. The loops before
//! it keep their results. Running the refused loops at the group's end is the
//! order they were written in, because the macro only groups loops whose host
//! code in between touches none of their data (`macros/src/shader/group.rs`).

use super::launch::{Checked, Launch};
use super::probe::{AccMut, HostSliceMut};
use super::slot::Slot;
use super::spec::{GpuLoop, HostReason, ReduceOp};

/// How one loop of the group runs.
#[derive(Debug)]
enum Outcome {
    /// On the device (so far).
    Device,
    /// On the host: the reason, or `None` when no device is usable (said elsewhere).
    Host(Option<HostReason>),
    /// No units: nothing to run.
    Empty,
}

#[derive(Debug)]
struct Member {
    spec: &'static GpuLoop,
    outcome: Outcome,
}

/// A group of a GPU variant's loops being launched; see the module docs. Built by
/// generated code.
#[derive(Debug, Default)]
pub struct Batch {
    members: Vec<Member>,
    /// The first loop that runs on the host: every later one does too.
    host_from: Option<usize>,
    #[cfg(feature = "gpu")]
    group: super::exec::Group,
    /// The device failed (or was unusable) during a launch: nothing of the group is submitted.
    #[cfg(feature = "gpu")]
    broken: bool,
}

impl Batch {
    /// An empty group.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Adds the next loop of the group: checks it and records it on the device, or
    /// marks it (and every later loop) for the host. The launch's borrows end here.
    pub fn launch(&mut self, launch: Launch<'_>) {
        let index = self.members.len();
        let spec = launch.spec();
        let outcome = if self.host_from.is_some() {
            Outcome::Host(Some(HostReason::Earlier))
        } else {
            match launch.checked() {
                Checked::Host(reason) => Outcome::Host(Some(reason)),
                Checked::Empty => Outcome::Empty,
                Checked::Device(parts) => match self.on_device(index, parts) {
                    Ok(()) => Outcome::Device,
                    Err(reason) => Outcome::Host(reason),
                },
            }
        };
        if matches!(outcome, Outcome::Host(_)) && self.host_from.is_none() {
            self.host_from = Some(index);
        }
        self.members.push(Member { spec, outcome });
    }

    #[cfg(feature = "gpu")]
    fn on_device(&mut self, index: usize, parts: super::launch::Parts<'_>) -> Result<(), Option<HostReason>> {
        use std::sync::atomic::Ordering;
        let spec = parts.spec;
        match spec.shader.load(Ordering::Relaxed) {
            0 => match spec.validate() {
                Ok(()) => spec.shader.store(1, Ordering::Relaxed),
                Err(e) => {
                    spec.shader.store(2, Ordering::Relaxed);
                    tracing::error!(target: "adaptive_kernel", file = spec.file, line = spec.line, error = %e, "a generated GPU loop's shader is invalid");
                    return Err(Some(HostReason::Shader));
                }
            },
            1 => {}
            _ => return Err(Some(HostReason::Shader)),
        }
        if self.broken {
            return Err(None);
        }
        let group = &mut self.group;
        let launched = crate::ops::gpu::device::run("generated GPU loop", |exec| {
            group.launch(exec, index, spec, (parts.start, parts.units), &parts.words, &parts.slots)
        });
        match launched {
            Some(Ok(())) => Ok(()),
            Some(Err(reason)) => Err(Some(reason)),
            None => {
                self.broken = true;
                Err(None)
            }
        }
    }

    #[cfg(not(feature = "gpu"))]
    fn on_device(&mut self, _index: usize, _parts: super::launch::Parts<'_>) -> Result<(), Option<HostReason>> {
        Err(None)
    }

    /// Runs the group: one submission, one readback; then the loops before the first
    /// whose status word was set are committed, and it and every later loop will run
    /// on the host.
    pub fn finish(self) -> Finish {
        #[cfg(feature = "gpu")]
        let Batch { mut members, group, broken, .. } = self;
        #[cfg(not(feature = "gpu"))]
        let Batch { members, .. } = self;
        let mut finish = Finish { reductions: vec![Vec::new(); members.len()], ..Finish::default() };
        #[cfg(feature = "gpu")]
        {
            let launched = members.iter().any(|m| matches!(m.outcome, Outcome::Device));
            if launched {
                let finished = if broken {
                    None
                } else {
                    crate::ops::gpu::device::run("generated GPU loops", |exec| group.finish(exec))
                };
                match finished {
                    Some(f) => {
                        if let Some(first) = f.first_host {
                            for (k, m) in members.iter_mut().enumerate().skip(first) {
                                if matches!(m.outcome, Outcome::Device) {
                                    m.outcome = Outcome::Host(Some(if k == first && f.special {
                                        HostReason::Special
                                    } else if k == first {
                                        HostReason::Status
                                    } else {
                                        HostReason::Earlier
                                    }));
                                }
                            }
                        }
                        for (k, values) in f.reductions {
                            finish.reductions[k] = values;
                        }
                        finish.stores = f.stores;
                    }
                    None => {
                        for m in &mut members {
                            if matches!(m.outcome, Outcome::Device) {
                                m.outcome = Outcome::Host(None);
                            }
                        }
                    }
                }
            }
        }
        for m in &members {
            match m.outcome {
                Outcome::Device => m.spec.count(true),
                Outcome::Host(reason) => m.spec.ran_on_host(reason),
                Outcome::Empty => {}
            }
        }
        finish.on_device = members.iter().map(|m| !matches!(m.outcome, Outcome::Host(_))).collect();
        finish.specs = members.iter().map(|m| m.spec).collect();
        finish.next = vec![0; members.len()];
        finish
    }
}

/// A finished group: its results, until generated code has stored them into the
/// written slices ([`store`](Finish::store)) and accumulators
/// ([`accumulate`](Finish::accumulate)); then [`done`](Finish::done).
#[derive(Debug, Default)]
pub struct Finish {
    on_device: Vec<bool>,
    specs: Vec<&'static GpuLoop>,
    /// Per loop, each reduction's values still to combine (one device-combined value, or
    /// every partial of a `usize` sum).
    reductions: Vec<Vec<Vec<u32>>>,
    /// Per loop, its next reduction.
    next: Vec<usize>,
    #[cfg(feature = "gpu")]
    stores: Vec<(super::exec::Key, Vec<u32>)>,
    #[cfg(not(feature = "gpu"))]
    stores: Vec<((), Vec<u32>)>,
}

impl Finish {
    /// A slice some loop of the group wrote: the committed result is stored into it.
    /// (`None`, a type no shader holds, has nothing stored.)
    pub fn store(&mut self, slice: Option<HostSliceMut<'_>>) {
        let Some(slice) = slice else { return };
        let mut slot = Slot::Write(slice);
        #[cfg(feature = "gpu")]
        {
            let key = super::exec::Key::of(&slot);
            if let Some(at) = self.stores.iter().position(|(k, _)| *k == key) {
                let (_, words) = self.stores.swap_remove(at);
                slot.store(&words);
            }
        }
        #[cfg(not(feature = "gpu"))]
        let _ = &mut slot;
    }

    /// The accumulator of loop `k`'s next reduction: the loop's result is combined into
    /// it when the device ran the loop.
    pub fn accumulate(&mut self, k: usize, acc: Option<AccMut<'_>>) {
        let (Some(acc), Some(&spec)) = (acc, self.specs.get(k)) else { return };
        let r = self.next[k];
        self.next[k] += 1;
        if !self.on_device[k] {
            return;
        }
        let (Some(values), Some(reduction)) = (self.reductions[k].get(r), spec.reductions.get(r)) else { return };
        combine(acc, reduction.op, values);
    }

    /// Which loops the device ran (the others run as written, in order).
    pub fn done(self) -> Done {
        debug_assert!(self.stores.is_empty(), "a written slice was not handed back to its group");
        Done(self.on_device)
    }
}

/// Which loops of a finished group ran on the device.
#[derive(Debug)]
pub struct Done(Vec<bool>);

impl Done {
    /// Whether loop `k` of the group ran on the device (else it runs as written).
    pub fn on_device(&self, k: usize) -> bool {
        self.0.get(k).copied().unwrap_or(false)
    }
}

/// Combines a reduction's values (as the device holds them), in order, into `acc`.
/// Integer sums wrap as in a release build (a `usize` one was checked on the device
/// within each workgroup, and is added here in 64 bits).
fn combine(acc: AccMut<'_>, op: ReduceOp, values: &[u32]) {
    match acc {
        AccMut::F32(a) => {
            for &bits in values {
                let p = f32::from_bits(bits);
                *a = match op {
                    ReduceOp::Sum => *a + p,
                    ReduceOp::Product => *a * p,
                    ReduceOp::Max => a.max(p),
                    ReduceOp::Min => a.min(p),
                };
            }
        }
        AccMut::I32(a) => values.iter().for_each(|&b| *a = a.wrapping_add(b as i32)),
        AccMut::U32(a) => values.iter().for_each(|&b| *a = a.wrapping_add(b)),
        AccMut::Usize(a) => values.iter().for_each(|&b| *a = a.wrapping_add(b as usize)),
    }
}
