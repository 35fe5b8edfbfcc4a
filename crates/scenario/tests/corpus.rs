//! The bad-input corpus: each `tests/corpus/NNN-name.toml` is a scenario with one mistake
//! (or a few related ones), written as a user would mistype it, and `NNN-name.expected`
//! beside it is the loader's whole error output for it, every line. The test loads every
//! file as `tests/corpus/NNN-name.toml` (so the output does not depend on the working
//! folder) and requires that it is rejected, without a panic, with exactly that output, and
//! that every error points at a line and column.
//!
//! A change to a message shows here as a difference to read. To accept new messages, run
//! `MPTCP_LAB_BLESS=1 cargo test --release -p scenario --test corpus`, which rewrites the
//! `.expected` files (and writes those of new `.toml` files), then read `git diff` before
//! committing: a message goes into the corpus only once it names the place and says what
//! was expected.

use scenario::{LoadOptions, load_str};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Fewer files than this means the corpus lost files (a bad rename, a bad glob).
const MIN_FILES: usize = 100;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The loader's output for one file, or why there is none (accepted, panicked).
fn output(name: &str, text: &str) -> Result<String, String> {
    let loaded = std::panic::catch_unwind(|| {
        load_str(text, Path::new(name), &LoadOptions::default()).map(|v| v.len())
    });
    match loaded {
        Err(_) => Err(format!("{name}: the loader panicked")),
        Ok(Ok(n)) => Err(format!("{name}: accepted ({n} variants), expected errors")),
        Ok(Err(e)) => Ok(format!("{e}\n")),
    }
}

/// Every `error:` line must read `error: NAME:LINE:COLUMN: ...` with a line of the file:
/// an error without a place sends the user searching.
fn check_located(name: &str, text: &str, out: &str) -> Vec<String> {
    let lines = text.lines().count() + 1;
    let mut bad = Vec::new();
    for l in out.lines().filter(|l| l.starts_with("error:")) {
        let place = l.strip_prefix(&format!("error: {name}:")).and_then(|rest| {
            let mut parts = rest.splitn(3, ':');
            let line: usize = parts.next()?.parse().ok()?;
            let col: usize = parts.next()?.parse().ok()?;
            Some((line, col, parts.next()?))
        });
        match place {
            Some((line, col, rest))
                if (1..=lines).contains(&line) && col > 0 && rest.starts_with(' ') => {}
            _ => bad.push(format!("{name}: not located at a line and column: {l}")),
        }
    }
    bad
}

#[test]
fn every_bad_input_is_rejected_with_the_expected_errors() {
    let dir = corpus_dir();
    let bless = std::env::var_os("MPTCP_LAB_BLESS").is_some_and(|v| v == "1");
    let (mut tomls, mut expected) = (BTreeSet::new(), BTreeSet::new());
    for entry in std::fs::read_dir(&dir).expect("tests/corpus") {
        let path = entry.expect("corpus entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => tomls.insert(stem),
            Some("expected") => expected.insert(stem),
            _ => panic!(
                "{}: only .toml and .expected files belong in the corpus",
                path.display()
            ),
        };
    }
    assert!(
        tomls.len() >= MIN_FILES,
        "the corpus has {} scenario files, expected at least {MIN_FILES}",
        tomls.len()
    );
    let mut failures = Vec::new();
    for stem in expected.difference(&tomls) {
        failures.push(format!("{stem}.expected has no {stem}.toml: remove it"));
    }
    for stem in &tomls {
        let name = format!("tests/corpus/{stem}.toml");
        let text = std::fs::read_to_string(dir.join(format!("{stem}.toml"))).expect("readable");
        let out = match output(&name, &text) {
            Ok(out) => out,
            Err(why) => {
                failures.push(why);
                continue;
            }
        };
        failures.extend(check_located(&name, &text, &out));
        let expected_path = dir.join(format!("{stem}.expected"));
        if bless {
            std::fs::write(&expected_path, &out).expect("write .expected");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Err(_) => failures.push(format!(
                "{name} has no {stem}.expected (MPTCP_LAB_BLESS=1 writes it)"
            )),
            Ok(want) if want != out => failures.push(format!(
                "{name}: the errors differ from {stem}.expected\n--- expected\n{want}--- got\n{out}"
            )),
            Ok(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in the corpus:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
