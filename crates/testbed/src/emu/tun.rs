//! A TUN device: layer-3 packets in and out of a namespace's stack through a file
//! descriptor. No packet-info header (IFF_NO_PI): each read or write is one IP packet.
//!
//! Where a packet can be lost between a host and the emulator, and who counts it:
//! - the host's stack hands a packet to the device, which queues it in a ring of
//!   `txqueuelen` packets (500) until the emulator reads it. A full ring drops it and counts
//!   it in the device's `tx_dropped`; the sender is not told (a UDP send succeeds, TCP sees
//!   a loss). The qdisc in front never holds packets back, because the device never refuses
//!   one: so the ring is the only place, and [`Tun::drops`] reads its counter.
//! - a read into a buffer shorter than the packet is truncated by the kernel without an
//!   error: [`truncated`] tells, and the emulator counts and discards such a packet.
//! - a write the kernel refuses (`EAGAIN`, `ENOBUFS`, `EIO` for a device that is down,
//!   `EINVAL` for a malformed packet): [`Tun::send`] says so and the emulator counts it.
//! - a write the kernel accepts is processed at once by the destination's stack, in the
//!   writer's thread. What that stack drops before IP (the receive backlog when RPS is on,
//!   a packet of no known protocol) it counts in the device's `rx_dropped`.

use crate::netlink::Rtnl;
use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// The device vanishes when the descriptor closes (it is not made persistent), so a crash
/// leaves no device behind.
pub struct Tun {
    file: File,
    pub name: String,
    /// A netlink socket of the device's namespace: the emulator's thread reads the device's
    /// counters through it from its own namespace (sysfs and /proc/net show the reader's).
    rtnl: Rtnl,
    index: u32,
}

/// A device's counters of packets lost at it, since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceDrops {
    /// Sent by the host's stack and dropped because the ring to the emulator was full:
    /// `tx_dropped` (TUN counts ring overflows there; `tx_fifo_errors` is added in case a
    /// kernel counts them as FIFO overruns, as old TUN drivers did).
    pub not_read: u64,
    /// Written by the emulator and dropped by the host's stack on arrival: `rx_dropped`.
    /// Some kernels count a refused write here too.
    pub rx_dropped: u64,
}

impl DeviceDrops {
    /// What was lost between `earlier` and `self` (counters only grow; a wrap is 0).
    pub fn since(self, earlier: DeviceDrops) -> DeviceDrops {
        DeviceDrops {
            not_read: self.not_read.saturating_sub(earlier.not_read),
            rx_dropped: self.rx_dropped.saturating_sub(earlier.rx_dropped),
        }
    }
}

/// Whether the `n` bytes a read returned into a buffer of `capacity` are not the whole
/// packet: the read filled the buffer (the kernel truncates silently and may return the
/// copied length), or the IPv4 header's total length says the packet was longer.
pub fn truncated(pkt: &[u8], n: usize, capacity: usize) -> bool {
    if n >= capacity {
        return true;
    }
    if n >= 4 && pkt[0] >> 4 == 4 {
        let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
        return total > n;
    }
    false
}

/// Whether `name` can name a network interface.
pub fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < libc::IFNAMSIZ
        && name != "."
        && name != ".."
        && !name.contains(['/', ':', ' ', '\t', '\n', '\0'])
}

impl Tun {
    /// Creates TUN device `name` in the calling thread's network namespace, non-blocking.
    pub fn create(name: &str) -> Result<Tun> {
        if !valid_ifname(name) {
            bail!(
                "`{name}` cannot name a network interface (at most 15 characters, no `/`, `:` or spaces)"
            );
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .context("opening /dev/net/tun (is the tun module loaded?)")?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is laid out as.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("creating TUN device {name}"));
        }
        let c = std::ffi::CString::new(name)?;
        // SAFETY: a NUL-terminated name; if_nametoindex only reads it.
        let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
        if index == 0 {
            bail!("TUN device {name} vanished as it was created");
        }
        Ok(Tun {
            file,
            name: name.to_string(),
            rtnl: Rtnl::open()?,
            index,
        })
    }

    /// The kernel's index of the device, in its namespace.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The device's loss counters now.
    pub fn drops(&mut self) -> Result<DeviceDrops> {
        let s = self
            .rtnl
            .link_stats(self.index)
            .with_context(|| format!("reading the counters of device {}", self.name))?;
        Ok(DeviceDrops {
            not_read: s.tx_dropped + s.tx_fifo_errors,
            rx_dropped: s.rx_dropped,
        })
    }

    /// One packet into `buf`; `Ok(None)` when none is waiting. A read interrupted by a
    /// signal also returns `None`: the packet stays in the ring for the next read, nothing
    /// is lost. The caller checks the length with [`truncated`].
    pub fn recv(&self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Hands one packet to the namespace's stack; `Ok(false)` when the kernel refused it
    /// (full, down, or malformed), which the caller counts as its own loss: a refusal is
    /// the machine's, not the link model's. Other errors are reported. A write interrupted
    /// by a signal before it took the packet is tried again.
    pub fn send(&self, pkt: &[u8]) -> std::io::Result<bool> {
        loop {
            match (&self.file).write(pkt) {
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EAGAIN | libc::EIO | libc::ENOBUFS | libc::EINVAL)
                    ) =>
                {
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl AsFd for Tun {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(total_len: u16, n: usize) -> Vec<u8> {
        let mut p = vec![0u8; n];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&total_len.to_be_bytes());
        p
    }

    #[test]
    fn a_read_that_fills_the_buffer_or_falls_short_of_the_ip_length_is_truncated() {
        assert!(!truncated(&ipv4(1500, 1500), 1500, 2048));
        assert!(
            truncated(&ipv4(1500, 2048), 2048, 2048),
            "filled the buffer"
        );
        assert!(
            truncated(&ipv4(3000, 1000), 1000, 2048),
            "shorter than its header says"
        );
        // Not IPv4: the length cannot be checked (and the packet is unroutable anyway).
        assert!(!truncated(&[0x60, 0, 0, 0, 0, 0], 6, 2048));
    }

    #[test]
    fn drops_since_a_baseline_never_go_negative() {
        let start = DeviceDrops {
            not_read: 5,
            rx_dropped: 2,
        };
        let end = DeviceDrops {
            not_read: 12,
            rx_dropped: 2,
        };
        assert_eq!(
            end.since(start),
            DeviceDrops {
                not_read: 7,
                rx_dropped: 0
            }
        );
        assert_eq!(start.since(end), DeviceDrops::default());
    }
}
