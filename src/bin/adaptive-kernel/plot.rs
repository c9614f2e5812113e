//! `report --plot`: time per call against size, one panel per kernel (per
//! machine entry), on log–log axes, drawn with plotters' SVG backend.
//!
//! In each panel: one line per measured backend through its median time in
//! each bucket (at the bucket's typical size); every settled bucket's size
//! range shaded in the colour of its chosen backend; a dashed black marker at
//! each crossover, labelled "SIMD from 4,096"; a dotted grey one where the
//! choice changes between two backends that tie (within the router's tie band),
//! labelled "Scalar = SIMD from 131,072". Colours: Scalar `#1F77B4`, SIMD `#FF7F0E`, GPU `#2CA02C`,
//! Parallel `#D62728` (the legend is coloured text, so every coloured line is a series).

use adaptive_kernel::Backend;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::model::{Kernel, Report};
use crate::units::{duration, thousands};

/// The colour of each backend (a name's colour never changes when backends are added).
fn colour(b: Backend) -> RGBColor {
    match b {
        Backend::Scalar => RGBColor(0x1f, 0x77, 0xb4),
        Backend::Simd => RGBColor(0xff, 0x7f, 0x0e),
        Backend::Gpu => RGBColor(0x2c, 0xa0, 0x2c),
        Backend::Parallel => RGBColor(0xd6, 0x27, 0x28),
    }
}
/// Opacity of a chosen backend's shaded size range.
const SHADE: f64 = 0.15;
const WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 360;

/// The SVG document of `report`'s kernels; an error when no kernel has a timing to plot.
pub(crate) fn svg(report: &Report) -> Result<String, String> {
    let several = report.machines.len() > 1;
    let panels: Vec<(String, &Kernel)> = report
        .machines
        .iter()
        .flat_map(|m| {
            m.kernels.iter().map(move |k| {
                let whose = if several { format!(" on {}", short_key(&m.key, m.this_machine)) } else { String::new() };
                (format!("{} ({}){whose}", k.name, k.complexity), k)
            })
        })
        .filter(|(_, k)| k.buckets.iter().any(|b| Backend::ALL.iter().any(|&x| b.median_ns(x).is_some())))
        .collect();
    if panels.is_empty() {
        return Err(format!("nothing to plot: {} holds no timings", report.history));
    }
    let mut out = String::new();
    {
        let height = PANEL_HEIGHT * panels.len() as u32;
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        for (area, (title, kernel)) in root.split_evenly((panels.len(), 1)).iter().zip(&panels) {
            panel(area, title, kernel).map_err(|e| format!("drawing {title}: {e}"))?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn short_key(key: &str, this_machine: bool) -> String {
    let key = &key[..key.len().min(8)];
    if this_machine {
        format!("{key}… (this machine)")
    } else {
        format!("{key}…")
    }
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn panel(area: &DrawingArea<SVGBackend<'_>, Shift>, title: &str, kernel: &Kernel) -> DrawResult {
    let times: Vec<f64> = kernel
        .buckets
        .iter()
        .flat_map(|b| Backend::ALL.map(|x| b.median_ns(x)))
        .flatten()
        .filter(|t| *t > 0.0)
        .collect();
    let (t_lo, t_hi) = times.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let (y_lo, y_hi) = (t_lo / 2.0, t_hi * 2.0);
    let x_lo = kernel.buckets.first().map_or(1.0, |b| b.sizes[0].max(1) as f64);
    let x_hi = kernel.buckets.last().map_or(2.0, |b| (b.sizes[1] as f64 + 1.0).max(x_lo * 2.0));

    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("size (elements)")
        .y_desc("time per call")
        .x_label_formatter(&|x| thousands(x.round() as usize))
        .y_label_formatter(&|y| duration(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;

    // The chosen backend's size ranges, under everything else.
    chart.draw_series(kernel.buckets.iter().filter_map(|b| {
        let chosen = b.chosen?;
        let lo = (b.sizes[0].max(1) as f64).max(x_lo);
        let hi = (b.sizes[1] as f64 + 1.0).min(x_hi);
        Some(Rectangle::new([(lo, y_lo), (hi, y_hi)], colour(chosen).mix(SHADE).filled()))
    }))?;

    for backend in Backend::ALL {
        let points: Vec<(f64, f64)> = kernel
            .buckets
            .iter()
            .filter_map(|b| Some((b.typical_size.max(1) as f64, b.median_ns(backend)?)))
            .filter(|&(_, t)| t > 0.0)
            .collect();
        if points.is_empty() {
            continue;
        }
        let style = colour(backend).stroke_width(2);
        chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour(backend).filled())))?;
    }

    for c in &kernel.crossovers {
        let x = c.size as f64;
        let (label, dash, colour) = if c.tie {
            (format!("{} = {} from {}", c.to, c.from, thousands(c.size)), (2, 3), RGBColor(0x80, 0x80, 0x80))
        } else {
            (format!("{} from {}", c.to, thousands(c.size)), (6, 4), BLACK)
        };
        chart.draw_series(DashedLineSeries::new(vec![(x, y_lo), (x, y_hi)], dash.0, dash.1, colour.stroke_width(1)))?;
        let font = ("sans-serif", 13).into_font().color(&colour);
        chart.draw_series(std::iter::once(Text::new(label, (x, y_hi), font)))?;
    }
    drop(chart);

    // The legend: each measured backend's name in its colour, top right.
    let measured = Backend::ALL
        .into_iter()
        .filter(|&x| kernel.buckets.iter().any(|b| b.median_ns(x).is_some()))
        .collect::<Vec<_>>();
    for (i, backend) in measured.iter().enumerate() {
        let font = ("sans-serif", 15).into_font().color(&colour(*backend));
        let x = WIDTH as i32 - 90 * (measured.len() - i) as i32 - 10;
        area.draw(&Text::new(backend.to_string(), (x, 8), font))?;
    }
    Ok(())
}
