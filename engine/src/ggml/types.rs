//! ggml element types as a Rust enum with their block geometry.
//!
//! The geometry table is plain Rust (no FFI) so that the GGUF reader, which
//! must size every tensor of an untrusted file before trusting it, can run and
//! be fuzzed without touching ggml; a test checks it against ggml's own table.

use std::fmt;

#[cfg(feature = "ffi")]
use bmoe_ggml_sys as sys;

/// RoPE layouts (`GGML_ROPE_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeMode {
    /// Adjacent pairs rotate together (llama, mixtral).
    Normal,
    /// The two halves of each head rotate together (qwen2/3, gpt-oss).
    Neox,
}

impl RopeMode {
    /// The `mode` argument of `ggml_rope_ext`.
    pub fn raw(self) -> i32 {
        match self {
            RopeMode::Normal => 0,
            RopeMode::Neox => 2, // GGML_ROPE_TYPE_NEOX (a #define, so not in the bindings)
        }
    }
}

macro_rules! ggml_types {
    ($( $variant:ident = $id:literal, $name:literal, $blck:literal, $size:literal; )*) => {
        /// A ggml tensor element type (the `ggml_type` enum), as stored in GGUF files.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum GgmlType {
            $( #[doc = $name] $variant = $id, )*
        }

        impl GgmlType {
            /// Every type this build knows.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant,)*];

            /// The type with GGUF/ggml id `id`, if this build knows it.
            pub fn from_raw(id: u32) -> Option<Self> {
                match id {
                    $( $id => Some(GgmlType::$variant), )*
                    _ => None,
                }
            }

            /// ggml's name for the type (`q4_K`, `f16`, ...).
            pub fn name(self) -> &'static str {
                match self { $( GgmlType::$variant => $name, )* }
            }

            /// Elements per quantisation block.
            pub fn block_size(self) -> usize {
                match self { $( GgmlType::$variant => $blck, )* }
            }

            /// Bytes per quantisation block.
            pub fn type_size(self) -> usize {
                match self { $( GgmlType::$variant => $size, )* }
            }
        }
    };
}

ggml_types! {
    F32 = 0, "f32", 1, 4;
    F16 = 1, "f16", 1, 2;
    Q4_0 = 2, "q4_0", 32, 18;
    Q4_1 = 3, "q4_1", 32, 20;
    Q5_0 = 6, "q5_0", 32, 22;
    Q5_1 = 7, "q5_1", 32, 24;
    Q8_0 = 8, "q8_0", 32, 34;
    Q8_1 = 9, "q8_1", 32, 36;
    Q2_K = 10, "q2_K", 256, 84;
    Q3_K = 11, "q3_K", 256, 110;
    Q4_K = 12, "q4_K", 256, 144;
    Q5_K = 13, "q5_K", 256, 176;
    Q6_K = 14, "q6_K", 256, 210;
    Q8_K = 15, "q8_K", 256, 292;
    IQ2_XXS = 16, "iq2_xxs", 256, 66;
    IQ2_XS = 17, "iq2_xs", 256, 74;
    IQ3_XXS = 18, "iq3_xxs", 256, 98;
    IQ1_S = 19, "iq1_s", 256, 50;
    IQ4_NL = 20, "iq4_nl", 32, 18;
    IQ3_S = 21, "iq3_s", 256, 110;
    IQ2_S = 22, "iq2_s", 256, 82;
    IQ4_XS = 23, "iq4_xs", 256, 136;
    I8 = 24, "i8", 1, 1;
    I16 = 25, "i16", 1, 2;
    I32 = 26, "i32", 1, 4;
    I64 = 27, "i64", 1, 8;
    F64 = 28, "f64", 1, 8;
    IQ1_M = 29, "iq1_m", 256, 56;
    BF16 = 30, "bf16", 1, 2;
    TQ1_0 = 34, "tq1_0", 256, 54;
    TQ2_0 = 35, "tq2_0", 256, 66;
    MXFP4 = 39, "mxfp4", 32, 17;
    NVFP4 = 40, "nvfp4", 64, 36;
    Q1_0 = 41, "q1_0", 128, 18;
    Q2_0 = 42, "q2_0", 64, 18;
}

impl GgmlType {
    /// The raw `ggml_type` value for FFI.
    #[cfg(feature = "ffi")]
    pub fn raw(self) -> sys::ggml_type {
        self as u32 as sys::ggml_type
    }

    /// Bytes of a row of `n` elements (`n` must be a multiple of the block size;
    /// otherwise the partial block is rounded down, as ggml does).
    pub fn row_size(self, n: usize) -> usize {
        n / self.block_size() * self.type_size()
    }

    /// Whether the type is a block-quantised format.
    pub fn is_quantized(self) -> bool {
        !matches!(
            self,
            GgmlType::F32
                | GgmlType::F16
                | GgmlType::BF16
                | GgmlType::F64
                | GgmlType::I8
                | GgmlType::I16
                | GgmlType::I32
                | GgmlType::I64
        )
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(all(test, feature = "ffi"))]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_ggml() {
        for &ty in GgmlType::ALL {
            // SAFETY: pure queries into ggml's static type table for a valid type.
            let (blck, size) = unsafe { (sys::ggml_blck_size(ty.raw()), sys::ggml_type_size(ty.raw())) };
            assert_eq!(ty.block_size() as i64, blck, "{ty} block size");
            assert_eq!(ty.type_size(), size, "{ty} type size");
            // SAFETY: as above; returns a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(sys::ggml_type_name(ty.raw())) };
            assert_eq!(ty.name(), name.to_str().unwrap());
        }
    }
}
