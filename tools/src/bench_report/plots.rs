//! `--report scaling`'s series drawn as SVG (plotters), beside the JSON they come from: one file
//! per series, a line per backend, the simulation's curve beside the measured processes.

use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use super::processes::ProcessPoint;
use super::rollover::RolloverPoint;
use super::scopes::ScopePoint;
use super::BoxError;
use crate::simulate::Outcome;

/// Everything one backend's scaling run measured and simulated.
#[derive(Debug, Clone, Serialize)]
pub struct Scaling {
    pub backend: String,
    /// One uncontended reservation, ms (what the simulation takes as the row's service time).
    pub reservation_ms: f64,
    pub scopes: Vec<ScopePoint>,
    pub processes: Vec<ProcessPoint>,
    pub rollover: RolloverPoint,
    /// The simulation at the measured rate per process, 1 to 16 instances.
    pub simulated: Vec<Outcome>,
    /// The same, 10 to 10,000 instances.
    pub simulated_at_scale: Vec<Outcome>,
}

const COLORS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
];
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Writes `scaling.json` and the three SVGs into `dir`.
pub(super) fn write(dir: &Path, runs: &[Scaling]) -> Result<(), BoxError> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("scaling.json"),
        serde_json::to_string_pretty(runs)?,
    )?;
    let font: &'static [u8] = Box::leak(
        std::fs::read(FONT)
            .map_err(|e| format!("{FONT}: {e} (Debian's fonts-dejavu-core)"))?
            .into_boxed_slice(),
    );
    plotters::style::register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| format!("{FONT} is not a font plotters can read"))?;
    scopes(&dir.join("scaling-scopes.svg"), runs)?;
    processes(&dir.join("scaling-processes.svg"), runs)?;
    rollover(&dir.join("scaling-rollover.svg"), runs)?;
    println!("\nwrote scaling.json and its plots to {}", dir.display());
    Ok(())
}

/// ns per ID and reservations per 1,000 IDs against active scopes (log scales).
fn scopes(path: &Path, runs: &[Scaling]) -> Result<(), BoxError> {
    let root = SVGBackend::new(path, (1100, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(550);
    type Pick = fn(&ScopePoint) -> f64;
    let panels: [(&DrawingArea<_, _>, &str, Pick); 2] = [
        (&left, "ns per ID (8 threads)", |p| p.ns_per_id.median),
        (&right, "reservations per 1,000 IDs", |p| {
            p.reservations_per_1000_ids.median
        }),
    ];
    for (area, title, pick) in panels {
        let values: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.scopes.iter().map(pick))
            .collect();
        let (low, high) = bounds(&values);
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((0.5f64..2e6).log_scale(), (low..high).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("active scopes, served round-robin")
            .draw()?;
        for (run, color) in runs.iter().zip(COLORS) {
            let points: Vec<(f64, f64)> = run
                .scopes
                .iter()
                .map(|p| (p.scopes as f64, pick(p).max(low)))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(run.backend.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// IDs/s and reservations/s against processes, measured (points) and simulated (dashed).
fn processes(path: &Path, runs: &[Scaling]) -> Result<(), BoxError> {
    let root = SVGBackend::new(path, (1100, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(550);
    type Pick = fn(&ProcessPoint) -> f64;
    type Simulated = fn(&Outcome) -> f64;
    let panels: [(&DrawingArea<_, _>, &str, Pick, Simulated); 2] = [
        (
            &left,
            "IDs per second, in all",
            |p| p.ids_per_second.median,
            |o| o.ids_per_second,
        ),
        (
            &right,
            "reservations per second on the key's row",
            |p| p.reservations_per_second.median,
            |o| o.reservations_per_second,
        ),
    ];
    for (area, title, pick, simulated) in panels {
        let mut values: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.processes.iter().map(pick))
            .collect();
        values.extend(runs.iter().flat_map(|r| r.simulated.iter().map(simulated)));
        let high = values.iter().copied().fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..17.0, 0f64..high)?;
        chart
            .configure_mesh()
            .x_desc("loadgen processes, 4 threads each")
            .draw()?;
        for (run, color) in runs.iter().zip(COLORS) {
            let measured: Vec<(f64, f64)> = run
                .processes
                .iter()
                .map(|p| (p.processes as f64, pick(p)))
                .collect();
            chart
                .draw_series(LineSeries::new(measured.clone(), color.stroke_width(2)))?
                .label(format!("{} measured", run.backend))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
            chart.draw_series(
                measured
                    .into_iter()
                    .map(|p| Circle::new(p, 4, color.filled())),
            )?;
            let model: Vec<(f64, f64)> = run
                .simulated
                .iter()
                .map(|o| (o.instances as f64, simulated(o)))
                .collect();
            chart
                .draw_series(DashedLineSeries::new(model, 6, 4, color.stroke_width(1)))?
                .label(format!("{} simulated", run.backend))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(1))
                });
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// The slowest ID of each 50 ms slice around midnight.
fn rollover(path: &Path, runs: &[Scaling]) -> Result<(), BoxError> {
    let root = SVGBackend::new(path, (1100, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let values: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.rollover.timeline.iter().map(|&(_, v)| v))
        .collect();
    let (low, high) = bounds(&values);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "next_id p99 per 50 ms slice, 8 threads, around midnight (µs)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-1000f64..2000.0, (low..high).log_scale())?;
    chart.configure_mesh().x_desc("ms from midnight").draw()?;
    for (run, color) in runs.iter().zip(COLORS) {
        chart
            .draw_series(LineSeries::new(
                run.rollover.timeline.clone(),
                color.stroke_width(2),
            ))?
            .label(run.backend.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A log axis's range around `values` (positive), a little wider.
fn bounds(values: &[f64]) -> (f64, f64) {
    let positive = values.iter().copied().filter(|v| *v > 0.0);
    let low = positive.clone().fold(f64::MAX, f64::min);
    let high = positive.fold(0.0, f64::max);
    if high <= 0.0 {
        return (0.1, 10.0);
    }
    (low / 2.0, high * 2.0)
}
