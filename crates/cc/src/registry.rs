//! Every congestion control this project knows, once: its name, the names users also know it
//! by, how to make one, and the id its eBPF program publishes. Scenario validation, the
//! simulator and the kernel tooling all look algorithms up here.

use crate::{Balia, CongestionControl, Ewtcp, FullyCoupled, Lia, Olia, Reno, Wvegas};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlgorithmId {
    Reno,
    Ewtcp,
    FullyCoupled,
    Lia,
    Olia,
    Balia,
    Wvegas,
}

pub struct AlgorithmInfo {
    pub id: AlgorithmId,
    /// The name results and the kernel use.
    pub name: &'static str,
    /// Other accepted names: "uncoupled" (Reno on each subflow), and "coupled", the out-of-tree
    /// Linux MPTCP's name for LIA.
    pub aliases: &'static [&'static str],
    /// `MLAB_ALG_*` of the eBPF programs (mlab_kern.h), for the algorithms that have one.
    pub kernel_id: Option<u8>,
    make: fn() -> Box<dyn CongestionControl>,
}

pub const REGISTRY: [AlgorithmInfo; 7] = [
    AlgorithmInfo {
        id: AlgorithmId::Reno,
        name: "reno",
        aliases: &["uncoupled"],
        kernel_id: None,
        make: || Box::new(Reno),
    },
    AlgorithmInfo {
        id: AlgorithmId::Ewtcp,
        name: "ewtcp",
        aliases: &[],
        kernel_id: Some(5),
        make: || Box::new(Ewtcp),
    },
    AlgorithmInfo {
        id: AlgorithmId::FullyCoupled,
        name: "fullycoupled",
        aliases: &[],
        kernel_id: Some(6),
        make: || Box::new(FullyCoupled),
    },
    AlgorithmInfo {
        id: AlgorithmId::Lia,
        name: "lia",
        aliases: &["coupled"],
        kernel_id: Some(1),
        make: || Box::new(Lia),
    },
    AlgorithmInfo {
        id: AlgorithmId::Olia,
        name: "olia",
        aliases: &[],
        kernel_id: Some(2),
        make: || Box::new(Olia::default()),
    },
    AlgorithmInfo {
        id: AlgorithmId::Balia,
        name: "balia",
        aliases: &[],
        kernel_id: Some(3),
        make: || Box::new(Balia),
    },
    AlgorithmInfo {
        id: AlgorithmId::Wvegas,
        name: "wvegas",
        aliases: &[],
        kernel_id: Some(4),
        make: || Box::new(Wvegas::default()),
    },
];

impl AlgorithmId {
    pub fn info(self) -> &'static AlgorithmInfo {
        REGISTRY
            .iter()
            .find(|i| i.id == self)
            .expect("every id is in the registry")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// By its name or an alias.
    pub fn parse(name: &str) -> Option<AlgorithmId> {
        REGISTRY
            .iter()
            .find(|i| i.name == name || i.aliases.contains(&name))
            .map(|i| i.id)
    }

    pub fn from_kernel_id(id: u8) -> Option<AlgorithmId> {
        REGISTRY
            .iter()
            .find(|i| i.kernel_id == Some(id))
            .map(|i| i.id)
    }

    /// A fresh instance for one connection.
    pub fn instantiate(self) -> Box<dyn CongestionControl> {
        (self.info().make)()
    }
}

impl fmt::Display for AlgorithmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fresh instance of the algorithm of that name or alias.
pub fn by_name(name: &str) -> Option<Box<dyn CongestionControl>> {
    AlgorithmId::parse(name).map(AlgorithmId::instantiate)
}

/// Every accepted name, aliases included (for did-you-mean suggestions).
pub fn accepted_names() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .flat_map(|i| std::iter::once(i.name).chain(i.aliases.iter().copied()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_kernel_ids() {
        for info in &REGISTRY {
            assert_eq!(AlgorithmId::parse(info.name), Some(info.id));
            assert_eq!(info.id.instantiate().name(), info.name);
            if let Some(k) = info.kernel_id {
                assert_eq!(AlgorithmId::from_kernel_id(k), Some(info.id));
            }
        }
        assert_eq!(AlgorithmId::parse("coupled"), Some(AlgorithmId::Lia));
        assert_eq!(AlgorithmId::parse("uncoupled"), Some(AlgorithmId::Reno));
        assert_eq!(AlgorithmId::parse("cubic"), None);
        assert_eq!(accepted_names().len(), 9);
    }
}
