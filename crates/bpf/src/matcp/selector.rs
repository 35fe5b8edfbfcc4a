//! The selectors by the names the scenarios use (`select = { kind = ..., variation = ... }`),
//! and the numbers the programs know them by (`enum matcp_selector`, matcp_select.h).

use super::error::{MatcpError, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Always the first path: the paper's baseline, one uplink per source.
    SinglePath,
    /// Smallest SRTT.
    Rtt,
    /// Least queueing: SRTT less the path's smallest RTT.
    RttVariation,
    /// RTT variation read as RFC 6298 RTTVAR.
    Rttvar,
    /// Smallest share of segments retransmitted.
    Drops,
    /// The paper's equation 2: random, weighted by RTT.
    WeightedRtt,
}

impl Selector {
    pub const ALL: [Selector; 6] = [
        Selector::SinglePath,
        Selector::Rtt,
        Selector::RttVariation,
        Selector::Rttvar,
        Selector::Drops,
        Selector::WeightedRtt,
    ];

    /// `kind` as in the scenarios; `rttvar` picks RTT variation's other reading.
    pub fn parse(kind: &str, rttvar: bool) -> Result<Selector> {
        Ok(match kind {
            "single-path" => Selector::SinglePath,
            "rtt" => Selector::Rtt,
            "rtt-variation" if rttvar => Selector::Rttvar,
            "rtt-variation" => Selector::RttVariation,
            "drops" => Selector::Drops,
            "weighted-rtt" => Selector::WeightedRtt,
            other => return Err(MatcpError::UnknownSelector(other.to_string())),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Selector::SinglePath => "single-path",
            Selector::Rtt => "rtt",
            Selector::RttVariation => "rtt-variation",
            Selector::Rttvar => "rtt-variation (rttvar)",
            Selector::Drops => "drops",
            Selector::WeightedRtt => "weighted-rtt",
        }
    }

    /// `enum matcp_selector`.
    pub fn id(self) -> u32 {
        match self {
            Selector::SinglePath => 0,
            Selector::Rtt => 1,
            Selector::RttVariation => 2,
            Selector::Rttvar => 3,
            Selector::Drops => 4,
            Selector::WeightedRtt => 5,
        }
    }

    pub fn from_id(id: u32) -> Option<Selector> {
        Selector::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Whether it takes the refresh constant R (the lowest-measure ones).
    pub fn refreshes(self) -> bool {
        matches!(
            self,
            Selector::Rtt | Selector::RttVariation | Selector::Rttvar | Selector::Drops
        )
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
