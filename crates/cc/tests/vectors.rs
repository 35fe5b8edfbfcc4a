//! The committed vectors are the reference's current answers, and they cover the ranges
//! the kernel code must handle.

use mptcp_cc::vectors::{
    FORMAT, VectorFile, cwnd_limited_answer, generate, to_json, window_answer, wvegas_answer,
};

fn committed() -> (String, VectorFile) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/vectors.json");
    let text = std::fs::read_to_string(path).expect("testdata/vectors.json exists");
    let file = serde_json::from_str(&text).expect("vectors.json parses");
    (text, file)
}

#[test]
fn committed_vectors_are_the_references_answers() {
    let (text, file) = committed();
    assert_eq!(file.format, FORMAT);
    for (i, c) in file.window_cases.iter().enumerate() {
        let (inc, after) = window_answer(&c.algorithm, &c.subflows, c.r);
        assert_eq!(
            (inc, after),
            (c.increase_per_packet, c.cwnd_after_loss),
            "window case {i}: {c:?}"
        );
    }
    for (i, c) in file.wvegas_cases.iter().enumerate() {
        assert_eq!(wvegas_answer(c), c.expected, "wvegas case {i}: {c:?}");
    }
    for (i, c) in file.cwnd_limited_cases.iter().enumerate() {
        assert_eq!(
            cwnd_limited_answer(c),
            c.expected,
            "cwnd-limited case {i}: {c:?}"
        );
    }
    let answers = |want| {
        file.cwnd_limited_cases
            .iter()
            .filter(|c| c.expected == want)
            .count()
    };
    assert!(
        answers(true) > 20 && answers(false) > 20,
        "both answers covered"
    );
    assert!(
        text == to_json(&generate()),
        "vectors.json is stale: cargo run -p mptcp-cc --example export-vectors > crates/cc/testdata/vectors.json"
    );
}

#[test]
fn vectors_cover_the_stated_ranges() {
    let (_, file) = committed();
    let subflows = || file.window_cases.iter().flat_map(|c| c.subflows.iter());
    assert_eq!(subflows().map(|s| s.cwnd).min(), Some(1));
    assert_eq!(subflows().map(|s| s.cwnd).max(), Some(1 << 20));
    assert_eq!(
        subflows()
            .filter(|s| s.srtt_us > 0)
            .map(|s| s.srtt_us)
            .min(),
        Some(10)
    );
    assert_eq!(subflows().map(|s| s.srtt_us).max(), Some(10_000_000));
    assert!(
        subflows().any(|s| s.srtt_us == 0),
        "a subflow without an RTT sample"
    );
    assert!(subflows().any(|s| !s.established));
    let sizes: std::collections::BTreeSet<usize> =
        file.window_cases.iter().map(|c| c.subflows.len()).collect();
    assert_eq!(sizes, (1..=8).collect());
    for c in &file.window_cases {
        assert!(
            c.increase_per_packet.is_finite() && c.cwnd_after_loss >= 1.0,
            "{c:?}"
        );
    }
    for alg in mptcp_cc::vectors::WINDOW_ALGORITHMS {
        assert!(
            file.window_cases
                .iter()
                .filter(|c| c.algorithm == *alg)
                .count()
                >= 100,
            "{alg}"
        );
    }
    let ww = &file.wvegas_cases;
    assert!(ww.iter().any(|c| c.expected.slow_start));
    assert!(ww.iter().any(|c| c.expected.cwnd > c.cwnd as f64));
    assert!(
        ww.iter().any(|c| c.expected.cwnd < c.cwnd as f64 - 1.5),
        "a drain"
    );
}
