//! A path as MATCP configures it: one uplink, named by its source address of each family
//! whose connections are placed on it. `10.7.1.1`, `fd00:7:1::1`, or both as
//! `10.7.1.1+fd00:7:1::1`: the two families' connections on one uplink share its statistics
//! (what the selector compares is the uplink, not the address family).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// `MATCP_FAMILY_IPV4` (matcp_state.h): the paths have IPv4 addresses, `connect4` places.
pub const FAMILY_IPV4: u32 = 1;
/// `MATCP_FAMILY_IPV6`: the paths have IPv6 addresses, `connect6` places.
pub const FAMILY_IPV6: u32 = 2;

/// One path's source addresses, at most one per family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathAddrs {
    pub v4: Option<Ipv4Addr>,
    pub v6: Option<Ipv6Addr>,
}

impl PathAddrs {
    /// The addresses, IPv4 first.
    pub fn addrs(&self) -> impl Iterator<Item = IpAddr> + '_ {
        self.v4
            .map(IpAddr::V4)
            .into_iter()
            .chain(self.v6.map(IpAddr::V6))
    }

    /// Which families it has, as `FAMILY_*` bits.
    pub fn families(&self) -> u32 {
        let bit = |present: bool, family: u32| if present { family } else { 0 };
        bit(self.v4.is_some(), FAMILY_IPV4) | bit(self.v6.is_some(), FAMILY_IPV6)
    }

    /// Adds `addr`; an error if the path has one of its family already.
    fn with(mut self, addr: IpAddr) -> Result<PathAddrs, String> {
        let taken = match addr {
            IpAddr::V4(a) => self.v4.replace(a).is_some(),
            IpAddr::V6(a) => self.v6.replace(a).is_some(),
        };
        if taken {
            return Err(format!(
                "two addresses of one family in one path: a path is one uplink, with at most one IPv4 and one IPv6 address (ADDR4+ADDR6); {addr} is the second"
            ));
        }
        Ok(self)
    }
}

impl From<IpAddr> for PathAddrs {
    fn from(addr: IpAddr) -> PathAddrs {
        PathAddrs::default()
            .with(addr)
            .expect("an empty path takes any address")
    }
}

impl From<Ipv4Addr> for PathAddrs {
    fn from(addr: Ipv4Addr) -> PathAddrs {
        PathAddrs::from(IpAddr::V4(addr))
    }
}

impl From<Ipv6Addr> for PathAddrs {
    fn from(addr: Ipv6Addr) -> PathAddrs {
        PathAddrs::from(IpAddr::V6(addr))
    }
}

/// `ADDR` or `ADDR4+ADDR6` (either order).
impl FromStr for PathAddrs {
    type Err = String;

    fn from_str(s: &str) -> Result<PathAddrs, String> {
        s.split('+').try_fold(PathAddrs::default(), |path, part| {
            let addr = part
                .trim()
                .parse::<IpAddr>()
                .map_err(|_| format!("`{part}` is not an IPv4 or IPv6 address"))?;
            path.with(addr)
        })
    }
}

impl fmt::Display for PathAddrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addrs: Vec<String> = self.addrs().map(|a| a.to_string()).collect();
        f.write_str(&addrs.join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_address_or_one_of_each_family() {
        let v4: Ipv4Addr = "10.7.1.1".parse().unwrap();
        let v6: Ipv6Addr = "fd00:7:1::1".parse().unwrap();
        assert_eq!("10.7.1.1".parse(), Ok(PathAddrs::from(v4)));
        assert_eq!("fd00:7:1::1".parse(), Ok(PathAddrs::from(v6)));
        let both = PathAddrs {
            v4: Some(v4),
            v6: Some(v6),
        };
        assert_eq!("10.7.1.1+fd00:7:1::1".parse(), Ok(both));
        assert_eq!("fd00:7:1::1+10.7.1.1".parse(), Ok(both));
        assert_eq!(both.to_string(), "10.7.1.1+fd00:7:1::1");
        assert_eq!(both.families(), FAMILY_IPV4 | FAMILY_IPV6);
    }

    #[test]
    fn refuses_two_of_a_family_and_what_is_not_an_address() {
        let two = "10.7.1.1+10.7.2.1".parse::<PathAddrs>().unwrap_err();
        assert!(two.contains("10.7.2.1 is the second"), "{two}");
        let bad = "10.7.1.1+eth0".parse::<PathAddrs>().unwrap_err();
        assert!(bad.contains("`eth0`"), "{bad}");
        assert!("".parse::<PathAddrs>().is_err());
    }
}
