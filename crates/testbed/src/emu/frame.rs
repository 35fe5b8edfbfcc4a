//! Packets in the emulator: the IP packet's bytes and where it is on its route.

/// Largest packet read from a device: the devices' MTU is 1500 and, without offloads, the
/// kernel segments anything larger before it reaches us.
pub const MAX_FRAME: usize = 2048;

pub struct Frame {
    pub data: Vec<u8>,
    pub len: u32,
    /// The route through the fabric and the hop being crossed.
    pub routing: net::RoutingHeader,
}

impl net::Packet for Frame {
    fn wire_bytes(&self) -> u32 {
        self.len
    }
}

impl net::Routed for Frame {
    fn routing(&self) -> net::RoutingHeader {
        self.routing
    }
    fn routing_mut(&mut self) -> &mut net::RoutingHeader {
        &mut self.routing
    }
}

impl Frame {
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }
}

/// IPv4 source and destination, or `None` for anything else (IPv6 is off in our
/// namespaces; anything unparseable is dropped).
pub fn ipv4_endpoints(pkt: &[u8]) -> Option<(u32, u32)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let src = u32::from_be_bytes([pkt[12], pkt[13], pkt[14], pkt[15]]);
    let dst = u32::from_be_bytes([pkt[16], pkt[17], pkt[18], pkt[19]]);
    Some((src, dst))
}

/// Buffers returned by dropped or delivered frames, reused for the next reads so that the
/// forwarding path allocates nothing in steady state.
#[derive(Default)]
pub struct Pool {
    free: Vec<Vec<u8>>,
}

impl Pool {
    pub fn take(&mut self) -> Vec<u8> {
        self.free.pop().unwrap_or_else(|| vec![0; MAX_FRAME])
    }
    pub fn give(&mut self, buf: Vec<u8>) {
        if self.free.len() < 4096 {
            self.free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ipv4_endpoints;

    #[test]
    fn reads_ipv4_addresses_and_rejects_the_rest() {
        let mut p = [0u8; 20];
        p[0] = 0x45;
        p[12..16].copy_from_slice(&[10, 0, 1, 1]);
        p[16..20].copy_from_slice(&[10, 0, 2, 2]);
        assert_eq!(ipv4_endpoints(&p), Some((0x0a00_0101, 0x0a00_0202)));
        p[0] = 0x60;
        assert_eq!(ipv4_endpoints(&p), None);
        assert_eq!(ipv4_endpoints(&p[..10]), None);
    }
}
