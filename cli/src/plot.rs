//! `compare --plot FILE.svg`: a grouped bar chart of the results, wall time and CPU time side
//! by side; one group of bars per workload, one bar per configuration with its min-max
//! spread, each relative to the workload's best baseline (so workloads of any size share
//! one axis, and 1.0 is the stack rayforce-rt replaces).

use crate::spread::Spread;
use plotters::prelude::*;
use std::path::Path;

/// One configuration of one workload.
pub(crate) struct Bar<'a> {
    pub(crate) workload: &'a str,
    /// The configuration and its width ("rayon + mimalloc (2 threads)"); one colour each.
    pub(crate) name: String,
    /// A baseline's bar (bars are drawn relative to the best baseline's).
    pub(crate) baseline: bool,
    pub(crate) wall: Spread,
    pub(crate) cpu: Spread,
}

/// Whether the chart could be written to `path`, checked before a run that takes seconds:
/// opens it for writing, and removes it again if it did not exist.
pub(crate) fn check_writable(path: &Path) -> std::io::Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    if !existed {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// Writes the chart of `bars` (in workload order) to `path`.
pub(crate) fn write(path: &Path, bars: &[Bar<'_>]) -> Result<(), Box<dyn std::error::Error>> {
    let mut workloads: Vec<&str> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for bar in bars {
        if !workloads.contains(&bar.workload) {
            workloads.push(bar.workload);
        }
        if !names.contains(&bar.name) {
            names.push(bar.name.clone());
        }
    }
    let root = SVGBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(600);
    for (area, title, pick) in [
        (
            left,
            "wall time",
            (|b: &Bar<'_>| b.wall) as fn(&Bar<'_>) -> Spread,
        ),
        (right, "CPU time", |b: &Bar<'_>| b.cpu),
    ] {
        panel(&area, title, pick, bars, &workloads, &names)?;
    }
    root.present()?;
    Ok(())
}

/// One panel: `pick`'s spread of every bar, over the best baseline's median of its workload.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    pick: fn(&Bar<'_>) -> Spread,
    bars: &[Bar<'_>],
    workloads: &[&str],
    names: &[String],
) -> Result<(), Box<dyn std::error::Error>> {
    let scale = |workload: &str| {
        bars.iter()
            .filter(|b| b.workload == workload && b.baseline)
            .map(|b| pick(b).median)
            .fold(f64::INFINITY, f64::min)
    };
    let top = bars
        .iter()
        .map(|b| pick(b).max / scale(b.workload))
        .fold(1.0, f64::max)
        * 1.15;
    let groups = workloads.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{title}, relative to the best rayon baseline"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(45)
        .build_cartesian_2d(-0.5..groups - 0.5, 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(workloads.len() + 2)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < workloads.len() {
                workloads[i as usize].to_owned()
            } else {
                String::new()
            }
        })
        .y_desc("x the best baseline's median")
        .draw()?;
    for (n, name) in names.iter().enumerate() {
        let colour = Palette99::pick(n).to_rgba();
        let ours: Vec<(usize, &Bar<'_>)> = bars
            .iter()
            .filter(|b| &b.name == name)
            .map(|b| {
                (
                    workloads.iter().position(|w| *w == b.workload).unwrap_or(0),
                    b,
                )
            })
            .collect();
        let slot = |group: usize| {
            // This configuration's place among its workload's bars.
            let in_group: Vec<&String> = bars
                .iter()
                .filter(|b| b.workload == workloads[group])
                .map(|b| &b.name)
                .collect();
            let k = in_group.len().max(1) as f64;
            let i = in_group.iter().position(|x| *x == name).unwrap_or(0) as f64;
            let width = 0.8 / k;
            let x0 = group as f64 - 0.4 + i * width;
            (x0, x0 + width)
        };
        chart
            .draw_series(ours.iter().map(|&(group, bar)| {
                let (x0, x1) = slot(group);
                let value = pick(bar).median / scale(bar.workload);
                Rectangle::new([(x0, 0.0), (x1, value)], colour.filled())
            }))?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
        chart.draw_series(ours.iter().map(|&(group, bar)| {
            let (x0, x1) = slot(group);
            let s = pick(bar);
            let k = scale(bar.workload);
            ErrorBar::new_vertical(
                (x0 + x1) / 2.0,
                s.min / k,
                s.median / k,
                s.max / k,
                BLACK.stroke_width(1),
                (((x1 - x0) * 60.0) as u32).max(4),
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE)
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}
