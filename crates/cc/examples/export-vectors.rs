//! Writes the shared test vectors to stdout: `cargo run -p mptcp-cc --example export-vectors
//! > crates/cc/testdata/vectors.json`.

fn main() {
    print!(
        "{}",
        mptcp_cc::vectors::to_json(&mptcp_cc::vectors::generate())
    );
}
