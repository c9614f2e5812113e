//! Which backend a routed call ran, read from the router's own decision events.

use std::cell::RefCell;

use adaptive_kernel::Backend;

use crate::workload::Pair;

#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// A cold-path decision: the backend this call runs; `settled` when it is the bucket's decision.
    Route { backend: usize, settled: bool },
    /// A settled bucket's choice degraded (or a loaded one failed verification): exploring again.
    Reexplore,
    /// A re-timed alternative took over: this call ran it.
    Corrected { backend: usize },
}

thread_local! {
    pub(crate) static EVENTS: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

#[derive(Default)]
pub(crate) struct Fields {
    pub(crate) message: String,
    pub(crate) backend: Option<usize>,
    pub(crate) decision: String,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "backend" => self.backend = value.parse::<Backend>().ok().map(Backend::index),
            "decision" => self.decision = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

/// A `tracing` layer that keeps the router's decision events of the current call.
pub(crate) struct Recorder;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let ev = match (f.message.as_str(), f.backend) {
            ("route", Some(backend)) => {
                Event::Route { backend, settled: matches!(f.decision.as_str(), "historical" | "forced") }
            }
            (m, Some(backend)) if m.contains("switched") => Event::Corrected { backend },
            (m, _) if m.contains("re-exploring") => Event::Reexplore,
            _ => return,
        };
        EVENTS.with(|e| e.borrow_mut().push(ev));
    }
}

/// Installs [`Recorder`] for events (never spans, so the router's slow-call spans stay off).
pub(crate) fn install_recorder() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::filter::filter_fn(|m| m.is_event() && m.target() == "adaptive_kernel");
    let subscriber = tracing_subscriber::registry().with(Recorder.with_filter(filter));
    tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
}

/// Which backend a routed call ran, as far as can be told.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Via {
    /// A decision event named it.
    Traced(usize),
    /// The fast path of a bucket settled on this backend (or a probe of an alternative within 4× of it).
    Settled(usize),
    Unknown,
}

/// Per pair: what the router is known to have decided, and when it explored or settled.
pub(crate) struct Track {
    pub(crate) chosen: Vec<Option<usize>>,
    pub(crate) start_chosen: Vec<Option<usize>>,
    pub(crate) first_explore: Vec<Option<f64>>,
    pub(crate) last_settle: Vec<Option<f64>>,
    pub(crate) reexplores: Vec<u32>,
    pub(crate) corrections: Vec<u32>,
}

impl Track {
    /// Starts from the kernels' tables (which loads saved history, if any).
    pub(crate) fn new(pairs: &[Pair]) -> Track {
        let chosen: Vec<Option<usize>> = pairs
            .iter()
            .map(|p| p.k.kernel().table().row_for(p.size).and_then(|r| r.chosen).map(Backend::index))
            .collect();
        let n = pairs.len();
        Track {
            start_chosen: chosen.clone(),
            chosen,
            first_explore: vec![None; n],
            last_settle: vec![None; n],
            reexplores: vec![0; n],
            corrections: vec![0; n],
        }
    }

    /// Reads the events of the routed call just made on pair `p`, at `t` seconds into the pass:
    /// which backend it ran; whether it took the cold path (a route event: an exploring
    /// call, or the one that settled its bucket), the calls that could do one-time work; and
    /// whether it explored (a route event other than the bucket's decision).
    pub(crate) fn attribute(&mut self, p: usize, t: f64) -> (Via, bool, bool) {
        let events = EVENTS.with(|e| std::mem::take(&mut *e.borrow_mut()));
        let mut via = match self.chosen[p] {
            Some(b) => Via::Settled(b),
            None => Via::Unknown,
        };
        let (mut cold, mut exploring) = (false, false);
        for ev in events {
            match ev {
                Event::Route { backend, settled } => {
                    via = Via::Traced(backend);
                    cold = true;
                    exploring |= !settled;
                    if settled {
                        self.chosen[p] = Some(backend);
                        self.last_settle[p] = Some(t);
                    } else {
                        self.chosen[p] = None;
                        self.first_explore[p].get_or_insert(t);
                    }
                }
                Event::Reexplore => {
                    self.chosen[p] = None;
                    self.reexplores[p] += 1;
                    self.first_explore[p].get_or_insert(t);
                }
                Event::Corrected { backend } => {
                    via = Via::Traced(backend);
                    self.chosen[p] = Some(backend);
                    self.corrections[p] += 1;
                    self.last_settle[p] = Some(t);
                }
            }
        }
        // A call nothing is known about counts as a cold one.
        (via, cold || matches!(via, Via::Unknown), exploring)
    }
}
