//! Every shipped scenario's orderings compare what their statements name
//! (`report::statement`): a verdict is only about the values it ranked.

use scenario::load::display_value;
use scenario::{LoadOptions, load_file};
use std::path::PathBuf;

#[test]
fn every_shipped_ordering_ranks_each_value_its_statement_names() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let variants = load_file(file, &opts).unwrap_or_else(|e| panic!("{e}"));
        for o in &variants[0].orders {
            let mut values: Vec<String> = variants
                .iter()
                .filter_map(|v| v.params.get(&o.param).map(display_value))
                .collect();
            values.sort();
            values.dedup();
            let ranked: Vec<String> = o.ascending.iter().map(display_value).collect();
            let missing = report::statement::named_but_not_ranked(&o.statement, &values, &ranked);
            if !missing.is_empty() {
                wrong.push(format!(
                    "{}: \"{}\" names {missing:?} but ranks {ranked:?}",
                    file.display(),
                    o.statement
                ));
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} orderings found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
