//! Netlink requests of the kernel backend: interfaces, addresses, routes and policy rules
//! (rtnetlink) and the MPTCP path manager (generic netlink `mptcp_pm`). Each request waits
//! for the kernel's acknowledgement, so a refusal surfaces as an error at the call that
//! caused it. A socket belongs to the network namespace of the thread that opened it.

mod mptcp_pm;
mod route;

pub use mptcp_pm::{EndpointFlags, MptcpPm};
pub use route::Rtnl;

use anyhow::{Result, anyhow, bail};
use netlink_packet_core::{
    NLM_F_ACK, NLM_F_REQUEST, NetlinkDeserializable, NetlinkHeader, NetlinkMessage, NetlinkPayload,
    NetlinkSerializable,
};
use netlink_sys::{Socket, SocketAddr};

/// One netlink socket and its sequence numbers.
pub struct Channel {
    socket: Socket,
    seq: u32,
}

impl Channel {
    pub fn open(protocol: isize) -> Result<Self> {
        let mut socket = Socket::new(protocol)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        socket.set_ext_ack(true).ok();
        Ok(Channel { socket, seq: 0 })
    }

    /// Sends `payload` with `flags` (REQUEST and ACK added) and collects the replies up to
    /// the acknowledgement (or the end of a dump).
    pub fn request<T>(&mut self, payload: T, flags: u16, what: &str) -> Result<Vec<T>>
    where
        T: NetlinkSerializable + NetlinkDeserializable + std::fmt::Debug,
        NetlinkPayload<T>: From<T>,
    {
        self.seq += 1;
        let mut header = NetlinkHeader::default();
        header.flags = flags | NLM_F_REQUEST | NLM_F_ACK;
        header.sequence_number = self.seq;
        let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(payload));
        msg.finalize();
        let mut buf = vec![0u8; msg.buffer_len()];
        msg.serialize(&mut buf);
        self.socket.send(&buf, 0)?;

        let mut replies = Vec::new();
        loop {
            let (data, _) = self.socket.recv_from_full()?;
            let mut offset = 0;
            while offset < data.len() {
                let reply = NetlinkMessage::<T>::deserialize(&data[offset..])
                    .map_err(|e| anyhow!("{what}: unreadable netlink reply: {e}"))?;
                let len = reply.header.length as usize;
                if len == 0 {
                    bail!("{what}: netlink reply of length 0");
                }
                offset += len;
                if reply.header.sequence_number != self.seq {
                    continue;
                }
                match reply.payload {
                    NetlinkPayload::Error(e) => match e.code {
                        None => return Ok(replies),
                        Some(code) => {
                            let err = std::io::Error::from_raw_os_error(-code.get());
                            bail!("{what}: the kernel refused: {err}");
                        }
                    },
                    NetlinkPayload::Done(_) => return Ok(replies),
                    NetlinkPayload::InnerMessage(m) => replies.push(m),
                    _ => {}
                }
            }
        }
    }
}
