//! Random weights generated directly in their on-disk encoding.
//!
//! Quantising f32 weights would cost minutes per gigabyte; instead each block's quants are
//! random bytes and only its scale fields are written, with bounded f16 scales chosen so the
//! dequantised weights have mean ≈ 0 and a chosen standard deviation σ. With σ ≈ 1/√fan_in a
//! projection of a unit-RMS activation has unit-scale outputs, so activations stay finite
//! through any depth. The layouts are ggml's `block_q8_0`, `block_q5_0`, `block_q5_1`,
//! `block_q4_K`, `block_q5_K`, `block_q6_K`.

use rand::{Rng, RngCore};

use crate::ggml::GgmlType;

/// IEEE binary16 bits of `x`, rounded to nearest even (subnormals, infinities and NaN kept).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: shift the full mantissa (with its implicit 1) into 10 bits, round to even.
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rem = m & ((1 << shift) - 1);
        let mut out = m >> shift;
        if rem > half || (rem == half && out & 1 == 1) {
            out += 1;
        }
        return sign | out as u16;
    }
    let mut out = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    if rem > 0x1000 || (rem == 0x1000 && out & 1 == 1) {
        out += 1; // may carry into the exponent, which is the correct rounding
    }
    sign | out as u16
}

/// The f32 value of binary16 bits `h`.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let man = f32::from(h & 0x3ff);
    match exp {
        0 => sign * man * 2f32.powi(-24),
        0x1f => {
            if man == 0.0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// Sub-block scale and min used for every Q4_K sub-block: x = d·4·q − dmin·4, q ∈ 0..16.
const Q4K_SC: f32 = 4.0;
/// Q6_K sub-block scale: x = d·2·(q − 32), q ∈ 0..64.
const Q6K_SC: i8 = 2;
/// Standard deviation of (q − 7.5) for q uniform in 0..16, and of (q − 32) for q in 0..64,
/// and of q for q uniform in -128..128.
const SD_U4: f32 = 4.609_772;
const SD_U6: f32 = 18.472_953;
/// Standard deviation of q uniform in 0..32 (5-bit quants).
const SD_U5: f32 = 9.233_093;
const SD_I8: f32 = 73.900_38;

/// A scale `base` jittered by ±25 % using one random byte, as f16 bits.
fn jitter(base: f32, byte: u8) -> u16 {
    f32_to_f16(base * (0.75 + f32::from(byte) / 510.0))
}

/// A mean added to the weights: `offset(i)` for element `i` of a row of `row_len`
/// elements. It must be constant over each 256-element group (one k-quant block), which is
/// what lets a quantised block carry it.
pub struct Offset<'a> {
    pub row_len: usize,
    pub at: &'a dyn Fn(usize) -> f32,
}

impl std::fmt::Debug for Offset<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offset").field("row_len", &self.row_len).finish_non_exhaustive()
    }
}

