//! Typed indices, so that a connection, a subflow of it and a flow of the scenario cannot be
//! mixed up.

/// A connection of the run (an on/off flow opens one per burst; a reconnect opens another).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ConnId(pub u32);

/// A subflow of a connection: 0 is the one that opened it (MP_CAPABLE, or the only TCP one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SubflowId(pub u8);

/// A flow of the scenario's layout (one source, which may open many connections).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FlowId(pub u32);

impl ConnId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl SubflowId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl FlowId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
