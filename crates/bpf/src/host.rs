//! The eBPF programs' arithmetic (`src/bpf/mlab_math.h`) compiled for the host, so that
//! tests can hold it against the Rust reference on the shared vectors. Same header, same
//! integer code paths as in the kernel; only the compiler differs.

/// One subflow, laid out as `struct mlab_subflow`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subflow {
    pub inter_loss: u64,
    pub srtt_us: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub established: u8,
    pub in_recovery: u8,
    pub pad: [u8; 2],
}

/// An `mlab_num` unpacked: m * 2^e.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Num {
    pub m: u64,
    pub e: i32,
}

impl Num {
    pub fn value(self) -> f64 {
        self.m as f64 * 2f64.powi(self.e)
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct WvegasRound {
    base_rtt_us: u64,
    rtt_us: u64,
    queue_delay_us: u64,
    /// A packed mlab_num (mantissa low, exponent high); the C code fills it.
    others_rate: u64,
    cwnd: u32,
    ssthresh: u32,
    alpha_q: u32,
}

/// One wVegas round's decision as the C code takes it: integer window and threshold,
/// alpha in Q16.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WvegasDecision {
    pub queue_delay_us: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub alpha_q: u32,
    pub slow_start: u8,
    pub pad: [u8; 3],
}

/// The algorithms the header implements, as `enum mlab_host_algorithm` (the numbers are the
/// programs' MLAB_ALG_* ids; wVegas, 4, has its own round function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Reno = 0,
    Lia = 1,
    Olia = 2,
    Balia = 3,
    Ewtcp = 5,
    FullyCoupled = 6,
}

impl Rule {
    pub fn by_name(name: &str) -> Option<Rule> {
        Some(match name {
            "reno" => Rule::Reno,
            "lia" => Rule::Lia,
            "olia" => Rule::Olia,
            "balia" => Rule::Balia,
            "ewtcp" => Rule::Ewtcp,
            "fullycoupled" => Rule::FullyCoupled,
            _ => return None,
        })
    }
}

/// Q40: the scale of the per-packet increases.
pub const INC_SHIFT: u32 = 40;
/// Q16: the scale of wVegas's alpha.
pub const ALPHA_SHIFT: u32 = 16;

unsafe extern "C" {
    fn mlab_host_increase_q(algorithm: u32, sf: *const Subflow, n: u32, r: u32) -> i64;
    fn mlab_host_after_loss(algorithm: u32, sf: *const Subflow, n: u32, r: u32) -> u32;
    fn mlab_host_olia_sets(sf: *const Subflow, n: u32) -> u32;
    fn mlab_host_wvegas_round(
        input: *const WvegasRound,
        others: *const Subflow,
        n_others: u32,
        out: *mut WvegasDecision,
    );
    fn mlab_host_num_op(op: u32, a: u64, ae: i32, b: u64, be: i32, m: *mut u64, e: *mut i32);
    fn mlab_host_info_layout(out: *mut u32, n: u32) -> u32;
    fn mlab_host_is_cwnd_limited(
        cwnd: u32,
        ssthresh: u32,
        is_cwnd_limited: i32,
        max_packets_out: u32,
    ) -> i32;
}

/// Whether the window may grow (`mlab_is_cwnd_limited`, Linux's `tcp_is_cwnd_limited`).
pub fn is_cwnd_limited(
    cwnd: u32,
    ssthresh: u32,
    is_cwnd_limited: bool,
    max_packets_out: u32,
) -> bool {
    // SAFETY: plain integers in and out.
    unsafe {
        mlab_host_is_cwnd_limited(cwnd, ssthresh, is_cwnd_limited as i32, max_packets_out) != 0
    }
}

/// Subflow sets beyond this many are not read by the C code (nor by the kernel walk).
pub const MAX_SUBFLOWS: usize = 8;

fn checked(subflows: &[Subflow], r: usize) {
    assert!(subflows.len() <= MAX_SUBFLOWS && r < subflows.len());
}

/// Increase per acknowledged packet on `r`, Q40.
pub fn increase_q(rule: Rule, subflows: &[Subflow], r: usize) -> i64 {
    checked(subflows, r);
    // SAFETY: the pointer covers `subflows.len()` elements and the C code reads no more.
    unsafe {
        mlab_host_increase_q(
            rule as u32,
            subflows.as_ptr(),
            subflows.len() as u32,
            r as u32,
        )
    }
}

/// Window after a loss on `r`, packets.
pub fn after_loss(rule: Rule, subflows: &[Subflow], r: usize) -> u32 {
    checked(subflows, r);
    // SAFETY: as in `increase_q`.
    unsafe {
        mlab_host_after_loss(
            rule as u32,
            subflows.as_ptr(),
            subflows.len() as u32,
            r as u32,
        )
    }
}

/// OLIA's sets: bit 4r is "r in M", 4r+1 "r in B", 4r+2 "r in C".
pub fn olia_sets(subflows: &[Subflow]) -> u32 {
    assert!(subflows.len() <= MAX_SUBFLOWS);
    // SAFETY: as in `increase_q`.
    unsafe { mlab_host_olia_sets(subflows.as_ptr(), subflows.len() as u32) }
}

/// Inputs of one wVegas round, as the kernel has them.
#[derive(Clone, Copy, Debug, Default)]
pub struct WvegasInput {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub base_rtt_us: u64,
    pub rtt_us: u64,
    pub alpha_q: u32,
    pub queue_delay_us: u64,
}

pub fn wvegas_round(input: &WvegasInput, others: &[Subflow]) -> WvegasDecision {
    assert!(others.len() <= MAX_SUBFLOWS);
    let round = WvegasRound {
        base_rtt_us: input.base_rtt_us,
        rtt_us: input.rtt_us,
        queue_delay_us: input.queue_delay_us,
        others_rate: 0,
        cwnd: input.cwnd,
        ssthresh: input.ssthresh,
        alpha_q: input.alpha_q,
    };
    let mut out = WvegasDecision::default();
    // SAFETY: all pointers are to live values of the C layouts above.
    unsafe { mlab_host_wvegas_round(&round, others.as_ptr(), others.len() as u32, &mut out) };
    out
}

/// The number type's operations, for property tests.
#[derive(Clone, Copy, Debug)]
pub enum NumOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
}

/// Normalises (a, ae) and (b, be) and applies `op`.
pub fn num_op(op: NumOp, a: (u64, i32), b: (u64, i32)) -> Num {
    let mut out = Num::default();
    // SAFETY: out-pointers to live locals.
    unsafe { mlab_host_num_op(op as u32, a.0, a.1, b.0, b.1, &mut out.m, &mut out.e) };
    out
}

/// `sizeof(struct mlab_subflow_info)` and each field's offset, as the C compiler lays it out.
pub fn info_layout() -> Vec<u32> {
    let mut out = vec![0u32; 64];
    // SAFETY: the C code writes at most `n` entries into the buffer it is given.
    let len = unsafe { mlab_host_info_layout(out.as_mut_ptr(), out.len() as u32) };
    out.truncate(len as usize);
    out
}
