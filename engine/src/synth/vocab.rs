//! A small byte-level BPE tokenizer in llama.cpp's `gpt2` form: the 256 byte tokens under
//! GPT-2's byte-to-unicode map (llama.cpp looks every byte up by that text, so all 256 must
//! be there), then random merges of earlier tokens up to the vocabulary size, then the
//! special tokens. Merges are ranked in creation order, so each merge's parts exist before it.

use std::collections::HashSet;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::arch::synth::{Specials, HARMONY_SPECIALS, SPECIALS};
#[cfg(test)]
use crate::arch::synth::{CHATML_SPECIALS as CHATML, HARMONY_SPECIALS_OF as HARMONY};

/// llama.cpp token types.
pub const TOKEN_NORMAL: i32 = 1;
pub const TOKEN_CONTROL: i32 = 3;

/// A generated vocabulary.
#[derive(Clone, Debug)]
pub struct Vocab {
    pub tokens: Vec<String>,
    pub types: Vec<i32>,
    pub merges: Vec<String>,
    /// Ids of the bos (also padding) and eos tokens.
    pub bos: u32,
    pub eos: u32,
}

/// GPT-2's printable stand-in for byte `b`.
pub fn byte_to_unicode(b: u8) -> char {
    // Printable Latin-1 bytes map to themselves; the rest to U+0100 + their rank among them.
    let printable = |c: u8| (b'!'..=b'~').contains(&c) || (0xa1..=0xac).contains(&c) || c >= 0xae;
    if printable(b) {
        return char::from(b);
    }
    let rank = (0..b).filter(|&c| !printable(c)).count() as u32;
    char::from_u32(0x100 + rank).expect("valid code point")
}

/// A vocabulary of exactly `n_vocab` tokens (at least 256 + the specials), deterministic in `seed`.
///
/// # Panics
/// If `n_vocab` is too small to hold the bytes and specials.
pub fn build(n_vocab: usize, seed: u64, specials: &Specials) -> Vocab {
    let n_special = specials.tokens.len();
    assert!(n_vocab >= 256 + n_special, "vocabulary of {n_vocab} cannot hold 256 bytes and {n_special} specials");
    let mut tokens: Vec<String> = (0..=255u8).map(|b| byte_to_unicode(b).to_string()).collect();
    let mut seen: HashSet<String> = tokens.iter().cloned().collect();
    let mut merges = Vec::new();
    // A few merges every English text hits first, then random ones.
    let space = byte_to_unicode(b' ');
    let mut wanted: Vec<(String, String)> =
        ["t", "a", "s", "w", "o", "i", "c"].iter().map(|c| (space.to_string(), c.to_string())).collect();
    wanted.extend(
        [("h", "e"), ("i", "n"), ("r", "e"), ("o", "n"), ("e", "r"), ("a", "n")]
            .map(|(a, b)| (a.to_string(), b.to_string())),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x766f_6361_6200);
    let n_merges = n_vocab - 256 - n_special;
    let mut i = 0;
    while merges.len() < n_merges {
        let (a, b) = if i < wanted.len() {
            wanted[i].clone()
        } else {
            // Prefer recent tokens so that merged tokens grow into longer words.
            let pick = |rng: &mut ChaCha8Rng| tokens[rng.random_range(0..tokens.len())].clone();
            (pick(&mut rng), pick(&mut rng))
        };
        i += 1;
        let joined = format!("{a}{b}");
        if joined.chars().count() > 16 || !seen.insert(joined.clone()) {
            continue;
        }
        merges.push(format!("{a} {b}"));
        tokens.push(joined);
    }
    let mut types = vec![TOKEN_NORMAL; tokens.len()];
    for s in specials.tokens {
        tokens.push((*s).to_string());
        types.push(TOKEN_CONTROL);
    }
    let id = |s: &str| tokens.iter().rposition(|t| t == s).expect("special present") as u32;
    let (bos, eos) = (id(specials.bos), id(specials.eos));
    Vocab { tokens, types, merges, bos, eos }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_map_is_a_bijection_onto_gpt2s() {
        let chars: HashSet<char> = (0..=255u8).map(byte_to_unicode).collect();
        assert_eq!(chars.len(), 256);
        assert_eq!(byte_to_unicode(b' '), 'Ġ');
        assert_eq!(byte_to_unicode(b'\n'), 'Ċ');
        assert_eq!(byte_to_unicode(b'A'), 'A');
    }

    #[test]
    fn exact_size_unique_and_deterministic() {
        let v = build(600, 7, &CHATML);
        assert_eq!(v.tokens.len(), 600);
        assert_eq!(v.tokens.iter().collect::<HashSet<_>>().len(), 600);
        assert_eq!(v.merges.len(), 600 - 256 - SPECIALS.len());
        assert_eq!(build(600, 7, &CHATML).merges, v.merges);
        assert_ne!(build(600, 8, &CHATML).merges, v.merges);
        let h = build(600, 7, &HARMONY);
        assert_eq!(h.tokens.len(), 600);
        assert_eq!(&h.tokens[600 - HARMONY_SPECIALS.len()..], HARMONY_SPECIALS);
        assert_eq!(
            (h.tokens[h.bos as usize].as_str(), h.tokens[h.eos as usize].as_str()),
            ("<|startoftext|>", "<|return|>")
        );
        // Every merge's parts are tokens created before it.
        for (r, m) in v.merges.iter().enumerate() {
            let (a, b) = m.split_once(' ').unwrap();
            let before = &v.tokens[..256 + r];
            assert!(before.iter().any(|t| t == a) && before.iter().any(|t| t == b), "merge {m}");
        }
    }
}
