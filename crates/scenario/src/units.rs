//! Quantities written the way people write them: `10Mbps`, `65ms`, `100pkt`, `150KB`.
//!
//! Each type deserializes from a string (or, where a bare number is unambiguous, a number)
//! and keeps an integer in base units so that simulator arithmetic is exact.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use std::fmt;

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A duration in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

/// An amount of data: bytes, or whole packets (for queue limits and windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    Bytes(u64),
    Packets(u64),
}

/// A probability in [0, 1], written as `0.01` or `1%`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Probability(pub f64);

/// Splits `"10.5Mbps"` into `(10.5, "Mbps")`; the number may carry an exponent
/// (`4.1e0Mbps`, `1e9bps`).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let bytes = s.as_bytes();
    let digits = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .count()
    };
    let mut end = digits(usize::from(matches!(bytes.first(), Some(b'-' | b'+'))));
    // An exponent only if digits follow (`e`, then an optional sign, then a digit).
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'-' | b'+')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1 + sign);
        }
    }
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().ok()?;
    Some((value, unit.trim()))
}

/// An infinite value (`1e400Mbps`) passes: `whole` calls it too large, which it is.
fn non_negative(value: f64, what: &str, text: &str) -> Result<f64, String> {
    if value.is_nan() || value < 0.0 {
        return Err(format!("{what} must not be negative, got `{text}`"));
    }
    Ok(value)
}

/// `value` base units as a whole number, rounded to the nearest, never silently changed
/// beyond that: above `max` or a non-zero value that rounds to zero is an error naming the
/// smallest and largest the program can honour.
fn whole(value: f64, max: u64, base: &str, what: &str, text: &str) -> Result<u64, String> {
    let rounded = value.round();
    if rounded > max as f64 {
        return Err(format!(
            "{what} `{text}` is too large: at most {max} {base} (the program counts in whole {base})"
        ));
    }
    if rounded == 0.0 && value > 0.0 {
        return Err(format!(
            "{what} `{text}` is below 1 {base}, the smallest the program can represent"
        ));
    }
    Ok(rounded as u64)
}

/// The largest duration: 2^62 ns (about 146 years), so that any time plus any duration
/// stays within 64 bits.
pub const MAX_NANOS: u64 = 1 << 62;
/// The largest rate: 1 Pbit/s.
pub const MAX_BPS: u64 = 1_000_000_000_000_000;
/// The largest size: 2^50 bytes (1 PiB), or as many packets.
pub const MAX_SIZE: u64 = 1 << 50;

