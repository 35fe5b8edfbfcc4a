//! The baseline: every connection of the source on its one path (in the paper's single-path
//! network each edge router, and so each of its customers, is bound to one uplink).

use crate::{Observation, PathId, PathSelector};

#[derive(Clone, Debug)]
pub struct SinglePath {
    pub path: PathId,
}

impl PathSelector for SinglePath {
    fn choose(&mut self, _uniform: f64) -> PathId {
        self.path
    }

    fn observe(&mut self, _path: PathId, _observed: &Observation) {}
}
