//! Stamps the build for the metrics preamble: crate version, git revision
//! ("unknown" outside a git checkout) and the CPU features the target was
//! compiled for. Read at run time through `bmoe::build_info()`.

use std::process::Command;

fn main() {
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    let rev = if dirty && rev != "unknown" { format!("{rev}-dirty") } else { rev };
    println!("cargo:rustc-env=BMOE_GIT_REV={rev}");

    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    println!("cargo:rustc-env=BMOE_TARGET_FEATURES={features}");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=BMOE_TARGET={target}");

    // Re-stamp when HEAD moves (a commit or a checkout); harmless outside git.
    if let Ok(out) = Command::new("git").args(["rev-parse", "--git-dir"]).output() {
        if out.status.success() {
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
            println!("cargo:rerun-if-changed={dir}/HEAD");
            println!("cargo:rerun-if-changed={dir}/index");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
