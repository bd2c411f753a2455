//! Where an expert's bytes go in a cache slot: pure arithmetic over the model index, with no
//! I/O and no state.
//!
//! A slot holds one (layer, expert) entry: each projection in its own block-aligned region,
//! large enough for the aligned window an O_DIRECT read of the payload covers (the payload
//! rounded up to 4 KiB blocks, plus one block). Where in its region a payload lands decides
//! two things at once:
//! - *stacked*: every payload of a (layer, projection) at the same place in its slot, so the
//!   slots form a stack the decoder runs `mul_mat_id` over (the kernel the resident model runs,
//!   hence the same bits). With O_DIRECT that needs every expert slice to be whole blocks, since
//!   an aligned read lands a payload at its file offset's place within a block;
//! - *direct*: O_DIRECT kept on. Slices that are not whole blocks (gpt-oss's MXFP4 slice is
//!   4,406,400 B) either keep O_DIRECT and land each payload at its own place (no stack: one
//!   `mul_mat` per expert, which computes the same bits as `mul_mat_id` when ggml has no other
//!   kernel for the type), or, for the types ggml's llamafile sgemm also takes in `mul_mat`,
//!   are read through the page cache as a stack.

use bmoe_uring_io::align;

use crate::error::Result;
use crate::ggml::GgmlType;
use crate::model::{ModelIndex, MoeLayer};
use crate::provider::Projections;

/// The layout of one projection of a layer in a slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub shard: usize,
    /// File offset of expert 0's slice and the bytes of one expert's slice.
    pub base: u64,
    pub len: u64,
    /// Start of the projection's region in the slot (block-aligned).
    pub start: usize,
}

/// How every (layer, expert) entry lies in a slot, and whether O_DIRECT and stacks hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotLayout {
    /// Per MoE layer: gate, up, down.
    pub regions: Vec<Projections<Region>>,
    /// Bytes of one slot: the widest entry with its O_DIRECT slack.
    pub slot_bytes: usize,
    /// Every expert slice is whole blocks.
    pub whole_blocks: bool,
    /// Every payload of a (layer, projection) lands at the same place of its slot.
    pub stacked: bool,
    /// Reads may use O_DIRECT (asked for, and compatible with the placement).
    pub direct: bool,
}

/// Bytes of the aligned window around a payload of `len` bytes at any offset: at most one block
/// more than the payload rounded up to blocks.
pub fn region_bytes(len: u64) -> usize {
    region_bytes_in(len, align::BLOCK)
}

/// [`region_bytes`] in units of `unit` bytes (the generic decoder's: pages, which it maps):
/// whole units, one more.
pub fn region_bytes_in(len: u64, unit: u64) -> usize {
    (align::align_up(len, unit).unwrap_or(u64::MAX).saturating_add(unit)) as usize
}

/// Whether ggml's `mul_mat` on one expert's slice of this type runs the same kernel as
/// `mul_mat_id` on the stack (so the per-expert path gives the same bits): every type but
/// those its llamafile sgemm also takes in `mul_mat` (`ggml-cpu/llamafile/sgemm.cpp`).
pub fn per_expert_same_bits(ty: GgmlType) -> bool {
    !matches!(
        ty,
        GgmlType::F32
            | GgmlType::F16
            | GgmlType::BF16
            | GgmlType::Q8_0
            | GgmlType::Q4_0
            | GgmlType::Q5_0
            | GgmlType::IQ4_NL
    )
}

/// `(stacked, direct)` for slices that are whole blocks or not, O_DIRECT asked for or not, and
/// whether every expert type computes the same bits one expert at a time.
pub fn placement(whole_blocks: bool, direct_asked: bool, same_kernel: bool) -> (bool, bool) {
    let stacked = whole_blocks || !(direct_asked && same_kernel);
    let direct = direct_asked && (whole_blocks || !stacked);
    (stacked, direct)
}

