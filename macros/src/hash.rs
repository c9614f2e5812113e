//! `token_hash`: a fingerprint of a kernel's code, so timings recorded for one
//! version of a kernel are not trusted for an edited one.
//!
//! FNV-1a (64 bit) over a canonical rendering of the tokens: identifiers and
//! literals as written, punctuation characters, and delimiters. The rendering
//! is ours rather than `TokenStream::to_string`, whose spacing is the
//! compiler's business and may change between releases. Comments and
//! whitespace are not tokens, and punctuation spacing (`Spacing::Joint`, which
//! tells `x:&` from `x: &`) is left out, so reformatting a kernel keeps its
//! history.

use proc_macro2::{TokenStream, TokenTree};

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a of the canonical rendering of every stream in `parts`, in order.
pub(crate) fn token_hash<'a>(parts: impl IntoIterator<Item = &'a TokenStream>) -> u64 {
    let mut hasher = Fnv1a(OFFSET_BASIS);
    for part in parts {
        hasher.stream(part);
        // Separates the parts, so moving a token from one to the next changes the hash.
        hasher.write(b"\n");
    }
    hasher.0
}

struct Fnv1a(u64);

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    fn stream(&mut self, tokens: &TokenStream) {
        for tt in tokens.clone() {
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = crate::tokens::delimiters(g.delimiter());
                    self.write(open.as_bytes());
                    self.stream(&g.stream());
                    self.write(close.as_bytes());
                }
                TokenTree::Ident(i) => {
                    self.write(i.to_string().as_bytes());
                    self.write(b" ");
                }
                TokenTree::Punct(p) => {
                    let mut buf = [0; 4];
                    self.write(p.as_char().encode_utf8(&mut buf).as_bytes());
                }
                TokenTree::Literal(l) => {
                    self.write(l.to_string().as_bytes());
                    self.write(b" ");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn fnv1a(bytes: &[u8]) -> u64 {
        let mut h = Fnv1a(OFFSET_BASIS);
        h.write(bytes);
        h.0
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference test suite (draft-eastlake-fnv).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn layout_does_not_matter_but_code_does() {
        let a: TokenStream = "fn k(x: &[f32]) -> f32 { x[0] + 1.0 }".parse().unwrap();
        let b: TokenStream = "fn k(x:&[f32])->f32{\n  x[0] // first\n  + 1.0 }".parse().unwrap();
        let c: TokenStream = "fn k(x: &[f32]) -> f32 { x[0] + 2.0 }".parse().unwrap();
        assert_eq!(token_hash([&a]), token_hash([&b]));
        assert_ne!(token_hash([&a]), token_hash([&c]));
    }

    #[test]
    fn part_boundaries_and_identifier_boundaries_count() {
        assert_ne!(token_hash([&quote!(ab)]), token_hash([&quote!(a b)]));
        let (x, y) = (quote!(a b), quote!(c));
        let (x2, y2) = (quote!(a), quote!(b c));
        assert_ne!(token_hash([&x, &y]), token_hash([&x2, &y2]));
    }
}
