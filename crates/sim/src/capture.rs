//! Captures of the simulator's links (`--pcap LINK`), in the form the kernel backend's
//! emulator writes them (`net::capture`): each packet as it reaches the far end of its link,
//! stamped with the simulated time, its headers as Linux would send them (`wire`). Hosts'
//! interfaces have the kernel backend's addresses; a flow's server listens where the kernel
//! backend's does (port 5001 + the flow's number) and each subflow's client has a port of
//! its own in Linux's ephemeral range, so the captures of both backends read alike.

use crate::ids::{ConnId, SubflowId};
use crate::packet::Packet;
use crate::wire::{SubflowEnds, encode};
use anyhow::Result;
use net::capture::{Capture, interface_address};
use scenario::model::{DirId, MAX_SUBFLOWS};
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

/// Flow `i` of the run listens on this port + `i`, as on the kernel backend.
const FIRST_SERVER_PORT: u16 = 5001;
/// Linux's `net.ipv4.ip_local_port_range`, 32768 to 60999: clients' ports, one per
/// subflow, repeating after 3,529 connections.
const EPHEMERAL_FIRST: u64 = 32_768;
const EPHEMERAL_PORTS: u64 = 28_232;

/// Who sent a captured packet, as the capture names them.
pub struct Sender {
    pub conn: ConnId,
    pub subflow: SubflowId,
    /// The flow of the scenario's layout the connection belongs to.
    pub flow: usize,
    pub mptcp: bool,
}

/// The links a run captures, each with its file.
pub struct LinkCaptures {
    by_link: Vec<Option<Capture>>,
    /// The packet being written (reused).
    frame: Vec<u8>,
    /// IPv4 identification of the next packet written.
    ip_id: u16,
    /// The first write that failed: reported when the run ends, the run itself going on.
    failed: Option<anyhow::Error>,
}

impl LinkCaptures {
    /// Creates the files: `files` as `net::capture::capture_files` gives them.
    pub fn create(links: usize, files: &[(usize, PathBuf)]) -> Result<Self> {
        let mut by_link: Vec<Option<Capture>> = (0..links).map(|_| None).collect();
        for (link, path) in files {
            by_link[*link] = Some(Capture::create(path, Duration::ZERO)?);
        }
        Ok(LinkCaptures {
            by_link,
            frame: Vec::with_capacity(128),
            ip_id: 0,
            failed: None,
        })
    }

    /// Whether the link of direction `dir` is captured.
    #[inline]
    pub fn captures(&self, dir: DirId) -> bool {
        self.by_link[dir.link().index()].is_some()
    }

    /// `pkt`, which reached the end of `dir` at `at` along a route of `hops`.
    pub fn write(&mut self, at: u64, dir: DirId, hops: &[DirId], pkt: &Packet, from: Sender) {
        let Some(capture) = &mut self.by_link[dir.link().index()] else {
            return;
        };
        let (first, last) = (hops[0], hops[hops.len() - 1].reverse());
        // The route runs from the sender's interface to the receiver's.
        let (client_if, server_if) = if pkt.kind.to_server() {
            (first, last)
        } else {
            (last, first)
        };
        let client_port = EPHEMERAL_FIRST
            + (from.conn.0 as u64 * MAX_SUBFLOWS as u64 + from.subflow.0 as u64) % EPHEMERAL_PORTS;
        let ends = SubflowEnds {
            client: SocketAddrV4::new(interface_address(client_if), client_port as u16),
            server: SocketAddrV4::new(
                interface_address(server_if),
                FIRST_SERVER_PORT.wrapping_add(from.flow as u16),
            ),
        };
        let wire_len = encode(pkt, ends, from.mptcp, self.ip_id, &mut self.frame);
        self.ip_id = self.ip_id.wrapping_add(1);
        if let Err(e) = capture.write_headers(at, &self.frame, wire_len)
            && self.failed.is_none()
        {
            self.failed = Some(e);
        }
    }

    /// Closes the files; the first write that failed, if one did.
    pub fn finish(self) -> Result<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        for capture in self.by_link.into_iter().flatten() {
            capture.finish()?;
        }
        Ok(())
    }
}
