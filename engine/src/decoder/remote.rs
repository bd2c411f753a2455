//! The seam to routed experts computed on other hosts ([`crate::rpc`], `--rpc`): per MoE layer,
//! the decoder offers the routing and the FFN input, the remote side takes the experts it
//! computes (and sends them their rows), the decoder computes the rest meanwhile, then takes
//! each remote expert's unweighted output back and weights and sums every expert in rank
//! order, exactly as for its own: the text stays bit-identical to one host's.
//!
//! No error crosses this seam: a host that fails or is too slow is the remote side's business,
//! and what it could not compute comes back in [`Collected::lost`] for the decoder to compute
//! from its own provider. Nothing partial is ever used.

use std::collections::BTreeMap;

/// Routed experts computed elsewhere.
pub trait RemoteExperts: Send {
    /// A new forward pass starts: a prefill micro-batch (`prefill`) or one decode step.
    fn begin_step(&mut self, prefill: bool);
    /// Layer `layer`'s routing is known (`used`: expert → its (row, rank) pairs) and `h` holds
    /// its FFN input (`n_embd` F32 per row): start computing the experts another host
    /// computes, and return them, in expert order. The decoder computes every other expert.
    fn dispatch(&mut self, layer: u32, h: &[f32], n_embd: usize, used: &BTreeMap<u32, Vec<(usize, usize)>>)
        -> Vec<u32>;
    /// Wait for the experts of the last [`Self::dispatch`]: each one's unweighted output for its
    /// routed rows (`n_embd` F32 per row, in `used`'s row order), or its place in `lost`.
    fn collect(&mut self, layer: u32) -> Collected;
    /// Whether expert `e` of `layer` would be computed here (for reading the next layer's
    /// predicted experts ahead: reading one a host computes wastes the bandwidth).
    fn local(&self, layer: u32, e: u32) -> bool;
}

/// What [`RemoteExperts::collect`] returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collected {
    /// Expert → its rows' outputs, `rows × n_embd`.
    pub outputs: BTreeMap<u32, Vec<f32>>,
    /// Dispatched experts whose host failed: the decoder computes them itself.
    pub lost: Vec<u32>,
}