impl Rate {
    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "a rate such as `10Mbps`, `1Gbps`, `500kbps` or `1.5MBps`";
        let (v, unit) =
            split_number(text).ok_or_else(|| format!("expected {expected}, got `{text}`"))?;
        let mult = match unit {
            "bps" => 1.0,
            "kbps" | "Kbps" => 1e3,
            "Mbps" => 1e6,
            "Gbps" => 1e9,
            "Tbps" => 1e12,
            "Bps" => 8.0,
            "kBps" | "KBps" => 8e3,
            "MBps" => 8e6,
            "GBps" => 8e9,
            "" => return Err(format!("rate `{text}` has no unit: expected {expected}")),
            _ => {
                return Err(format!(
                    "unknown rate unit `{unit}` in `{text}`: expected {expected}"
                ));
            }
        };
        let v = non_negative(v, "a rate", text)?;
        if v == 0.0 {
            return Err(format!("a rate must be greater than zero, got `{text}`"));
        }
        whole(v * mult, MAX_BPS, "bps", "a rate", text).map(Rate)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "a duration such as `65ms`, `10s`, `250us` or `2min`";
        let (v, unit) =
            split_number(text).ok_or_else(|| format!("expected {expected}, got `{text}`"))?;
        let mult = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "min" => 60e9,
            "h" => 3600e9,
            "" => {
                return Err(format!(
                    "duration `{text}` has no unit: expected {expected}"
                ));
            }
            _ => {
                return Err(format!(
                    "unknown duration unit `{unit}` in `{text}`: expected {expected}"
                ));
            }
        };
        let v = non_negative(v, "a duration", text)?;
        whole(v * mult, MAX_NANOS, "ns", "a duration", text).map(Duration)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s * 1e9).round() as u64)
    }
    pub fn nanos(self) -> u64 {
        self.0
    }
    pub fn secs(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl Size {
    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "a size such as `100pkt`, `150KB`, `1MB` or `1500B`";
        let (v, unit) =
            split_number(text).ok_or_else(|| format!("expected {expected}, got `{text}`"))?;
        let v = non_negative(v, "a size", text)?;
        let bytes = |m: f64| whole(v * m, MAX_SIZE, "bytes", "a size", text).map(Size::Bytes);
        match unit {
            "pkt" | "pkts" | "packets" | "p" => {
                if v.is_finite() && v.fract() != 0.0 {
                    return Err(format!("a packet count must be whole, got `{text}`"));
                }
                whole(v, MAX_SIZE, "packets", "a size", text).map(Size::Packets)
            }
            "B" => bytes(1.0),
            "KB" | "kB" => bytes(1e3),
            "MB" => bytes(1e6),
            "GB" => bytes(1e9),
            "KiB" => bytes(1024.0),
            "MiB" => bytes(1024.0 * 1024.0),
            "GiB" => bytes(1024.0 * 1024.0 * 1024.0),
            "" => Err(format!("size `{text}` has no unit: expected {expected}")),
            _ => Err(format!(
                "unknown size unit `{unit}` in `{text}`: expected {expected}"
            )),
        }
    }
    /// Bytes, converting packets at `packet_bytes` each.
    pub fn bytes(self, packet_bytes: u64) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Packets(p) => p * packet_bytes,
        }
    }
    /// Packets, rounding bytes up to whole packets of `packet_bytes`.
    pub fn packets(self, packet_bytes: u64) -> u64 {
        match self {
            Size::Bytes(b) => b.div_ceil(packet_bytes),
            Size::Packets(p) => p,
        }
    }
    pub fn is_zero(self) -> bool {
        matches!(self, Size::Bytes(0) | Size::Packets(0))
    }
}

impl Probability {
    pub fn parse_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let v = if let Some(pct) = t.strip_suffix('%') {
            pct.trim().parse::<f64>().map(|v| v / 100.0)
        } else {
            t.parse::<f64>()
        }
        .map_err(|_| format!("expected a probability such as `0.01` or `1%`, got `{text}`"))?;
        Self::check(v)
    }
    fn check(v: f64) -> Result<Self, String> {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("a probability must lie between 0 and 1, got {v}"));
        }
        Ok(Probability(v))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0 as f64;
        if v >= 1e9 && self.0.is_multiple_of(1_000_000) {
            write!(f, "{}Gbps", v / 1e9)
        } else if v >= 1e6 {
            write!(f, "{}Mbps", v / 1e6)
        } else if v >= 1e3 {
            write!(f, "{}kbps", v / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == 0 {
            write!(f, "0s")
        } else if n.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", n / 1_000_000_000)
        } else if n.is_multiple_of(1_000_000) {
            write!(f, "{}ms", n / 1_000_000)
        } else if n.is_multiple_of(1_000) {
            write!(f, "{}us", n / 1_000)
        } else {
            write!(f, "{n}ns")
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Packets(p) => write!(f, "{p}pkt"),
            Size::Bytes(b) => write!(f, "{b}B"),
        }
    }
}

