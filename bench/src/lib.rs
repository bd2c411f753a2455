//! bmoe's benchmark tools: the protocol driver behind the `bmoe-bench` binary (cells of
//! `bmoe run` from measured conditions, interleaved, side by side with llama.cpp on mmap and
//! fio), its RAM holder, the statistics and plots of its report, and the quality figures of
//! the lossy knobs (teacher-forced against the lossless run). The criterion sweeps are in
//! `benches/`.

pub mod hold;
pub mod protocol;
pub mod quality;
pub mod report;
pub mod sys;
