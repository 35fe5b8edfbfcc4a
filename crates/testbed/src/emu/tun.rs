//! A TUN device: layer-3 packets in and out of a namespace's stack through a file
//! descriptor. No packet-info header (IFF_NO_PI): each read or write is one IP packet.

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
        Ok(Tun {
            file,
            name: name.to_string(),
        })
    }

    /// One packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Hands one packet to the namespace's stack. A full or down device drops it, as a
    /// wire would; only other errors are reported.
    pub fn send(&self, pkt: &[u8]) -> std::io::Result<bool> {
        match (&self.file).write(pkt) {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EAGAIN | libc::EIO | libc::ENOBUFS | libc::EINVAL)
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

impl AsFd for Tun {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}
