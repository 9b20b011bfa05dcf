//! The insert report's summary: every form's median ratio to the plain insert, one row per
//! form and one column pair (1 and 8 threads) per backend and insert size, as issue 47's table
//! and `BENCHMARKS.md` quote it, from the same run as the tables above it.

use std::sync::Mutex;

/// One measured cell: a form's median ratio and its range over the rounds.
struct Cell {
    backend: String,
    rows_per_insert: usize,
    threads: usize,
    form: String,
    ratio: (f64, f64, f64),
}

static CELLS: Mutex<Vec<Cell>> = Mutex::new(Vec::new());

/// Records a form's ratio (lowest, median, highest) for the summary.
pub(super) fn record(
    backend: &str,
    rows_per_insert: usize,
    threads: usize,
    form: &str,
    ratio: (f64, f64, f64),
) {
    CELLS.lock().unwrap_or_else(|e| e.into_inner()).push(Cell {
        backend: backend.to_owned(),
        rows_per_insert,
        threads,
        form: form.to_owned(),
        ratio,
    });
}

/// Prints the summary of everything recorded, if anything was.
pub(super) fn print() {
    let cells = CELLS.lock().unwrap_or_else(|e| e.into_inner());
    if cells.is_empty() {
        return;
    }
    let mut columns: Vec<(&str, usize)> = Vec::new();
    let mut forms: Vec<&str> = Vec::new();
    for cell in cells.iter() {
        let column = (cell.backend.as_str(), cell.rows_per_insert);
        if !columns.contains(&column) {
            columns.push(column);
        }
        if !forms.contains(&cell.form.as_str()) {
            forms.push(&cell.form);
        }
    }
    let threads: Vec<usize> = {
        let mut t: Vec<usize> = cells.iter().map(|c| c.threads).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let per = threads
        .iter()
        .map(|t| format!("{t}t"))
        .collect::<Vec<_>>()
        .join(" / ");
    println!("\n## Summary: median ratio to the plain insert ({per}; range over the rounds below)");
    let header: Vec<String> = columns
        .iter()
        .map(|(backend, rows)| match rows {
            1 => format!("{backend} rows {per}"),
            n => format!("{backend} bulk {n} {per}"),
        })
        .collect();
    println!("| form | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(columns.len()));
    let find = |form: &str, (backend, rows): (&str, usize), threads: usize| {
        cells.iter().find(|c| {
            c.form == form
                && c.backend == backend
                && c.rows_per_insert == rows
                && c.threads == threads
        })
    };
    // One table row per form, each cell `show`n per thread count.
    let rows = |show: &dyn Fn(&Cell) -> String| {
        for form in &forms {
            let row: Vec<String> = columns
                .iter()
                .map(|&column| {
                    threads
                        .iter()
                        .map(|&t| find(form, column, t).map_or_else(|| "–".to_owned(), show))
                        .collect::<Vec<_>>()
                        .join(" / ")
                })
                .collect();
            println!("| {form} | {} |", row.join(" | "));
        }
    };
    rows(&|cell| format!("{:.2}", cell.ratio.1));
    println!("\nRanges (lowest–highest over the rounds):");
    rows(&|cell| format!("{:.2}–{:.2}", cell.ratio.0, cell.ratio.2));
}
