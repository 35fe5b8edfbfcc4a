//! Builds the eBPF congestion controls and MATCP's path selection programs, and the host
//! copies of their shared arithmetic.
//!
//! The BPF objects need clang with the BPF target, the running kernel's BTF (turned into
//! vmlinux.h by bpftool) and libbpf's BPF headers (from libbpf-sys). Where any is missing
//! the crate still builds, without the objects, and says why at run time: the simulator and
//! the host tests do not need a kernel. `scripts/setup` installs all of them.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAMS: &[&str] = &[
    "lia", "olia", "balia", "wvegas", "ewtcp", "fcoupled", "matcp",
];
const BPF_DIR: &str = "src/bpf";

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed={BPF_DIR}");
    println!("cargo:rerun-if-changed=host");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=MPTCP_LAB_VMLINUX_H");
    println!("cargo::rustc-check-cfg=cfg(mlab_no_bpf)");

    cc::Build::new()
        .file("host/mlab_host.c")
        .file("host/matcp_host.c")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-function")
        .compile("mlab_host");

    match build_bpf(&out) {
        Ok(()) => {}
        Err(why) => {
            println!("cargo:warning=eBPF programs not built: {why}");
            println!("cargo:rustc-cfg=mlab_no_bpf");
            println!("cargo:rustc-env=MLAB_NO_BPF={why}");
        }
    }
}

fn build_bpf(out: &Path) -> Result<(), String> {
    let clang = find_clang()?;
    let vmlinux = vmlinux_header(out)?;
    let libbpf = env::var("DEP_BPF_INCLUDE")
        .map_err(|_| "libbpf-sys did not export its headers (DEP_BPF_INCLUDE)".to_string())?;
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        Ok("riscv64") => "riscv",
        Ok("s390x") => "s390",
        Ok("powerpc64") => "powerpc",
        Ok(other) => return Err(format!("no BPF target arch for {other}")),
        Err(_) => return Err("CARGO_CFG_TARGET_ARCH unset".into()),
    };
    for name in PROGRAMS {
        let src = format!("{BPF_DIR}/{name}.bpf.c");
        let obj = out.join(format!("{name}.bpf.o"));
        let status = Command::new(&clang)
            .args(["-g", "-O2", "-target", "bpf", "-Wall", "-Werror"])
            .arg(format!("-D__TARGET_ARCH_{arch}"))
            .arg(format!("-I{}", vmlinux.display()))
            .arg(format!("-I{libbpf}"))
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .status()
            .map_err(|e| format!("{clang}: {e}"))?;
        if !status.success() {
            // A compile error in our own C is a bug, not a missing tool: fail the build.
            panic!("{clang} failed on {src}");
        }
        // Keep BTF (the loader needs it), drop DWARF: the objects shrink tenfold.
        let _ = Command::new(llvm_strip(&clang))
            .arg("-g")
            .arg(&obj)
            .status();
    }
    Ok(())
}

/// clang from $CLANG, else the newest versioned clang on PATH, else plain clang.
fn find_clang() -> Result<String, String> {
    if let Ok(c) = env::var("CLANG") {
        return Ok(c);
    }
    let candidates = (14..=22)
        .rev()
        .map(|v| format!("clang-{v}"))
        .chain(["clang".to_string()]);
    for c in candidates {
        let ok = Command::new(&c)
            .arg("--print-targets")
            .output()
            .map(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("bpf"))
            .unwrap_or(false);
        if ok {
            return Ok(c);
        }
    }
    Err("no clang with the BPF target (install clang)".into())
}

fn llvm_strip(clang: &str) -> String {
    match clang.strip_prefix("clang") {
        Some(version) if version.starts_with('-') => format!("llvm-strip{version}"),
        _ => "llvm-strip".into(),
    }
}

/// A directory holding vmlinux.h: $MPTCP_LAB_VMLINUX_H's, or one dumped from this kernel's BTF.
fn vmlinux_header(out: &Path) -> Result<PathBuf, String> {
    if let Ok(given) = env::var("MPTCP_LAB_VMLINUX_H") {
        let dir = out.join("vmlinux-given");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::copy(&given, dir.join("vmlinux.h")).map_err(|e| format!("{given}: {e}"))?;
        return Ok(dir);
    }
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    if !btf.exists() {
        return Err(
            "this kernel has no BTF (/sys/kernel/btf/vmlinux); set MPTCP_LAB_VMLINUX_H".into(),
        );
    }
    let dump = Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(btf)
        .args(["format", "c"])
        .output()
        .map_err(|e| format!("bpftool: {e} (install bpftool)"))?;
    if !dump.status.success() {
        return Err(format!(
            "bpftool btf dump failed: {}",
            String::from_utf8_lossy(&dump.stderr)
        ));
    }
    let dir = out.join("vmlinux");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("vmlinux.h"), dump.stdout).map_err(|e| e.to_string())?;
    Ok(dir)
}
