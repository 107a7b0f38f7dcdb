//! Reading the files a config names (the config itself, MPI hostfiles): regular files only, and
//! at most a size that no real one reaches. `--config /dev/zero` would otherwise read until memory
//! runs out, and a FIFO would block `open` forever.

use std::io::Read as _;
use std::path::Path;

/// Largest config file read (the 512-node reference with every option is ~40 KB).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Largest hostfile read (10 000 hosts of 64-byte lines with `slots=` is ~0.8 MB).
pub const MAX_HOSTFILE_BYTES: u64 = 4 << 20;

/// The file's text, or why not: not a regular file (checked before `open`, which blocks on a
/// FIFO), larger than `max`, or unreadable. Invalid UTF-8 is replaced, as `parse` does.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a device, FIFO or directory is never read)",
        ));
    }
    if meta.len() > max {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} bytes, more than the {max} a config file may have",
                meta.len()
            ),
        ));
    }
    let f = std::fs::File::open(path)?;
    // Checked again on the open file (it may have been swapped since) and while reading (it may grow).
    if !f.metadata()?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("grew past the {max} bytes a config file may have while being read"),
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_big_files_are_refused_without_reading() {
        let e = read_text(Path::new("/dev/zero"), MAX_CONFIG_BYTES).expect_err("an error");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().expect("ok");
        let fifo = dir.path().join("fifo");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("ok");
        assert!(ok.success());
        // Would block forever in open() if it were opened.
        let e = read_text(&fifo, MAX_CONFIG_BYTES).expect_err("an error");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; 101]).expect("ok");
        assert!(
            read_text(&big, 100)
                .expect_err("an error")
                .to_string()
                .contains("101 bytes")
        );
        assert_eq!(read_text(&big, 101).expect("ok").len(), 101);
    }
}
