//! Fuzzes the `RAYFORCE_TUNABLES` parser: it must never panic, every diagnostic offset
//! lies inside the input, and the accepted values printed back parse to themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rayforce_tunables::parse::{parse, write_values};

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    for d in parsed.diagnostics.iter() {
        assert!(d.offset().is_some_and(|o| o < data.len()));
    }
    let mut printed = String::new();
    write_values(&parsed.values, &mut printed).unwrap();
    let reparsed = parse(printed.as_bytes());
    assert_eq!(reparsed.values, parsed.values);
    assert!(reparsed.diagnostics.is_empty());
});
