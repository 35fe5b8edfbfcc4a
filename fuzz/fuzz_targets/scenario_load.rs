//! Scenario loading and validation on arbitrary input: never a panic, and every error
//! points inside the file (or at no place) and says something. Variants that load get
//! their memory estimate computed (no overflow on any accepted value).

#![no_main]

use libfuzzer_sys::fuzz_target;
use scenario::{LoadOptions, load_str};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_str(text, Path::new("fuzz.toml"), &LoadOptions::default()) {
        Ok(variants) => {
            for v in &variants {
                let _ = v.footprint();
                assert!(v.duration.nanos() > 0);
            }
        }
        Err(errors) => {
            let lines = text.lines().count() + 1;
            for e in &errors.0 {
                assert!(e.line <= lines, "line {} of {lines}: {e}", e.line);
                assert!(!e.message.is_empty(), "{e}");
            }
        }
    }
});
