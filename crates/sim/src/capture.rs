//! Captures of the simulator's links (`--pcap LINK`), in the form the kernel backend's
//! emulator writes them (`net::capture`): each packet as it reaches the far end of its link,
//! stamped with the simulated time, its headers as Linux would send them (`wire`). Packets
//! are addressed as on the kernel backend: a flow's server at the host interface where the
//! flow's first path ends (`testbed::backend`'s `to`), listening on port 5001 + the flow's
//! number, and on 4000 + k for the k-th extra ndiffports subflow (`testbed::ndiffports`);
//! each subflow's client at the interface its path leaves by, with a port of its own in
//! Linux's ephemeral range.

use crate::ids::{ConnId, SubflowId};
use crate::packet::Packet;
use crate::wire::{ConnShape, SubflowEnds, encode};
use anyhow::Result;
use net::capture::{Capture, interface_address};
use scenario::Scenario;
use scenario::model::{DirId, MAX_SUBFLOWS};
use scenario::spec::PathManager;
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

/// Flow `i` of the run listens on this port + `i`, as on the kernel backend.
const FIRST_SERVER_PORT: u16 = 5001;
/// The kernel backend's server port for ndiffports subflow `k >= 1` is this + `k`.
const NDIFFPORTS_BASE_PORT: u16 = 4000;
/// Linux's `net.ipv4.ip_local_port_range`, 32768 to 60999: clients' ports, one per
/// subflow, repeating after 3,529 connections.
const EPHEMERAL_FIRST: u64 = 32_768;
const EPHEMERAL_PORTS: u64 = 28_232;

/// Who sent a captured packet, and what its headers say of the connection.
pub struct Sender {
    pub conn: ConnId,
    pub subflow: SubflowId,
    /// The flow of the scenario's layout the connection belongs to.
    pub flow: usize,
    /// The flow's group in the scenario.
    pub group: usize,
    pub shape: ConnShape,
}

/// How a group's connections are addressed.
struct GroupAddressing {
    /// The server's interface: where the group's first path ends.
    server_if: DirId,
    ndiffports: bool,
}

/// The links a run captures, each with its file.
pub struct LinkCaptures {
    by_link: Vec<Option<Capture>>,
    groups: Vec<GroupAddressing>,
    /// The packet being written (reused).
    frame: Vec<u8>,
    /// The first write that failed: its capture is closed and the error reported when the
    /// run ends, the run itself going on.
    failed: Option<anyhow::Error>,
}

impl LinkCaptures {
    /// Creates the files of `sc`'s links in `files` (as `net::capture::capture_files`
    /// gives them); if one cannot be made, those made before are removed.
    pub fn create(sc: &Scenario, files: &[(usize, PathBuf)]) -> Result<Self> {
        let mut by_link: Vec<Option<Capture>> = (0..sc.links.len()).map(|_| None).collect();
        for (i, (link, path)) in files.iter().enumerate() {
            match Capture::create(path, Duration::ZERO) {
                Ok(c) => by_link[*link] = Some(c),
                Err(e) => {
                    drop(by_link);
                    for (_, made) in &files[..i] {
                        let _ = std::fs::remove_file(made);
                    }
                    return Err(e);
                }
            }
        }
        let groups = sc
            .flows
            .iter()
            .map(|group| {
                let first = net::paths::subflow_routes(group)
                    .into_iter()
                    .next()
                    .and_then(|r| r.hops.last().copied());
                GroupAddressing {
                    // A group always has a path (the loader checks it).
                    server_if: first.map(DirId::reverse).unwrap_or(DirId(0)),
                    ndiffports: group.path_manager == PathManager::Ndiffports,
                }
            })
            .collect();
        Ok(LinkCaptures {
            by_link,
            groups,
            frame: Vec::with_capacity(128),
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
        let slot = &mut self.by_link[dir.link().index()];
        let Some(capture) = slot else {
            return;
        };
        // The route runs from the sender's interface to the receiver's; the client's is
        // its end of the packet's route.
        let client_if = if pkt.kind.to_server() {
            hops[0]
        } else {
            hops[hops.len() - 1].reverse()
        };
        let group = &self.groups[from.group];
        let client_port = EPHEMERAL_FIRST
            + (from.conn.0 as u64 * MAX_SUBFLOWS as u64 + from.subflow.0 as u64) % EPHEMERAL_PORTS;
        let server_port = match from.subflow.0 {
            k if group.ndiffports && k > 0 => NDIFFPORTS_BASE_PORT + k as u16,
            _ => FIRST_SERVER_PORT.wrapping_add(from.flow as u16),
        };
        let ends = SubflowEnds {
            client: SocketAddrV4::new(interface_address(client_if), client_port as u16),
            server: SocketAddrV4::new(interface_address(group.server_if), server_port),
        };
        let wire_len = encode(pkt, ends, from.shape, &mut self.frame);
        if let Err(e) = capture.write_headers(at, &self.frame, wire_len) {
            // Nothing more goes to a file that failed.
            *slot = None;
            self.failed.get_or_insert(e);
        }
    }

    /// Closes every file; the first failure, if there was one.
    pub fn finish(self) -> Result<()> {
        let mut failed = self.failed;
        for capture in self.by_link.into_iter().flatten() {
            if let Err(e) = capture.finish() {
                failed.get_or_insert(e);
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
