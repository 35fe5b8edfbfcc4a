//! One task: its key (what its result depends on) and its stored result.

use anyhow::{Context, Result};
use scenario::{RunResult, Scenario};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The content hash of one task: 128 bits of SHA-256, in hex, used as its file name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskKey(String);

impl fmt::Display for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a run's outcome depends on, and nothing else: a change of a check, a plot, an
/// ordering, a description or a variant's name keeps the results; a change of a rate, a
/// flow, an event, the measurement or the seed does not. The backend's options (sysctls,
/// captures) are part of it for the kernel backend.
#[derive(Serialize)]
struct KeyMaterial<'a> {
    /// Bumped when the meaning of stored results changes.
    format: u32,
    backend: &'a str,
    backend_options: &'a [String],
    seed: u64,
    duration: scenario::units::Duration,
    /// Draws the links' delays.
    scenario_seed: u64,
    nodes: &'a [scenario::model::Node],
    links: &'a [scenario::model::Link],
    flows: &'a [scenario::model::FlowGroup],
    events: &'a [scenario::model::Event],
    measure: &'a scenario::spec::MeasureSpec,
}

impl TaskKey {
    pub fn new(sc: &Scenario, seed: u64, backend: &str, backend_options: &[String]) -> Self {
        let material = KeyMaterial {
            format: 1,
            backend,
            backend_options,
            seed,
            duration: sc.duration,
            scenario_seed: sc.seed,
            nodes: &sc.nodes,
            links: &sc.links,
            flows: &sc.flows,
            events: &sc.events,
            measure: &sc.measure,
        };
        // serde_json writes struct fields in declaration order and the model holds no hash
        // maps, so the same variant always gives the same bytes.
        let bytes = serde_json::to_vec(&material).expect("the model serialises");
        let digest = Sha256::digest(&bytes);
        TaskKey(digest[..16].iter().map(|b| format!("{b:02x}")).collect())
    }

    /// A key read back from a file name: 32 lower-case hex digits, or nothing.
    pub fn parse(name: &str) -> Option<Self> {
        (name.len() == 32
            && name
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| TaskKey(name.to_string()))
    }
}

/// A task's stored result: the run as the backend gave it, and the version that made it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TaskResult {
    pub key: TaskKey,
    /// The program version that ran it (`campaign::VERSION` of that build).
    pub version: String,
    pub result: RunResult,
}

impl TaskResult {
    /// MessagePack with field names: compact, self-describing, and exact for every f64
    /// (NaN included, which JSON cannot carry).
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(self).expect("a task result serialises")
    }

    pub fn decode(bytes: &[u8]) -> Result<Self> {
        rmp_serde::from_slice(bytes).context("not a task result of this format")
    }
}
