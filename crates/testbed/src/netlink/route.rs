//! rtnetlink: bring interfaces up, add addresses, routes and source-address rules; read an
//! interface's counters.

use super::Channel;
use anyhow::{Context, Result};
use netlink_packet_core::{NLM_F_CREATE, NLM_F_EXCL};
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage, Stats64};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteMessage, RouteMetric, RouteProtocol, RouteScope, RouteType,
};
use netlink_packet_route::rule::{RuleAction, RuleAttribute, RuleMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use std::net::{IpAddr, Ipv4Addr};

pub struct Rtnl(Channel);

impl Rtnl {
    pub fn open() -> Result<Self> {
        Ok(Rtnl(
            Channel::open(netlink_sys::protocols::NETLINK_ROUTE).context("opening rtnetlink")?,
        ))
    }

    pub fn set_up(&mut self, index: u32) -> Result<()> {
        let mut m = LinkMessage::default();
        m.header.index = index;
        m.header.flags = LinkFlags::Up;
        m.header.change_mask = LinkFlags::Up;
        self.0.request(
            RouteNetlinkMessage::SetLink(m),
            0,
            "setting an interface up",
        )?;
        Ok(())
    }

    /// `ip -s link show IFINDEX`: the interface's counters (`struct rtnl_link_stats64`), of
    /// the namespace this socket was opened in, whichever thread asks.
    pub fn link_stats(&mut self, index: u32) -> Result<Stats64> {
        let mut m = LinkMessage::default();
        m.header.index = index;
        let replies = self.0.request(
            RouteNetlinkMessage::GetLink(m),
            0,
            &format!("reading the counters of interface {index}"),
        )?;
        replies
            .iter()
            .filter_map(|r| match r {
                RouteNetlinkMessage::NewLink(l) => l.attributes.iter().find_map(|a| match a {
                    LinkAttribute::Stats64(s) => Some(*s),
                    _ => None,
                }),
                _ => None,
            })
            .next()
            .with_context(|| format!("interface {index}: no counters in the kernel's reply"))
    }

    pub fn add_address(&mut self, index: u32, addr: Ipv4Addr, prefix: u8) -> Result<()> {
        let mut m = AddressMessage::default();
        m.header.family = AddressFamily::Inet;
        m.header.prefix_len = prefix;
        m.header.index = index;
        m.attributes.push(AddressAttribute::Local(addr.into()));
        m.attributes.push(AddressAttribute::Address(addr.into()));
        self.0.request(
            RouteNetlinkMessage::NewAddress(m),
            NLM_F_CREATE | NLM_F_EXCL,
            &format!("adding address {addr}"),
        )?;
        Ok(())
    }

    /// `ip route add DST/PREFIX dev IFINDEX table TABLE [quickack 1]`: a directly attached
    /// route (TUN devices are point to point, there is no gateway to resolve). With
    /// `quickack`, TCP acknowledges every segment it receives from DST at once (RTAX_QUICKACK:
    /// Linux's only switch that turns delayed ACKs off for good).
    pub fn add_route(
        &mut self,
        table: u32,
        dst: Ipv4Addr,
        prefix: u8,
        index: u32,
        quickack: bool,
    ) -> Result<()> {
        let mut m = RouteMessage::default();
        m.header.address_family = AddressFamily::Inet;
        m.header.destination_prefix_length = prefix;
        m.header.table = if table < 256 { table as u8 } else { 0 };
        m.header.protocol = RouteProtocol::Static;
        m.header.scope = RouteScope::Link;
        m.header.kind = RouteType::Unicast;
        if prefix > 0 {
            m.attributes
                .push(RouteAttribute::Destination(RouteAddress::Inet(dst)));
        }
        m.attributes.push(RouteAttribute::Table(table));
        m.attributes.push(RouteAttribute::Oif(index));
        if quickack {
            m.attributes
                .push(RouteAttribute::Metrics(vec![RouteMetric::QuickAck(1)]));
        }
        self.0.request(
            RouteNetlinkMessage::NewRoute(m),
            NLM_F_CREATE | NLM_F_EXCL,
            &format!("adding route {dst}/{prefix} (table {table})"),
        )?;
        Ok(())
    }

    /// `ip rule add from SRC lookup TABLE priority PRIO`: source-address policy routing, so
    /// that a subflow bound to an interface's address leaves through that interface.
    pub fn add_rule(&mut self, src: Ipv4Addr, table: u32, priority: u32) -> Result<()> {
        let mut m = RuleMessage::default();
        m.header.family = AddressFamily::Inet;
        m.header.src_len = 32;
        m.header.table = if table < 256 { table as u8 } else { 0 };
        m.header.action = RuleAction::ToTable;
        m.attributes.push(RuleAttribute::Source(src.into()));
        m.attributes.push(RuleAttribute::Table(table));
        m.attributes.push(RuleAttribute::Priority(priority));
        self.0.request(
            RouteNetlinkMessage::NewRule(m),
            NLM_F_CREATE | NLM_F_EXCL,
            &format!("adding rule from {src} lookup {table}"),
        )?;
        Ok(())
    }

    /// `ip route get DST from SRC` (`ip -6` for IPv6): the interface a packet from SRC to DST
    /// leaves by, after the policy rules. An error when the kernel has no route
    /// (ENETUNREACH), SRC is not one of its addresses, or the two differ in family.
    pub fn output_interface(&mut self, src: IpAddr, dst: IpAddr) -> Result<u32> {
        let (family, len, src_attr, dst_attr) = match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => (
                AddressFamily::Inet,
                32,
                RouteAddress::Inet(s),
                RouteAddress::Inet(d),
            ),
            (IpAddr::V6(s), IpAddr::V6(d)) => (
                AddressFamily::Inet6,
                128,
                RouteAddress::Inet6(s),
                RouteAddress::Inet6(d),
            ),
            _ => anyhow::bail!("route from {src} to {dst}: the addresses differ in family"),
        };
        let mut m = RouteMessage::default();
        m.header.address_family = family;
        m.header.destination_prefix_length = len;
        m.header.source_prefix_length = len;
        m.attributes.push(RouteAttribute::Destination(dst_attr));
        m.attributes.push(RouteAttribute::Source(src_attr));
        let replies = self.0.request(
            RouteNetlinkMessage::GetRoute(m),
            0,
            &format!("route from {src} to {dst}"),
        )?;
        replies
            .iter()
            .find_map(|r| match r {
                RouteNetlinkMessage::NewRoute(r) => r.attributes.iter().find_map(|a| match a {
                    RouteAttribute::Oif(i) => Some(*i),
                    _ => None,
                }),
                _ => None,
            })
            .with_context(|| format!("route from {src} to {dst}: no interface in the reply"))
    }
}
