//! Output files (`--csv`, `--route-trace`): checked and created before the model loads, so a bad
//! path fails at once and never after a long generation; refused when they are one of the
//! model's own files (the same inode), so a typo cannot destroy the model; written under a
//! temporary name in the same directory and renamed into place only when complete, so an
//! interrupted or failed run leaves the previous file (if any) as it was and no partial one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};

/// An output being written; dropped without [`Output::commit`], it leaves nothing behind.
#[derive(Debug)]
pub struct Output {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<BufWriter<File>>,
}

/// Whether `a` and `b` are the same file (device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        a.canonicalize().ok().is_some_and(|x| b.canonicalize().ok() == Some(x))
    }
}

/// Refuse to write `path` (for `flag`) when it is one of `model_files` or an existing file that
/// is not a regular file.
///
/// # Errors
/// As said.
pub fn check_target(flag: &str, path: &Path, model_files: &[PathBuf]) -> anyhow::Result<()> {
    if let Some(m) = model_files.iter().find(|m| same_file(path, m)) {
        bail!("{flag} {}: that is the model file {}; refusing to overwrite it", path.display(), m.display());
    }
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            bail!("{flag} {}: {}, not a file to write", path.display(), bmoe::engine::gguf::file_kind(&meta));
        }
    }
    Ok(())
}

impl Output {
    /// Check `path` (for `flag`) against the model's files and create its temporary file.
    ///
    /// # Errors
    /// The path is one of `model_files`, an existing non-regular file, or cannot be created.
    pub fn create(flag: &str, path: &Path, model_files: &[PathBuf]) -> anyhow::Result<Self> {
        check_target(flag, path, model_files)?;
        let name = path.file_name().with_context(|| format!("{flag} {}: not a file name", path.display()))?;
        let tmp = path.with_file_name(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
        let f = File::create(&tmp).with_context(|| format!("{flag} {}: creating it", path.display()))?;
        Ok(Self { path: path.to_path_buf(), tmp, w: Some(BufWriter::new(f)) })
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.w.as_mut().expect("not committed")
    }

    /// Flush, and put the file in place.
    ///
    /// # Errors
    /// The write or the rename.
    pub fn commit(mut self) -> anyhow::Result<()> {
        let w = self.w.take().expect("committed once");
        let f =
            w.into_inner().map_err(|e| e.into_error()).with_context(|| format!("writing {}", self.path.display()))?;
        f.sync_all().with_context(|| format!("writing {}", self.path.display()))?;
        std::fs::rename(&self.tmp, &self.path).with_context(|| format!("renaming into {}", self.path.display()))?;
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(mut w) = self.w.take() {
            let _ = w.flush();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Generated text as it streams: token pieces are bytes, and a UTF-8 character may span two
/// tokens, so only whole characters are written (an invalid byte is written as it is).
#[derive(Debug, Default)]
pub struct TextStream {
    pending: Vec<u8>,
}

impl TextStream {
    /// Add `piece` and write (and flush) every whole character.
    ///
    /// # Errors
    /// The writer's.
    pub fn push(&mut self, w: &mut dyn Write, piece: &[u8]) -> std::io::Result<()> {
        self.pending.extend_from_slice(piece);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        w.write_all(&self.pending[..valid])?;
        w.flush()?;
        self.pending.drain(..valid);
        Ok(())
    }

    /// Write what is left (an incomplete character at the end).
    ///
    /// # Errors
    /// The writer's.
    pub fn finish(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        w.write_all(&self.pending)?;
        self.pending.clear();
        w.flush()
    }
}