/// Deserializes from a string through `parse`; numbers are refused with the expected form,
/// because a bare `10` is ambiguous (bits? bytes? seconds?).
macro_rules! string_quantity {
    ($ty:ident, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $ty::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Err(E::custom(format!("`{v}` has no unit: expected {}", $what)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        Err(E::custom(format!("`{v}` has no unit: expected {}", $what)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("`{v}` has no unit: expected {}", $what)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}
string_quantity!(Rate, "a rate such as `10Mbps`");
string_quantity!(Duration, "a duration such as `65ms`");
string_quantity!(Size, "a size such as `100pkt` or `150KB`");
string_quantity!(
    BufferSize,
    "a size such as `4MB`, or a multiple of the buffer rule such as `0.5rule`"
);

/// A receive buffer: a fixed size, or a multiple of the rule of Barré, Paasch and
/// Bonaventure (2011), 2 * RTT_max * sum(BW_i)
/// over the flow's subflow paths (`1rule`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferSize {
    Fixed(Size),
    Rule(f64),
    /// `auto`: Linux's autotuning (`tcp_rmem`), as a socket with no `SO_RCVBUF` has.
    Autotuned,
}

impl BufferSize {
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "auto" {
            return Ok(BufferSize::Autotuned);
        }
        match split_number(text) {
            Some((v, "rule")) if v > 0.0 && v.is_finite() => Ok(BufferSize::Rule(v)),
            Some((_, "rule")) => Err(format!(
                "expected a positive multiple of the rule, got `{text}`"
            )),
            _ => Size::parse(text).map(BufferSize::Fixed).map_err(|e| {
                format!("{e}, a multiple of the buffer rule such as `0.5rule`, or `auto`")
            }),
        }
    }
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Fixed(s) => s.fmt(f),
            BufferSize::Rule(k) => write!(f, "{k}rule"),
            BufferSize::Autotuned => f.write_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Probability;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a probability such as `0.01` or `\"1%\"`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Probability, E> {
                Probability::parse_str(s).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Probability, E> {
                Probability::check(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Probability, E> {
                Probability::check(v as f64).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Probability, E> {
                Probability::check(v as f64).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Probability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(Rate::parse("10Mbps").unwrap().bps(), 10_000_000);
        assert_eq!(Rate::parse("1Gbps").unwrap().bps(), 1_000_000_000);
        assert_eq!(Rate::parse("1.5 Mbps").unwrap().bps(), 1_500_000);
        assert_eq!(Rate::parse("1MBps").unwrap().bps(), 8_000_000);
        assert!(
            Rate::parse("0Mbps")
                .unwrap_err()
                .contains("greater than zero")
        );
        assert!(Rate::parse("-5Mbps").unwrap_err().contains("negative"));
        assert!(Rate::parse("10").unwrap_err().contains("no unit"));
        assert!(
            Rate::parse("10Mbit")
                .unwrap_err()
                .contains("unknown rate unit")
        );
        assert!(Rate::parse("fast").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(Duration::parse("65ms").unwrap().nanos(), 65_000_000);
        assert_eq!(Duration::parse("2min").unwrap().secs(), 120.0);
        assert_eq!(Duration::parse("250us").unwrap().nanos(), 250_000);
        assert_eq!(Duration::parse("0s").unwrap(), Duration::ZERO);
        assert!(Duration::parse("5 fortnights").is_err());
        assert_eq!(Duration(1_500_000).to_string(), "1500us");
        assert_eq!(
            Duration::parse(&Duration(65_000_000).to_string())
                .unwrap()
                .nanos(),
            65_000_000
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(Size::parse("100pkt").unwrap(), Size::Packets(100));
        assert_eq!(Size::parse("150KB").unwrap(), Size::Bytes(150_000));
        assert_eq!(Size::parse("1MiB").unwrap(), Size::Bytes(1 << 20));
        assert_eq!(Size::Bytes(3001).packets(1500), 3);
        assert!(Size::parse("1.5pkt").unwrap_err().contains("whole"));
    }

    #[test]
    fn probabilities() {
        assert_eq!(Probability::parse_str("1%").unwrap().0, 0.01);
        assert!(Probability::parse_str("150%").is_err());
    }
}
