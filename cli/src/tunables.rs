//! `rayforce-rt tunables`: every tunable with its value, default, range and source, then
//! every diagnostic, in the spirit of `ld.so --list-tunables`: what this binary's own
//! Runtime resolved from the environment.

use crate::failure::Failure;
use rayforce_rt::registry::{Kind, TABLE};
use rayforce_rt::{Runtime, Tunables};
use serde_json::{json, Value};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// One JSON object: {"tunables": [...], "diagnostics": [...]}.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args, runtime: &'static Runtime) -> Result<(), Failure> {
    let tunables = runtime.tunables();
    if args.json {
        println!("{}", to_json(tunables));
    } else {
        print_table(tunables);
    }
    crate::failure::refuse_if_strict(tunables)
}

/// A value as an operator writes it: a word, 0/1, a number, or `auto`.
fn text(kind: Kind, value: Option<u64>) -> String {
    let mut out = String::new();
    match value {
        Some(v) => {
            let _ = kind.format(v, &mut out);
        }
        None => out.push_str("auto"),
    }
    out
}

fn print_table(tunables: &Tunables) {
    println!(
        "{:<32} {:<12} {:<12} {:<28} source",
        "name", "value", "default", "range"
    );
    for t in &TABLE {
        let setting = tunables.get(t.id);
        let mut range = String::new();
        let _ = t.kind.describe(&mut range);
        println!(
            "{:<32} {:<12} {:<12} {:<28} {}",
            t.name,
            text(t.kind, setting.value),
            text(t.kind, t.default),
            range,
            setting.source.as_str()
        );
    }
    let diagnostics = tunables.diagnostics();
    if diagnostics.is_empty() {
        println!("\nno diagnostics");
    } else {
        println!("\ndiagnostics:");
        for d in diagnostics.iter() {
            println!("  {d}");
        }
        if diagnostics.dropped() > 0 {
            println!("  ... and {} more not kept", diagnostics.dropped());
        }
    }
}

/// A value in JSON: a number, 0/1, a word as a string, or null for auto.
fn value_json(kind: Kind, value: Option<u64>) -> Value {
    match (kind, value) {
        (_, None) => Value::Null,
        (Kind::Words(_), Some(_)) => Value::String(text(kind, value)),
        (_, Some(v)) => json!(v),
    }
}

fn to_json(tunables: &Tunables) -> Value {
    let rows: Vec<Value> = TABLE
        .iter()
        .map(|t| {
            let setting = tunables.get(t.id);
            let (min, max, words) = match t.kind {
                Kind::Unsigned { min, max } => (json!(min), json!(max), Value::Null),
                Kind::Bool => (json!(0), json!(1), Value::Null),
                Kind::Words(words) => (Value::Null, Value::Null, json!(words)),
            };
            json!({
                "name": t.name,
                "value": value_json(t.kind, setting.value),
                "default": value_json(t.kind, t.default),
                "min": min,
                "max": max,
                "values": words,
                "source": setting.source.as_str(),
                "variable": t.variable,
                "description": t.description,
            })
        })
        .collect();
    let diagnostics: Vec<Value> = tunables
        .diagnostics()
        .iter()
        .map(|d| {
            json!({
                "offset": d.offset(),
                "entry": d.entry().to_string(),
                "message": d.message().to_string(),
            })
        })
        .collect();
    json!({
        "tunables": rows,
        "diagnostics": diagnostics,
        "diagnostics_dropped": tunables.diagnostics().dropped(),
    })
}
