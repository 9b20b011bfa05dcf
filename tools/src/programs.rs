//! Running the servers' programs, shared by the nemesis (`nemesis/server/`) and the fault
//! tests' private servers (`tests/support/private_servers.rs`): where they are, running one
//! to its end, and appending to a configuration file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest `/usr/lib/postgresql/<version>/bin` (Debian's layout), or `pg_config --bindir`.
pub fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    let bin = versions.pop().map(|(_, bin)| bin).or_else(|| {
        let out = Command::new("pg_config").arg("--bindir").output().ok()?;
        Some(PathBuf::from(String::from_utf8(out.stdout).ok()?.trim()))
    })?;
    (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some(bin)
}

/// `name` on the `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.exists())
    })
}

/// Runs `cmd` to its end: `Err` with what it printed unless it succeeded.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let output = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} exited with {}: {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Appends `text` to the file at `path`.
pub fn append(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))
}
