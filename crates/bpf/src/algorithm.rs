//! The four programs and the names they register under.

use crate::error::{CcError, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    Lia,
    Olia,
    Balia,
    Wvegas,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Lia,
        Algorithm::Olia,
        Algorithm::Balia,
        Algorithm::Wvegas,
    ];

    /// The name users know from the out-of-tree kernel, which is also the name of the
    /// struct_ops variable in the object.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Lia => "lia",
            Algorithm::Olia => "olia",
            Algorithm::Balia => "balia",
            Algorithm::Wvegas => "wvegas",
        }
    }

    /// The id the programs write into the published state (MLAB_ALG_* in mlab_kern.h).
    pub fn id(self) -> u8 {
        match self {
            Algorithm::Lia => 1,
            Algorithm::Olia => 2,
            Algorithm::Balia => 3,
            Algorithm::Wvegas => 4,
        }
    }

    pub fn from_id(id: u8) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.id() == id)
    }

    pub fn parse(name: &str) -> Result<Algorithm> {
        match name {
            // "coupled" is what the out-of-tree kernel called LIA.
            "lia" | "coupled" => Ok(Algorithm::Lia),
            "olia" => Ok(Algorithm::Olia),
            "balia" => Ok(Algorithm::Balia),
            "wvegas" => Ok(Algorithm::Wvegas),
            other => Err(CcError::Unknown(other.to_string())),
        }
    }

    /// `["all"]` or no names means all four; otherwise each name, without repeats.
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
