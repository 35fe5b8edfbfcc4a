//! Which subflows a connection opens, and when: Linux's in-kernel path manager with the
//! endpoints the scenario gives. Subflow 0 opens the connection (MP_CAPABLE). Once the
//! connection is fully established (the first data acknowledgement confirms MP_CAPABLE,
//! `mptcp_pm_fully_established()` in net/mptcp/pm.c), the path manager sends an MP_JOIN for
//! every other subflow at once (`mptcp_pm_create_subflow_or_signal_addr()` in
//! net/mptcp/pm_kernel.c walks the local endpoints in one go).

use std::ops::Range;

pub struct PathManager {
    subflows: usize,
    joined: bool,
}

impl PathManager {
    /// A connection with `subflows` planned subflows (1 for plain TCP).
    pub fn new(subflows: usize) -> Self {
        PathManager {
            subflows,
            joined: false,
        }
    }

    /// The connection became fully established: the subflows to join now (once).
    pub fn on_fully_established(&mut self) -> Range<usize> {
        if std::mem::replace(&mut self.joined, true) {
            return 0..0;
        }
        1..self.subflows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_every_other_subflow_once() {
        let mut pm = PathManager::new(3);
        assert_eq!(pm.on_fully_established(), 1..3);
        assert!(pm.on_fully_established().is_empty());
        assert!(PathManager::new(1).on_fully_established().is_empty());
    }
}