impl SlotLayout {
    /// The layout of `index`'s experts, O_DIRECT asked for or not.
    ///
    /// # Errors
    /// [`crate::Error::Unsupported`] for fused gate/up experts.
    pub fn new(index: &ModelIndex, direct_asked: bool) -> Result<Self> {
        let mut regions = Vec::with_capacity(index.layers.len());
        let mut slot_bytes = 0usize;
        for l in &index.layers {
            let mut r = Projections::<Region>::default();
            let mut at = 0usize;
            for t in &l.tensors {
                *r.get_mut(t.proj.slot()?) =
                    Region { shard: t.shard, base: t.offset, len: t.bytes_per_expert, start: at };
                at += region_bytes(t.bytes_per_expert);
            }
            slot_bytes = slot_bytes.max(at);
            regions.push(r);
        }
        let whole_blocks = regions.iter().all(|r| r.to_array().iter().all(|x| x.len % align::BLOCK == 0));
        let same_kernel = index.layers.iter().flat_map(|l| &l.tensors).all(|t| per_expert_same_bits(t.ty));
        let (stacked, direct) = placement(whole_blocks, direct_asked, same_kernel);
        Ok(Self { regions, slot_bytes, whole_blocks, stacked, direct })
    }

    /// Where projection `which` of `expert` of MoE layer `layer` is read from and lands in slot
    /// `slot`: (file offset, length, pool offset of the payload).
    pub fn payload(&self, slot: u32, layer: usize, which: usize, expert: u32) -> (u64, usize, usize) {
        let r = self.regions[layer].get(which);
        let off = r.base + u64::from(expert) * r.len;
        let within = if self.stacked { r.base } else { off } % align::BLOCK;
        let dest = slot as usize * self.slot_bytes + r.start + within as usize;
        (off, r.len as usize, dest)
    }

    /// Where a payload of projection `which` of `layer` lands in slot 0 when the slots are a
    /// stack (every slot holds its entry at the same place).
    pub fn stack_offset(&self, layer: usize, which: usize) -> usize {
        let r = self.regions[layer].get(which);
        r.start + (r.base % align::BLOCK) as usize
    }

    /// Payload bytes of one entry of `layer` (all projections, without slack).
    pub fn entry_payload(&self, layer: usize) -> u64 {
        self.regions[layer].to_array().iter().map(|r| r.len).sum()
    }
}

/// The layers' entry bytes as the streamer lays them out: one slot (for reports and tests).
pub fn slot_layout_bytes(layers: &[MoeLayer]) -> usize {
    layers.iter().map(|l| l.tensors.iter().map(|t| region_bytes(t.bytes_per_expert)).sum::<usize>()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_the_payload_in_blocks_plus_one_block() {
        for (len, want) in [(1, 8192), (4096, 8192), (4097, 12288), (2_654_208 / 3, 888_832), (4_406_400, 4_411_392)] {
            assert_eq!(region_bytes(len), want, "len {len}");
        }
    }

    #[test]
    fn placement_table() {
        // (whole blocks, O_DIRECT asked, same kernel per expert) → (stacked, direct)
        let table = [
            ((true, true, true), (true, true)),
            ((true, true, false), (true, true)),
            ((true, false, true), (true, false)),
            // k-quants / MXFP4 slices that are not whole blocks: O_DIRECT, each payload at its place.
            ((false, true, true), (false, true)),
            // q8_0 (sgemm takes it in mul_mat): a stack through the page cache.
            ((false, true, false), (true, false)),
            ((false, false, true), (true, false)),
            ((false, false, false), (true, false)),
        ];
        for ((w, d, k), want) in table {
            assert_eq!(placement(w, d, k), want, "whole {w} direct {d} same kernel {k}");
        }
    }

    #[test]
    fn sgemm_types_are_not_same_bits_per_expert() {
        assert!(!per_expert_same_bits(GgmlType::Q8_0) && !per_expert_same_bits(GgmlType::F32));
        assert!(per_expert_same_bits(GgmlType::Q4_K) && per_expert_same_bits(GgmlType::MXFP4));
    }

    #[test]
    fn payloads_of_a_stack_sit_at_one_place_per_slot() {
        let r = Region { shard: 0, base: 1000, len: 4096, start: 0 };
        let mut l = SlotLayout {
            regions: vec![Projections { gate: r, up: Region { start: 8192, ..r }, down: Region { start: 16384, ..r } }],
            slot_bytes: 24576,
            whole_blocks: true,
            stacked: true,
            direct: true,
        };
        // Expert 3's gate: file offset 1000 + 3 × 4096, in slot 2 at the same place as expert 0's.
        assert_eq!(l.payload(2, 0, 0, 3), (1000 + 3 * 4096, 4096, 2 * 24576 + 1000));
        assert_eq!(l.stack_offset(0, 1), 8192 + 1000);
        // Not stacked: the payload's own place within a block.
        l.stacked = false;
        l.regions[0].gate.len = 5000;
        assert_eq!(l.payload(1, 0, 0, 1), (6000, 5000, 24576 + 6000 % 4096));
    }
}
