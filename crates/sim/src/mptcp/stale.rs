//! What the connection does when a subflow's retransmission timer fires while others are
//! established: the subflow may be dead (an interface went down), so it is marked stale
//! (the scheduler avoids it until it is heard from) and the data it holds that the peer has
//! not selectively acknowledged is queued again at the data level for the other subflows.

use crate::connection::ClientSubflow;
use crate::mptcp::DataSender;

/// Subflow `s` timed out. Returns whether its data was reinjected.
pub fn on_subflow_timeout(subflows: &mut [ClientSubflow], s: usize, data: &mut DataSender) -> bool {
    let others = subflows
        .iter()
        .enumerate()
        .any(|(i, sf)| i != s && sf.is_established());
    if !others {
        return false;
    }
    let sf = &mut subflows[s];
    sf.stale = true;
    data.reinject(sf.tx.unsacked_dsns());
    true
}
