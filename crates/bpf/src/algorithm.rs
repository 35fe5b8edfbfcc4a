//! The six programs and the names they register under: the algorithms of the registry
//! (`mptcp_cc::REGISTRY`) that have an eBPF implementation.

use crate::error::{CcError, Result};
use mptcp_cc::AlgorithmId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    Lia,
    Olia,
    Balia,
    Wvegas,
    Ewtcp,
    FullyCoupled,
}

impl Algorithm {
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Lia,
        Algorithm::Olia,
        Algorithm::Balia,
        Algorithm::Wvegas,
        Algorithm::Ewtcp,
        Algorithm::FullyCoupled,
    ];

    /// The algorithm in the registry.
    pub fn registry_id(self) -> AlgorithmId {
        match self {
            Algorithm::Lia => AlgorithmId::Lia,
            Algorithm::Olia => AlgorithmId::Olia,
            Algorithm::Balia => AlgorithmId::Balia,
            Algorithm::Wvegas => AlgorithmId::Wvegas,
            Algorithm::Ewtcp => AlgorithmId::Ewtcp,
            Algorithm::FullyCoupled => AlgorithmId::FullyCoupled,
        }
    }

    /// The program of a registry algorithm, if it has one.
    pub fn of(id: AlgorithmId) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.registry_id() == id)
    }

    /// The name registered with the kernel, which is also the name of the struct_ops
    /// variable in the object: the one users know from the out-of-tree kernel (`lia`, ...),
    /// the registry's name (`ewtcp`), or for fully coupled `fcoupled`. TCP_CA_NAME_MAX
    /// leaves 15 bytes, and the kernel backend's and the tests' private copies put up to 7
    /// before the name (`m12345`, `t12345a`): `fullycoupled` would not fit.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::FullyCoupled => "fcoupled",
            _ => self.registry_id().name(),
        }
    }

    /// The id the programs write into the published state (MLAB_ALG_* in mlab_kern.h).
    pub fn id(self) -> u8 {
        self.registry_id()
            .info()
            .kernel_id
            .expect("every eBPF algorithm has a kernel id in the registry")
    }

    pub fn from_id(id: u8) -> Option<Algorithm> {
        AlgorithmId::from_kernel_id(id).and_then(Algorithm::of)
    }

    /// By kernel name, registry name or alias ("coupled" is what the out-of-tree kernel
    /// called LIA; "fullycoupled" is the registry's name of `fcoupled`).
    pub fn parse(name: &str) -> Result<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .or_else(|| AlgorithmId::parse(name).and_then(Algorithm::of))
            .ok_or_else(|| CcError::Unknown(name.to_string()))
    }

    /// `["all"]` or no names means all six; otherwise each name, without repeats.
    pub fn parse_list(names: &[String]) -> Result<Vec<Algorithm>> {
        if names.is_empty() || names.iter().any(|n| n == "all") {
            return Ok(Algorithm::ALL.to_vec());
        }
        let mut out = Vec::new();
        for n in names {
            let a = Algorithm::parse(n)?;
            if !out.contains(&a) {
                out.push(a);
            }
        }
        Ok(out)
    }

    /// The compiled BPF object.
    pub fn object(self) -> Result<&'static [u8]> {
        objects::get(self)
    }
}

#[cfg(not(mlab_no_bpf))]
mod objects {
    use super::Algorithm;
    use crate::error::Result;

    pub fn get(a: Algorithm) -> Result<&'static [u8]> {
        Ok(match a {
            Algorithm::Lia => include_bytes!(concat!(env!("OUT_DIR"), "/lia.bpf.o")),
            Algorithm::Olia => include_bytes!(concat!(env!("OUT_DIR"), "/olia.bpf.o")),
            Algorithm::Balia => include_bytes!(concat!(env!("OUT_DIR"), "/balia.bpf.o")),
            Algorithm::Wvegas => include_bytes!(concat!(env!("OUT_DIR"), "/wvegas.bpf.o")),
            Algorithm::Ewtcp => include_bytes!(concat!(env!("OUT_DIR"), "/ewtcp.bpf.o")),
            Algorithm::FullyCoupled => {
                include_bytes!(concat!(env!("OUT_DIR"), "/fcoupled.bpf.o"))
            }
        })
    }
}

#[cfg(mlab_no_bpf)]
mod objects {
    use super::Algorithm;
    use crate::error::{CcError, Result};

    pub fn get(_: Algorithm) -> Result<&'static [u8]> {
        Err(CcError::NotBuilt(env!("MLAB_NO_BPF")))
    }
}

/// Whether this build carries the BPF objects (and if not, why).
pub fn built() -> std::result::Result<(), &'static str> {
    #[cfg(mlab_no_bpf)]
    return Err(env!("MLAB_NO_BPF"));
    #[cfg(not(mlab_no_bpf))]
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Algorithm;

    #[test]
    fn every_name_parses_and_fits_the_kernel_with_a_private_prefix() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.name()).unwrap(), a);
            assert_eq!(Algorithm::parse(a.registry_id().name()).unwrap(), a);
            assert_eq!(Algorithm::from_id(a.id()), Some(a));
            // TCP_CA_NAME_MAX is 16 with the NUL; the tests' prefixes are "t12345a".
            assert!(format!("t12345a{}", a.name()).len() < 16, "{}", a.name());
        }
        assert_eq!(
            Algorithm::parse("fullycoupled").unwrap(),
            Algorithm::FullyCoupled
        );
        assert_eq!(Algorithm::parse("fcoupled").unwrap().name(), "fcoupled");
        assert_eq!(Algorithm::parse("coupled").unwrap(), Algorithm::Lia);
        assert!(Algorithm::parse("reno").is_err());
    }
}
