//! The in-kernel MPTCP path manager over generic netlink (`mptcp_pm`, the family behind
//! `ip mptcp`): limits and endpoints. Attribute and command numbers are linux/mptcp_pm.h's.

use super::Channel;
use anyhow::{Context, Result, anyhow};
use netlink_packet_core::{
    DecodeError, DefaultNla, Emitable, NLA_F_NESTED, Nla, NlasIterator, Parseable,
    ParseableParametrized,
};
use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use netlink_packet_generic::{GenlFamily, GenlHeader, GenlMessage};
use std::net::Ipv4Addr;

const CMD_ADD_ADDR: u8 = 1;
const CMD_FLUSH_ADDRS: u8 = 4;
const CMD_SET_LIMITS: u8 = 5;
const CMD_GET_LIMITS: u8 = 6;

const ATTR_ADDR: u16 = 1;
const ATTR_RCV_ADD_ADDRS: u16 = 2;
const ATTR_SUBFLOWS: u16 = 3;

const ADDR_ATTR_FAMILY: u16 = 1;
const ADDR_ATTR_ID: u16 = 2;
const ADDR_ATTR_ADDR4: u16 = 3;
const ADDR_ATTR_PORT: u16 = 5;
const ADDR_ATTR_FLAGS: u16 = 6;
const ADDR_ATTR_IF_IDX: u16 = 7;

/// Endpoint flags (`ip mptcp endpoint add ... signal|subflow|backup|fullmesh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointFlags(pub u32);

impl EndpointFlags {
    pub const SIGNAL: EndpointFlags = EndpointFlags(1);
    pub const SUBFLOW: EndpointFlags = EndpointFlags(2);
    pub const BACKUP: EndpointFlags = EndpointFlags(4);
    pub const FULLMESH: EndpointFlags = EndpointFlags(8);
}

/// A `mptcp_pm` request or reply: a command and flat attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PmMessage {
    cmd: u8,
    attrs: Vec<DefaultNla>,
}

impl GenlFamily for PmMessage {
    fn family_name() -> &'static str {
        "mptcp_pm"
    }
    fn command(&self) -> u8 {
        self.cmd
    }
    fn version(&self) -> u8 {
        1
    }
}

impl Emitable for PmMessage {
    fn buffer_len(&self) -> usize {
        self.attrs.as_slice().buffer_len()
    }
    fn emit(&self, buffer: &mut [u8]) {
        self.attrs.as_slice().emit(buffer)
    }
}

impl ParseableParametrized<[u8], GenlHeader> for PmMessage {
    fn parse_with_param(buf: &[u8], header: GenlHeader) -> Result<Self, DecodeError> {
        let attrs = NlasIterator::new(buf)
            .map(|nla| nla.and_then(|nla| DefaultNla::parse(&nla)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PmMessage {
            cmd: header.cmd,
            attrs,
        })
    }
}

fn u32_attr(kind: u16, v: u32) -> DefaultNla {
    DefaultNla::new(kind, v.to_ne_bytes().to_vec())
}

/// The path manager of the calling thread's namespace.
pub struct MptcpPm {
    channel: Channel,
    family: u16,
}

impl MptcpPm {
    pub fn open() -> Result<Self> {
        let mut channel = Channel::open(netlink_sys::protocols::NETLINK_GENERIC)
            .context("opening generic netlink")?;
        let ask = GenlMessage::from_payload(GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName("mptcp_pm".into())],
        });
        let replies = channel
            .request(ask, 0, "looking up the mptcp_pm netlink family")
            .context("this kernel has no MPTCP path manager (CONFIG_MPTCP)")?;
        let family = replies
            .iter()
            .flat_map(|r| &r.payload.nlas)
            .find_map(|a| match a {
                GenlCtrlAttrs::FamilyId(id) => Some(*id),
                _ => None,
            })
            .ok_or_else(|| anyhow!("the kernel named no id for mptcp_pm"))?;
        Ok(MptcpPm { channel, family })
    }

    fn send(&mut self, cmd: u8, attrs: Vec<DefaultNla>, what: &str) -> Result<Vec<PmMessage>> {
        let mut msg = GenlMessage::from_payload(PmMessage { cmd, attrs });
        msg.set_resolved_family_id(self.family);
        Ok(self
            .channel
            .request(msg, 0, what)?
            .into_iter()
            .map(|m| m.payload)
            .collect())
    }

    /// `ip mptcp limits set subflow SUBFLOWS add_addr_accepted ACCEPTED`.
    pub fn set_limits(&mut self, subflows: u32, add_addr_accepted: u32) -> Result<()> {
        self.send(
            CMD_SET_LIMITS,
            vec![
                u32_attr(ATTR_RCV_ADD_ADDRS, add_addr_accepted),
                u32_attr(ATTR_SUBFLOWS, subflows),
            ],
            "setting MPTCP limits",
        )?;
        Ok(())
    }

    /// `(subflows, add_addr_accepted)` as the kernel has them.
    pub fn limits(&mut self) -> Result<(u32, u32)> {
        let replies = self.send(CMD_GET_LIMITS, Vec::new(), "reading MPTCP limits")?;
        let mut out = (0, 0);
        for a in replies.iter().flat_map(|r| &r.attrs) {
            let mut v = [0u8; 4];
            let mut bytes = vec![0u8; a.buffer_len()];
            a.emit(&mut bytes);
            v.copy_from_slice(&bytes[4..8]);
            match a.kind() & !NLA_F_NESTED {
                ATTR_SUBFLOWS => out.0 = u32::from_ne_bytes(v),
                ATTR_RCV_ADD_ADDRS => out.1 = u32::from_ne_bytes(v),
                _ => {}
            }
        }
        Ok(out)
    }

    /// `ip mptcp endpoint add ADDR [port PORT] dev IFINDEX id ID FLAGS`. A port is for
    /// `signal` endpoints only: the kernel listens there for joins, and announces the
    /// address with the port.
    pub fn add_endpoint(
        &mut self,
        addr: Ipv4Addr,
        port: Option<u16>,
        ifindex: u32,
        id: u8,
        flags: EndpointFlags,
    ) -> Result<()> {
        let mut inner = vec![
            DefaultNla::new(
                ADDR_ATTR_FAMILY,
                (libc::AF_INET as u16).to_ne_bytes().to_vec(),
            ),
            DefaultNla::new(ADDR_ATTR_ID, vec![id]),
            DefaultNla::new(ADDR_ATTR_ADDR4, addr.octets().to_vec()),
            u32_attr(ADDR_ATTR_FLAGS, flags.0),
            DefaultNla::new(ADDR_ATTR_IF_IDX, (ifindex as i32).to_ne_bytes().to_vec()),
        ];
        if let Some(port) = port {
            inner.push(DefaultNla::new(ADDR_ATTR_PORT, port.to_ne_bytes().to_vec()));
        }
        let mut nested = vec![0u8; inner.as_slice().buffer_len()];
        inner.as_slice().emit(&mut nested);
        self.send(
            CMD_ADD_ADDR,
            vec![DefaultNla::new(ATTR_ADDR | NLA_F_NESTED, nested)],
            &match port {
                Some(port) => format!("adding MPTCP endpoint {addr} port {port}"),
                None => format!("adding MPTCP endpoint {addr}"),
            },
        )?;
        Ok(())
    }

    /// `ip mptcp endpoint flush`.
    pub fn flush(&mut self) -> Result<()> {
        self.send(CMD_FLUSH_ADDRS, Vec::new(), "flushing MPTCP endpoints")?;
        Ok(())
    }
}