/// Fills `out` (a whole number of `ty` blocks, starting at a row boundary) with random
/// weights of standard deviation ≈ `sigma` and mean ≈ 0, or ≈ `offset` where one is given.
///
/// # Panics
/// If `ty` is not one of f32, f16, q8_0, q5_0, q5_1, q4_K, q5_K, q6_K, mxfp4, or `out` is not whole
/// blocks, or an offset is asked of q6_K, q5_0 or mxfp4 (which have no way to carry one).
pub fn fill(ty: GgmlType, out: &mut [u8], sigma: f32, rng: &mut impl RngCore, offset: Option<&Offset<'_>>) {
    let ts = ty.type_size();
    assert_eq!(out.len() % ts, 0, "{ty}: {} bytes is not whole blocks", out.len());
    let mean = |block: usize| offset.map_or(0.0, |o| (o.at)(block * ty.block_size() % o.row_len));
    match ty {
        GgmlType::F32 | GgmlType::F16 => {
            let a = sigma * 3f32.sqrt(); // uniform on [-a, a] has sd sigma
            for (i, chunk) in out.chunks_exact_mut(ts).enumerate() {
                let x = rng.random_range(-a..=a) + mean(i);
                if ty == GgmlType::F32 {
                    chunk.copy_from_slice(&x.to_le_bytes());
                } else {
                    chunk.copy_from_slice(&f32_to_f16(x).to_le_bytes());
                }
            }
        }
        GgmlType::Q8_0 => {
            rng.fill_bytes(out);
            let base = sigma / SD_I8;
            for (i, b) in out.chunks_exact_mut(ts).enumerate() {
                let mu = mean(i);
                if mu == 0.0 {
                    let d = jitter(base, b[0]);
                    b[..2].copy_from_slice(&d.to_le_bytes());
                    continue;
                }
                // With a mean, d must span |mu| plus the noise: q = mu/d + r·a/(128·d) for the
                // random byte r, a = √3·sigma (uniform noise of s.d. sigma).
                let a = 3f32.sqrt() * sigma;
                let d = f16_to_f32(f32_to_f16((mu.abs() + a) / 127.0));
                b[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
                for q in &mut b[2..] {
                    let r = f32::from(*q as i8);
                    *q = (mu / d + r * a / (128.0 * d)).round().clamp(-128.0, 127.0) as i8 as u8;
                }
            }
        }
        GgmlType::Q4_K | GgmlType::Q5_K => {
            // x = d·sc·q − dmin·m with q ∈ 0..16 (q4_K) or 0..32 (q5_K: qh[32] before qs[128]).
            rng.fill_bytes(out);
            let (sd_u, mid) = if ty == GgmlType::Q4_K { (SD_U4, 7.5) } else { (SD_U5, 15.5) };
            let base = sigma / (Q4K_SC * sd_u);
            for (i, b) in out.chunks_exact_mut(ts).enumerate() {
                let d = f16_to_f32(jitter(base, b[0]));
                // dmin·m = d·sc·mid − mean centres q on the block's mean.
                let dmin = d * mid - mean(i) / Q4K_SC;
                b[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
                b[2..4].copy_from_slice(&f32_to_f16(dmin).to_le_bytes());
                // scales[12]: sc and m of sub-blocks 0..4 in the low 6 bits of bytes 0..8,
                // sub-blocks 4..8 as nibbles of bytes 8..12 (high bits in bytes 0..8's top 2).
                let sc = Q4K_SC as u8;
                b[4..12].fill(sc);
                b[12..16].fill(sc | (sc << 4));
            }
        }
        GgmlType::Q5_0 => {
            // d, qh[4], qs[16]: x = d·(q − 16), q ∈ 0..32.
            rng.fill_bytes(out);
            assert!(offset.is_none(), "q5_0 blocks cannot carry an offset");
            let base = sigma / SD_U5;
            for b in out.chunks_exact_mut(ts) {
                let d = jitter(base, b[0]);
                b[..2].copy_from_slice(&d.to_le_bytes());
            }
        }
        GgmlType::Q5_1 => {
            // d, m, qh[4], qs[16]: x = d·q + m, q ∈ 0..32; m centres q on the block's mean.
            rng.fill_bytes(out);
            let base = sigma / SD_U5;
            for (i, b) in out.chunks_exact_mut(ts).enumerate() {
                let d = f16_to_f32(jitter(base, b[0]));
                b[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
                b[2..4].copy_from_slice(&f32_to_f16(mean(i) - d * 15.5).to_le_bytes());
            }
        }
        GgmlType::Q6_K => {
            rng.fill_bytes(out);
            let base = sigma / (f32::from(Q6K_SC) * SD_U6);
            assert!(offset.is_none(), "q6_K blocks cannot carry an offset");
            for b in out.chunks_exact_mut(ts) {
                // ql[128], qh[64], scales[16], d
                let d = jitter(base, b[0]);
                b[192..208].fill(Q6K_SC as u8);
                b[208..210].copy_from_slice(&d.to_le_bytes());
            }
        }
        GgmlType::MXFP4 => {
            // e (E8M0), qs[16]: x = kvalues_mxfp4[q] · 2^(e − 128), kvalues being twice the
            // E2M1 values (s.d. √34.25 over the 16 codes). The scale is a power of two: a
            // block takes 2^lo or 2^(lo+1) at the odds that give the requested variance.
            rng.fill_bytes(out);
            assert!(offset.is_none(), "mxfp4 blocks cannot carry an offset");
            let t = sigma / 34.25f32.sqrt();
            let lo = t.log2().floor();
            let a = lo.exp2();
            let p_hi = ((t * t / (a * a) - 1.0) / 3.0).clamp(0.0, 1.0);
            let e_lo = (lo as i32 + 128).clamp(1, 253) as u8;
            for b in out.chunks_exact_mut(ts) {
                b[0] = if f32::from(b[0]) < p_hi * 256.0 { e_lo + 1 } else { e_lo };
            }
        }
        _ => panic!("synthetic weights of type {ty} are not supported"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trip() {
        for &x in &[0.0f32, 1.0, -2.5, 65504.0, 6.1035156e-5, 5.9604645e-8, 1e-4, 0.1, 3.140625] {
            let h = f32_to_f16(x);
            assert!((f16_to_f32(h) - x).abs() <= x.abs() * 1e-3 + 6e-8, "{x} -> {h:#x} -> {}", f16_to_f32(h));
        }
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(1e9), 0x7c00);
        assert_eq!(f32_to_f16(5.9604645e-8), 1);
    }
}
