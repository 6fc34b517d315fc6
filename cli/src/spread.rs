//! `Spread`: the median, minimum and maximum of a comparison's samples.

use serde_json::{json, Value};

/// Median, min and max of a set of values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spread {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Spread {
    pub(crate) fn of(values: impl Iterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = values.collect();
        v.sort_by(f64::total_cmp);
        let half = v.len() / 2;
        Spread {
            median: if v.len() % 2 == 0 {
                (v[half - 1] + v[half]) / 2.0
            } else {
                v[half]
            },
            min: v[0],
            max: v[v.len() - 1],
        }
    }

    pub(crate) fn json(self) -> Value {
        json!({"median": self.median, "min": self.min, "max": self.max})
    }

    /// "0.62x (0.55-0.70)".
    pub(crate) fn ratio_text(self) -> String {
        format!("{:.2}x ({:.2}-{:.2})", self.median, self.min, self.max)
    }
}
